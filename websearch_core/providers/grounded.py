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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

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

__all__ = ["INSTRUCTIONS", "MAX_ANSWER_TOKENS", "Citations", "GroundedProvider", "count_of"]

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
        url = url.strip()
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
        url = url.strip()
        if url in self.cited:
            if self.cited[url].published is None:
                self.cited[url].published = published
        elif url not in self.found:
            self.found[url] = _Source(title, "", published)

    def answer(
        self,
        request: SearchRequest,
        text: str,
        *,
        usage: Usage,
        truncated: bool = False,
        outcomes: list[EngineOutcome] | None = None,
        rename: Mapping[str, str] | None = None,
    ) -> ProviderAnswer:
        """Results capped at ``count``; the answer and its spans only if it was asked for.

        ``rename`` maps a vendor's redirect link to the page it leads to.
        """
        rename = rename or {}
        rows = [
            (s.title, rename.get(url, url), s.snippet, s.published, None)
            for url, s in (*self.cited.items(), *self.found.items())
            if url not in self.cited or s is self.cited[url]
        ]
        results: list[SearchResult] = []
        seen: set[str] = set()
        for result in ranked(rows):
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
                results=results, usage=usage, outcomes=outcomes or [], answer_truncated=truncated
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
        )
