"""HTML → markdown for the model; JSON and text pass through (see ``websearch_core.content``).

``extract(html, url=None, mode=...)`` is the public entry point. Today every mode but ``raw``
is the basic cleaner (scripts, styles and page chrome out, html2text in); the main-content
extractor that ``article`` is meant to be arrives in its own issue, behind this same call.
"""

from websearch_core.extract.basic import ExtractedDocument, ExtractMode, extract

__all__ = ["ExtractMode", "ExtractedDocument", "extract"]
