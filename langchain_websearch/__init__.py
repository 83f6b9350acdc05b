"""LangChain adapters for websearch-pack: tools, toolkit, retriever and loader.

Importing this package never imports LlamaIndex.
"""

from websearch_core.errors import install_hint

try:
    import langchain_core  # noqa: F401  (the framework this package adapts to)
except ModuleNotFoundError:
    raise ImportError(
        f"langchain_websearch needs LangChain (langchain_core); {install_hint('langchain')}"
    ) from None

from langchain_websearch.document_loaders import WebPageLoader
from langchain_websearch.retrievers import WebSearchRetriever
from langchain_websearch.toolkit import WebSearchToolkit
from langchain_websearch.tools import WebFetchTool, WebSearchTool, interrupt_on

__all__ = [
    "WebFetchTool",
    "WebPageLoader",
    "WebSearchRetriever",
    "WebSearchTool",
    "WebSearchToolkit",
    "interrupt_on",
]
