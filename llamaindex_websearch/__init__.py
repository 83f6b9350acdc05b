"""LlamaIndex adapters for websearch-pack: a tool spec, two readers and a
pipeline transform.

Importing this package never imports LangChain.
"""

from websearch_core.errors import install_hint

try:
    import llama_index.core  # noqa: F401  (the framework this package adapts to)
except ModuleNotFoundError:
    raise ImportError(
        f"llamaindex_websearch needs LlamaIndex (llama_index.core); {install_hint('llamaindex')}"
    ) from None

from llamaindex_websearch.readers import WebPageReader, WebSearchReader
from llamaindex_websearch.tool_spec import ApprovalRequired, WebSearchToolSpec, require_approval
from llamaindex_websearch.transforms import WebPageFetch

__all__ = [
    "ApprovalRequired",
    "WebPageFetch",
    "WebPageReader",
    "WebSearchReader",
    "WebSearchToolSpec",
    "require_approval",
]
