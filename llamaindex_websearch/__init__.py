"""LlamaIndex adapters for websearch-pack (tool spec, readers): coming in their own issue.
Importing this package never imports LangChain."""

__all__: list[str] = []
