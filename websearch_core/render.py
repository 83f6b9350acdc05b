"""What the model reads. One renderer, shared by every adapter."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from websearch_core.models import SearchResponse

__all__ = ["render_search"]


def _date(published: str | None) -> str:
    """ISO timestamps shortened to the day; anything else (``"2 days ago"``) kept as is."""
    if not published:
        return ""
    head = published[:10]
    if len(head) == 10 and head[4] == "-" and head[7] == "-" and head.replace("-", "").isdigit():
        return head
    return published[:40]


def render_search(response: SearchResponse) -> str:
    """Seed 000's menu: numbered ``Title — URL``, a capped snippet, then a summary line.

    ::

        1. Go 1.26 release notes — https://go.dev/doc/go1.26
           2026-02-11 · Go 1.26 adds …
        2. …

        5 results from brave for "go 1.26 release notes".
    """
    blocks: list[str] = []
    if response.answer:
        blocks.append(f"Answer: {' '.join(response.answer.split())}")
    menu: list[str] = []
    for result in response.results:
        menu.append(f"{result.rank}. {result.title} — {result.url}")
        detail = " · ".join(part for part in (_date(result.published), result.snippet) if part)
        if detail:
            menu.append(f"   {detail}")
    if menu:
        blocks.append("\n".join(menu))
    down = [o for o in response.outcomes if o.status == "down"]
    if down:
        failed = ", ".join(f"{o.engine} ({o.error})" if o.error else o.engine for o in down)
        blocks.append(f"Engines that failed: {failed}.")
    noun = "result" if len(response.results) == 1 else "results"
    blocks.append(
        f'{len(response.results)} {noun} from {response.provider} for "{response.query}".'
    )
    return "\n\n".join(blocks)
