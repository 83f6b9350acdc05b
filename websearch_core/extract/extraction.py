"""What the pipeline produces, as a plain dataclass: ``extract`` hands it out as an
``ExtractedDocument`` (a pydantic model, for callers), and a conversion worker uses it as it
is. A worker must start cheaply (``fetch.workers``), and importing pydantic and building the
model class cost it ~0.2 s of CPU per start, more than half of its import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ExtractMode", "Extraction"]

ExtractMode = Literal["article", "full", "raw"]


@dataclass(frozen=True, slots=True)
class Extraction:
    """The fields of ``document.ExtractedDocument``, which says what each one means."""

    markdown: str
    text: str
    mode: ExtractMode
    fallback: str | None
    note: str | None
    title: str | None
    byline: str | None
    published: str | None
    site_name: str | None
    canonical_url: str | None
    language: str | None
    description: str | None
