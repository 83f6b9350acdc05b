"""Searching one provider: routing and the query's rewriting, each engine's bulkhead."""
