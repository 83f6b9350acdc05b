"""Pages: the fetcher (redirects inside the jail), bytes to text, the scrape formats, the
page service with its memo, and bulk reading (its workers, per-host politeness, robots.txt)."""
