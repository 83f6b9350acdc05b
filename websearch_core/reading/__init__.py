"""A search that reads: the top results fetched, split into passages, ranked against the
query and cut to a token budget (``reader.SearchReader``)."""
