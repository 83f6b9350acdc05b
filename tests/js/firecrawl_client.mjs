// Runs Firecrawl's own JavaScript SDK, unchanged, against a service: each call named on the
// command line, its outcome printed as one JSON line (what the SDK returned, or the message
// of what it threw). Used by tests/test_js_clients.py; nothing here leaves loopback. `page` is
// the page a scrape reads, or the query a search sends.
import Firecrawl, { FirecrawlAppV1 } from "@mendable/firecrawl-js";

const [apiUrl, apiKey, page, ...calls] = process.argv.slice(2);
const v2 = new Firecrawl({ apiKey, apiUrl });
const v1 = new FirecrawlAppV1({ apiKey, apiUrl });

const run = {
  "v2.scrape": () => v2.scrape(page, { formats: ["markdown", "links"], waitFor: 1000 }),
  "v1.scrapeUrl": () => v1.scrapeUrl(page, { formats: ["markdown"], waitFor: 1000 }),
  "v2.map": () => v2.map(page),
  "v1.mapUrl": () => v1.mapUrl(page, {}),
  "v2.startCrawl": () => v2.startCrawl(page, { limit: 2 }),
  "v1.asyncCrawlUrl": () => v1.asyncCrawlUrl(page, { limit: 2 }),
  "v2.extract": () => v2.extract({ urls: [page], prompt: "the title" }),
  "v2.search": () => v2.search(page, { limit: 4, scrapeOptions: { formats: ["markdown"] } }),
  "v2.searchPlain": () => v2.search(page, { limit: 2 }),
  "v1.search": () => v1.search(page, { limit: 4, scrapeOptions: { formats: ["markdown"] } }),
};

for (const name of calls) {
  try {
    const value = await run[name]();
    console.log(JSON.stringify({ call: name, ok: true, value }));
  } catch (error) {
    const message = error && typeof error === "object" ? String(error.message) : String(error);
    console.log(JSON.stringify({ call: name, ok: false, message, status: error?.status ?? null }));
  }
}
