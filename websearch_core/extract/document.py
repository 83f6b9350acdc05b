"""What ``extract`` returns."""

from __future__ import annotations

from dataclasses import asdict

from pydantic import BaseModel, ConfigDict, Field

from websearch_core.extract.extraction import Extraction, ExtractMode

__all__ = ["ExtractMode", "ExtractedDocument"]

_METADATA_FIELDS = (
    "title",
    "byline",
    "published",
    "site_name",
    "canonical_url",
    "language",
    "description",
)


class ExtractedDocument(BaseModel):
    """Markdown for the model, the same content as plain text, and what the page says of itself.

    ``mode`` is the mode that produced ``markdown``: an ``article`` request on a page with no
    article in it comes back as ``full``, and ``fallback`` says why. ``text`` comes from the
    same walk over the page as ``markdown`` (no second conversion), without links, emphasis,
    heading marks or list markers; ``raw`` mode's ``text`` is the page's visible text.
    """

    model_config = ConfigDict(frozen=True)

    markdown: str
    text: str = ""
    mode: ExtractMode = "article"
    fallback: str | None = Field(
        default=None, description="why an article request was answered with a full render"
    )
    note: str | None = Field(
        default=None,
        description="what bounding the input changed (HTML not read, nesting flattened), or "
        "that the text came from the page's <noscript>",
    )
    title: str | None = None
    byline: str | None = None
    published: str | None = Field(default=None, description="as the page states it, often ISO")
    site_name: str | None = None
    canonical_url: str | None = None
    language: str | None = None
    description: str | None = None

    @classmethod
    def of(cls, extraction: Extraction) -> ExtractedDocument:
        """The pipeline's plain result as the model."""
        return cls(**asdict(extraction))

    @property
    def metadata(self) -> dict[str, str]:
        """The metadata fields that were found, by name (a stable dict view)."""
        found = {name: getattr(self, name) for name in _METADATA_FIELDS}
        return {name: value for name, value in found.items() if value}
