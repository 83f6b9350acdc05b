"""Article pages for bulk-reading tests: distinct per number, big enough for a worker process.

``article(n)`` is an HTML page of about ``size`` bytes (above ``workers.IN_PROCESS_BELOW`` by
default, so a bulk read ships it to a conversion worker) with page chrome around one article
whose title and text name ``n``; ``serve_articles`` scripts ``/p/<n>`` on a ``ScriptedServer``.
"""

from __future__ import annotations

from tests.support.http_server import Reply, ScriptedServer

HTML = {"Content-Type": "text/html; charset=utf-8"}

_WORDS = [
    "river",
    "harbour",
    "council",
    "budget",
    "railway",
    "museum",
    "festival",
    "report",
    "energy",
    "climate",
    "school",
    "hospital",
    "market",
    "policy",
    "research",
    "water",
    "election",
    "transport",
    "bridge",
    "library",
    "garden",
]


def article(n: int, size: int = 40_000) -> bytes:
    paragraphs = []
    i = 0
    while sum(len(p) for p in paragraphs) < size:
        words = [_WORDS[(n * 7 + i * 3 + k) % len(_WORDS)] for k in range(40)]
        paragraphs.append(f"<p>Paragraph {i} of article {n}: {' '.join(words)}.</p>")
        i += 1
    return (
        f"<!doctype html><html><head><title>Article {n}</title></head><body>"
        '<header class="site-header"><a href="/">Home</a></header>'
        '<nav><a href="/a">A</a> <a href="/b">B</a></nav>'
        f"<article><h1>Article {n}</h1>{''.join(paragraphs)}</article>"
        '<div class="comments">A comment that is not the article.</div>'
        "<footer>Footer</footer></body></html>"
    ).encode()


def serve_articles(server: ScriptedServer, count: int, *, delay_s: float = 0.0) -> list[str]:
    """Script ``/p/0`` … ``/p/<count-1>``; their URLs, in order."""
    for n in range(count):
        server.script(f"/p/{n}", Reply(200, article(n), HTML, delay_s=delay_s))
    return [f"{server.url}/p/{n}" for n in range(count)]
