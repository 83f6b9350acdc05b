"""LlamaIndex adapters for websearch-pack: a tool spec and two readers.

Importing this package never imports LangChain.
"""

from llamaindex_websearch.readers import WebPageReader, WebSearchReader
from llamaindex_websearch.tool_spec import ApprovalRequired, WebSearchToolSpec, require_approval

__all__ = [
    "ApprovalRequired",
    "WebPageReader",
    "WebSearchReader",
    "WebSearchToolSpec",
    "require_approval",
]
