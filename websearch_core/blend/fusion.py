"""Reciprocal-rank fusion of the engines' result lists into one menu."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from websearch_core.blend.canonical import canonical_url
from websearch_core.errors import WebSearchError
from websearch_core.models import SearchResult
from websearch_core.providers.base import ProviderAnswer

__all__ = ["RRF_K", "fuse", "merged_suggestions"]

#: Reciprocal-rank fusion's constant: the usual 60, so that the first few places of each
#: engine count for a lot and the tail for little.
RRF_K = 60


@dataclass
class _Fused:
    best: SearchResult
    order: int
    engines: list[str] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    # Exact: summed as floats in another order, equal scores may differ in the last bit, and
    # the menu's order would then depend on which engine answered first.
    score: Fraction = Fraction(0)
    snippet: str = ""
    published: str | None = None


def fuse(answers: Sequence[tuple[str, Sequence[SearchResult]]], count: int) -> list[SearchResult]:
    """Reciprocal-rank fusion of the engines' result lists, in the engines' given order."""
    fused: dict[str, _Fused] = {}
    for engine, results in answers:
        for position, result in enumerate(results, start=1):
            key = canonical_url(result.url)
            entry = fused.get(key)
            if entry is None:
                entry = fused[key] = _Fused(best=result, order=len(fused))
            elif position < min(entry.positions):
                entry.best = result
            if engine not in entry.engines:
                entry.engines.append(engine)
                entry.positions.append(position)
                entry.score += Fraction(1, RRF_K + position)
            if len(result.snippet) > len(entry.snippet):
                entry.snippet = result.snippet
            entry.published = entry.published or result.published
    ordered = sorted(fused.values(), key=lambda e: (-e.score, min(e.positions), e.order))
    return [
        entry.best.model_copy(
            update={
                "rank": rank,
                "snippet": entry.snippet,
                "published": entry.published,
                "engine": None,
                "engines": tuple(entry.engines),
                "positions": tuple(entry.positions),
                "score": round(float(entry.score), 6),
            }
        )
        for rank, entry in enumerate(ordered[:count], start=1)
    ]


def merged_suggestions(answers: Sequence[ProviderAnswer | WebSearchError | None]) -> list[str]:
    """Every engine's suggested queries, once each, in the engines' order."""
    merged: list[str] = []
    for answer in answers:
        if isinstance(answer, ProviderAnswer):
            merged += [text for text in answer.suggestions if text not in merged]
    return merged[:10]
