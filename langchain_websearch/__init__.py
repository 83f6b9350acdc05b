"""LangChain adapters for websearch-pack (tools, toolkit, retriever, loader): coming in their
own issue. Importing this package never imports LlamaIndex."""

__all__: list[str] = []
