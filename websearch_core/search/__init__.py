"""Searching one provider: routing and the query's rewriting, the drive under one deadline
through each engine's own bulkhead, and the answer as the caller's response."""
