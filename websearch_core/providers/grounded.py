"""What the four grounded providers share.

A grounded provider is an LLM vendor whose own model searches the web and answers; the pages
it cites become our results (title, URL, the cited text as the snippet, deduplicated by URL,
in the order the answer first cites them, then the other pages its searches returned), and
its answer is shown only when the caller asked for one (``include_answer``), with the spans
the vendor reported turned into ``AnswerCitation`` s in characters of our answer string.

Each vendor reports citation positions in its own unit (Anthropic: none, text blocks split at
citations; OpenAI and OpenRouter: character indices; Gemini: UTF-8 byte offsets within one
part). Each provider converts to characters before handing spans to ``Citations``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlsplit

from pydantic import SecretStr

from websearch_core.config import Settings
from websearch_core.errors import ProviderResponseError
from websearch_core.models import (
    AnswerCitation,
    EngineOutcome,
    SearchRequest,
    SearchResult,
    Usage,
)
from websearch_core.providers.base import (
    KeyedHttpProvider,
    Provider,
    ProviderAnswer,
    base_url_of,
    ranked,
)
from websearch_core.text import one_line
from websearch_core.tracking import without_tracking

__all__ = [
    "INSTRUCTIONS",
    "MAX_ANSWER_TOKENS",
    "Citations",
    "GroundedProvider",
    "Span",
    "count_of",
    "plain_claim",
    "readable_title",
    "unlinked",
]

#: What every vendor's model is told. The query is a search query, not a chat turn: the
#: model must search (an answer from memory has no sources to show) and answer briefly.
INSTRUCTIONS = (
    "You are a web search engine. Always search the web for the user's query before "
    "answering; never answer from memory. Then answer the query in at most five sentences, "
    "using only what the search found, and cite the pages you used."
)
#: An answer is a few sentences; this bounds what a runaway answer can cost.
MAX_ANSWER_TOKENS = 1_024
#: What of an answer is shown (a few sentences are far less); a longer one is cut, marked.
MAX_ANSWER_CHARS = 4_000
#: Cited spans kept per answer, in order: more markers than this are noise to a reader.
MAX_CITED_SPANS = 100
#: The vendor's own queries kept per answer, each at most this long.
MAX_QUERIES = 20
MAX_QUERY_CHARS = 200
#: Where a readable title made from a URL stops.
MAX_URL_TITLE_CHARS = 80


def readable_title(url: str) -> str:
    """A title for a page a vendor named by its URL alone: its host and path, shortened
    (``reuters.com/world/middle-east/un-endorses…``), so the menu never reads ``URL — URL``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url[:MAX_URL_TITLE_CHARS]
    host = (parts.hostname or "").removeprefix("www.")
    title = f"{host}{parts.path.rstrip('/')}" if host else url
    if len(title) > MAX_URL_TITLE_CHARS:
        title = title[: MAX_URL_TITLE_CHARS - 1].rstrip("/-_") + "…"
    return title


@dataclass(frozen=True)
class Span:
    """A vendor's citation: ``text[start:end]`` (characters) is backed by ``url``."""

    start: int
    end: int
    url: object
    title: object


#: A markdown link as the vendor's model writes it after a sentence: ``([label](url))`` or
#: ``[label](url)``, the whole of a citation's span.
_INLINE_LINK = re.compile(r"\(?\[[^\]\n]*\]\([^)\s]*\)\)?")
#: What may close a sentence, and what may open one (a list marker, a heading's hashes).
_CLOSERS = frozenset(".!?")
_TRAILING = frozenset("\"')]*\u201d\u2019")
_OPENING = re.compile(r"(?:[-*+]\s+|\d{1,3}[.)]\s+|#{1,6}\s+)")


def unlinked(text: str, spans: Iterable[Span]) -> tuple[str, list[tuple[Span, str]]]:
    """``text`` without the vendor's inline links, each link's span moved onto the sentence
    the link follows, and that sentence (the claim the page supports, for a snippet).

    OpenAI's ``url_citation`` spans cover the markdown link its model writes after a
    sentence (``… point. ([site.org](https://…))``), not the sentence: taken as they come,
    the answer shows the vendor's link beside our ``[n]`` and the snippet is the link. A span
    that is not a link is kept as it is, moved as the text before it shrank.
    """
    joined = ""
    position = 0  # how far into ``text`` has been copied to ``joined``
    moved: list[tuple[Span, str]] = []
    last: tuple[int, int] | None = None  # the sentence the previous link followed
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        if span.start < position:  # inside a link already taken out: that link's sentence
            if last is not None and span.end <= position:
                moved.append((Span(*last, span.url, span.title), joined[last[0] : last[1]]))
            continue
        if not _INLINE_LINK.fullmatch(text[span.start : span.end]):
            shift = len(joined) - position
            start, end = span.start + shift, span.end + shift
            moved.append((Span(start, end, span.url, span.title), text[span.start : span.end]))
            continue
        before = text[position : span.start]
        if before.strip() or last is None:  # a new sentence, not a second link after one
            joined += before.rstrip()
            last = (_sentence_start(joined), len(joined))
        position = span.end
        if last[1] > last[0]:
            moved.append((Span(*last, span.url, span.title), joined[last[0] : last[1]]))
    joined += text[position:]
    return joined, moved


def _sentence_start(text: str) -> int:
    """Where the last sentence of ``text`` begins: after the previous full stop (and its
    closing quotes) followed by a space, or a line break, past a list marker."""
    index = len(text) - 1
    while index >= 0 and (text[index] in _CLOSERS or text[index] in _TRAILING):
        index -= 1  # the sentence's own ending
    start = 0
    while index > 0:
        if text[index] == "\n":
            start = index + 1
            break
        if text[index].isspace():
            back = index - 1
            while back >= 0 and text[back] in _TRAILING:
                back -= 1
            if back >= 0 and text[back] in _CLOSERS:
                start = index + 1
                break
        index -= 1
    while start < len(text) and text[start].isspace():
        start += 1
    opening = _OPENING.match(text, start)
    return opening.end() if opening else start


def count_of(value: object) -> int | None:
    """A vendor's count field (tokens, searches) as an int, or ``None`` if absent or odd."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def add_counts(first: int | None, second: int | None) -> int | None:
    if first is None:
        return second
    return first if second is None else first + second


class GroundedProvider(KeyedHttpProvider):
    """A vendor's LLM with its web search tool: a key, a model, and one prompt."""

    #: The model used unless ``<name>_model`` / ``WEBSEARCH_<NAME>_MODEL`` names another:
    #: cheap and current at the time of writing, and able to use the vendor's search tool.
    default_model: ClassVar[str]
    #: The ``Settings`` field naming another model.
    model_setting: ClassVar[str]
    grounded = True

    def __init__(
        self, api_key: SecretStr, base_url: str | None = None, model: str | None = None
    ) -> None:
        super().__init__(api_key, base_url)
        self.model = model or self.default_model

    @classmethod
    def from_settings(cls, settings: Settings) -> Provider:
        key = getattr(settings, cls.key_setting)
        assert isinstance(key, SecretStr)
        return cls(key, base_url_of(cls, settings), getattr(settings, cls.model_setting))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} model={self.model!r}>"

    def not_grounded(self) -> ProviderResponseError:
        """The model answered without searching: an answer with no sources to show."""
        return ProviderResponseError(
            self.name,
            f"{self.name}'s answer is not grounded: its model did not search the web, so the "
            "answer has no sources; rephrase the query as a search, or use another provider",
        )

    def malformed(self, what: str) -> ProviderResponseError:
        """A body that is JSON but not the vendor's documented shape."""
        return ProviderResponseError(
            self.name,
            f"{self.name} answered in a shape this package does not understand ({what}): "
            "try another provider, and report it if it persists",
        )


def plain_claim(sentence: str) -> str:
    """A cited sentence as a snippet: one line, without the emphasis marks around words."""
    return one_line(sentence.replace("**", "").replace("__", ""))


def _title(title: object, url: str) -> object:
    """The vendor's title, or one made from the URL when it gave none or gave the URL."""
    if not isinstance(title, str) or not title.strip() or title.strip() == url:
        return readable_title(url)
    return title


def as_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass
class _Source:
    title: object
    snippet: object = ""
    published: object = None


@dataclass
class Citations:
    """Collects an answer's sources and cited spans, then builds the ``ProviderAnswer``."""

    cited: dict[str, _Source] = field(default_factory=dict)
    found: dict[str, _Source] = field(default_factory=dict)
    spans: list[tuple[int, int, str]] = field(default_factory=list)

    def cite(self, start: int, end: int, url: object, title: object, snippet: object) -> None:
        """``answer[start:end]`` (characters) is backed by the page at ``url``."""
        if not isinstance(url, str):
            return
        url = without_tracking(url.strip())
        source = self.cited.get(url)
        if source is None:
            earlier = self.found.get(url)
            self.cited[url] = _Source(
                title or (earlier.title if earlier else ""),
                snippet,
                earlier.published if earlier else None,
            )
        elif not source.snippet and snippet:
            source.snippet = snippet
        if 0 <= start < end:
            self.spans.append((start, end, url))

    def saw(self, url: object, title: object, published: object = None) -> None:
        """A page the vendor's searches returned, cited or not."""
        if not isinstance(url, str):
            return
        url = without_tracking(url.strip())
        if url in self.cited:
            if self.cited[url].published is None:
                self.cited[url].published = published
        elif url not in self.found:
            self.found[url] = _Source(title, "", published)

    def leave_out(self, domains: Iterable[str]) -> None:
        """Drop every source on ``domains`` (or their subdomains) and its spans: a vendor's
        filter that let a page through is held to here, in the menu."""
        excluded = tuple(domains)
        if not excluded:
            return

        def out(url: str) -> bool:
            try:
                host = (urlsplit(url).hostname or "").rstrip(".")
            except ValueError:
                return False
            return any(host == d or host.endswith(f".{d}") for d in excluded)

        self.cited = {u: s for u, s in self.cited.items() if not out(u)}
        self.found = {u: s for u, s in self.found.items() if not out(u)}
        self.spans = [span for span in self.spans if not out(span[2])]

    def answer(
        self,
        request: SearchRequest,
        text: str,
        *,
        usage: Usage,
        truncated: bool = False,
        outcomes: list[EngineOutcome] | None = None,
        rename: Mapping[str, str] | None = None,
        searched: Iterable[object] = (),
        notes: Iterable[str] = (),
    ) -> ProviderAnswer:
        """Results capped at ``count``; the answer and its spans only if it was asked for.

        ``rename`` maps a vendor's redirect link to the page it leads to; ``searched`` holds
        the queries the vendor's model ran (each one line, bounded), ``notes`` what the
        answer does not give as asked.
        """
        rename = rename or {}
        rows = [
            (_title(s.title, rename.get(url, url)), rename.get(url, url), s.snippet, s.published)
            for url, s in (*self.cited.items(), *self.found.items())
            if url not in self.cited or s is self.cited[url]
        ]
        queries = list(
            dict.fromkeys(
                one_line(q)[:MAX_QUERY_CHARS] for q in searched if isinstance(q, str) and q.strip()
            )
        )[:MAX_QUERIES]
        results: list[SearchResult] = []
        seen: set[str] = set()
        for result in ranked([(*row, None) for row in rows]):
            if result.url in seen:  # two redirect links may lead to one page
                continue
            seen.add(result.url)
            results.append(result.model_copy(update={"rank": len(results) + 1}))
            if len(results) == request.count:
                break
        if len(text) > MAX_ANSWER_CHARS:
            text, truncated = text[:MAX_ANSWER_CHARS], True
        if not request.include_answer or not text.strip():
            return ProviderAnswer(
                results=results,
                usage=usage,
                outcomes=outcomes or [],
                answer_truncated=truncated,
                searched=queries,
                notes=list(notes),
            )
        rank_of: dict[str, int] = {}
        for result in results:
            rank_of.setdefault(result.url, result.rank)
        by_span: dict[tuple[int, int], list[int]] = {}
        for start, end, url in self.spans:
            rank = rank_of.get(rename.get(url, url).strip())
            if rank is None or end > len(text):
                continue  # a source past the menu's cap: no marker that points at nothing
            ranks = by_span.setdefault((start, end), [])
            if rank not in ranks:
                ranks.append(rank)
        citations = [
            AnswerCitation(start=start, end=end, ranks=tuple(ranks))
            for (start, end), ranks in sorted(by_span.items())[:MAX_CITED_SPANS]
        ]
        return ProviderAnswer(
            results=results,
            answer=text,
            citations=citations,
            answer_truncated=truncated,
            usage=usage,
            outcomes=outcomes or [],
            searched=queries,
            notes=list(notes),
        )
