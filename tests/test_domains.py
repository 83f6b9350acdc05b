"""Domain inputs are normalised in linear time: no regex that can backtrack (seed 002)."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import pytest

from websearch_core import InvalidRequestError, WebSearch
from websearch_core.domains import normalise_base_url, normalise_domain


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("docs.python.org", "docs.python.org"),
        ("Docs.Python.ORG", "docs.python.org"),
        ("https://docs.python.org/3/library/", "docs.python.org"),
        ("http://user:pw@example.com:8080/x?y#z", "example.com"),
        ("*.example.com", "example.com"),
        (".example.com.", "example.com"),
        ("  go.dev  ", "go.dev"),
        ("bücher.de", "xn--bcher-kva.de"),
        ("xn--bcher-kva.de", "xn--bcher-kva.de"),
        ("example.com\u3002", "example.com"),  # an ideographic full stop, as IDNA reads it
        ("docs\uff0epython\uff0eorg", "docs.python.org"),  # full-width dots
        ("ｅｘａｍｐｌｅ.com", "example.com"),  # full-width letters
    ],
)
def test_domains_are_normalised(raw: str, expected: str) -> None:
    assert normalise_domain(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "localhost",
        "exa mple.com",
        "-bad.com",
        "a..b.com",
        "x" * 64 + ".com",
        "a.com:port",
        "xn--zz.com",  # an xn-- label that is not punycode
    ],
)
def test_non_domains_are_refused_with_advice(raw: str) -> None:
    with pytest.raises(ValueError, match="domain"):
        normalise_domain(raw)


def test_base_url_loses_trailing_slashes_only() -> None:
    assert normalise_base_url("http://127.0.0.1:8888///") == "http://127.0.0.1:8888"
    assert normalise_base_url("https://searx.example.org/sub/") == "https://searx.example.org/sub"
    with pytest.raises(ValueError, match="http"):
        normalise_base_url("ftp://example.org")


ADVERSARIAL = {
    "slash run not at end": "a" + "/" * 200_000 + "a",
    "dots": "." * 200_000 + "x",
    "labels": "a." * 100_000,
    "dash run": "a" + "-" * 200_000 + ".com",
    "scheme repeats": "https://" * 25_000,
    "colons": "a" + ":" * 200_000,
    "at signs": "@" * 200_000 + "example.com",
}


def _finishes(func: object, arg: str, limit_s: float) -> bool:
    """Run ``func(arg)`` in a thread; True if it returned (or raised) within ``limit_s``.

    This is a hang guard, not a timing assertion: linear work on 200,000 characters takes
    about a millisecond, the quadratic pattern it guards against about fifty seconds.
    """
    done = threading.Event()

    def run() -> None:
        with contextlib.suppress(ValueError):
            func(arg)  # type: ignore[operator]
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(limit_s)


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_domain_input_does_not_hang(name: str) -> None:
    assert _finishes(normalise_domain, ADVERSARIAL[name], limit_s=5.0)
    assert _finishes(normalise_base_url, "http://h" + ADVERSARIAL[name], limit_s=5.0)


def test_adversarial_site_is_a_clear_request_error() -> None:
    ws = WebSearch("searxng", searxng_url="http://127.0.0.1:9")
    with pytest.raises(InvalidRequestError, match="give a host name"):
        ws.search("x", site="a" + "/" * 200_000 + "a")


def test_no_regular_expressions_in_input_normalisation() -> None:
    import websearch_core.domains as module

    assert "import re" not in Path(module.__file__).read_text(encoding="utf-8")
