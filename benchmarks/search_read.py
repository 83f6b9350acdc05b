"""A search that reads (issue 31): does ``search(q, read=3)`` put the answer in front of the
model for fewer tokens than reading whole pages, and how long does it take?

Usage::

    pip install -r benchmarks/requirements.txt       # bpe-openai: OpenAI's o200k, offline
    python benchmarks/search_read.py [DATA_DIR] [--questions N] [--read 3] [--budget 1500]
        [--seed 31] [--positions 1:50,2:30,3:20] [--latency-ms 0] [--show-misses K]
        [--json out.json]

The questions. ``DATA_DIR`` (default ``../shared/data/extraction``) holds the extraction
benchmark's DEV pages: ``dev_ids.txt``, ``ground-truth.json`` (each page's gold article
text) and ``html/<id>.html.gz``. For every page one sentence of its gold text is the answer:
the gold text is cut into paragraphs at its line breaks and the first paragraph is left out
(a one-paragraph text leaves out its first sentence instead), each paragraph is cut into
sentences after ``. ! ?`` (and their CJK full-width forms), not after a common abbreviation
or an initial; a candidate has 8-40 words (text in Chinese or Japanese: 16-80 characters,
two a word), ends a sentence, occurs once in all the gold texts, and has at least 4 query
words. One candidate is drawn with ``random.Random(f"{seed}:{page id}")``. Its query is its
5 words with the highest IDF over the 121 gold texts (``log(N / df)``; ties go to the
earlier word), in the sentence's order: words are case-folded runs of letters and digits, at
least 3 characters long, not an English stopword, not only digits (in Chinese and Japanese
text a run of kanji or of katakana is a word, hiragana are left out). A page without a
candidate asks no question (the output says how many were asked).

The engine. A server in its own process on 127.0.0.1 serves each page's HTML byte for byte
(``text/html; charset=utf-8``) at a path made of its original URL's host and path
(``/www.nytimes.com/2019/11/19/opinion/….html``: a URL costs the model what the real one
would, in the menu and in the fence of its passages), and answers SearXNG's JSON at
``/search``: it knows the question by its query text (each query is unique) and returns 5
results, the target page among 4 distractors: the other pages whose gold texts hold the
most of the query's words, ties in a seeded random order (most queries share no word with
any other page: their distractors are random pages). The target's rank is drawn from
``--positions`` (rank:share, default 50% at rank 1, 30% at 2, 20% at 3), over a seeded
shuffle of all the questions; the output says how they fell. A result's title is the page's
``<title>``, its snippet the page's meta description (``description``, else
``og:description``), else the first ~200 characters of its gold text, cut to 240 characters.
``--latency-ms`` makes the server wait before every answer (default 0: plain loopback).

The contenders, each with its own ``WebSearch("searxng", memo_size=0)`` (``memo_size=0``
turns off both the search memo and the page memo: every call goes to the server, and the
server's request count is checked against what the calls should have asked for), each
question asked of every contender in turn (the order rotates by question, to spread the
machine's noise), after a warm-up on the first 3 questions that is not counted:

- (a) ``search(q, read=0)``: the menu only (titles, URLs, snippets), ``render()``;
- (b) ``search(q)``, then ``fetch(url of result 1)``: the menu's render and the page's, one
  after the other, as an agent would call them;
- (c) ``search(q)``, then the 5 results fetched at once (5 threads: parallel tool calls):
  the menu and all 5 pages' renders;
- (d) ``search(q, read=--read, read_tokens=--budget)``: its ``render()``; and the same with
  ``read=5``. The searches of (a)-(c) pass ``read=0``, whatever a session's default.

The columns. ``found``: the share of questions whose gold sentence is in the text the model
would read (the renders above, joined by blank lines), comparing normalised texts: NFKC,
soft hyphens and zero-width characters dropped, markdown link targets ``](…)`` dropped,
case-folded, then only the runs of letters and digits kept, joined by single spaces (all
punctuation and markup gone); the sentence must be there whole, as one run of words. A
fetch that fails is a miss. ``o200k``: tokens of that text in OpenAI's o200k_base
(``bpe-openai``), mean and median; ``estimate``: ``reading.tokens.estimate_tokens`` of the
same text (the count the read budget is kept with), and ``est/o200k`` the ratio of the
sums. ``p50``/``p90``: wall time of the whole call in this process, render included
(nearest-rank percentiles), and ``p50 / (b)`` against (b) measured in the same run. The
"ceiling" lines say how often the sentence is in the target page's own render (what
reading the right page whole gives) and in its converted content at all (what the
converter kept).

Each miss of a (d) row is explained: its pages are fetched again and the reader's own steps
(``split_passages``, ``reader._candidates``) run on them, to say whether the target was not
read, its converted text lacks the sentence, no one passage holds it whole, or the passage
holding it was offered and not kept (the per-result cap, or the budget spent before its
turn: each page's best passage comes first, the best of those first, then the rest by
score), with the
scores and estimated costs that decided. ``--show-misses K`` prints the first K of them with
the passages that were shown instead. Progress goes to stderr, the rest to stdout.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import gzip
import html.parser
import json
import math
import multiprocessing
import platform
import random
import re
import socket
import statistics
import sys
import threading
import time
import unicodedata
import urllib.parse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from websearch_core import WebSearch
    from websearch_core.models import Page, SearchResponse

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "extraction"
RESULTS = 5
QUERY_WORDS = 5
MIN_QUERY_WORDS = 4
SNIPPET_CHARS = 240
WARMUP = 3

Json = dict[str, Any]

# -- normalised text: what "the sentence is in the text" means -------------------------------

_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"))
_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_ALNUM = re.compile(r"[^\W_]+")


def normalise(text: str) -> str:
    """Case-folded runs of letters and digits joined by one space (see the docstring)."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    return " ".join(_ALNUM.findall(_LINK_TARGET.sub("]", text).casefold()))


def holds(text: str, needle: str) -> bool:
    """Whether normalised ``needle`` is a run of whole words of normalised ``text``."""
    return f" {needle} " in f" {text} "


# -- the questions ---------------------------------------------------------------------------

_STOPWORDS = frozenset(
    " ".join(
        (
            "a about above after again against all also am an and any are as at be because",
            "been before being below between both but by can could did do does doing down",
            "during each few for from further had has have having he her here hers herself him",
            "himself his how i if in into is it its itself just me more most my myself no nor",
            "not now of off on once only or other our ours ourselves out over own said same",
            "says she should so some such than that the their theirs them themselves then",
            "there these they this those through to too under until up very was we were what",
            "when where which while who whom why will with would you your yours yourself",
            "yourselves one two three new like get got make made many much may might must",
            "every even still well back way since year years told according",
        )
    ).split()
)
_KANJI = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KANA = r"\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_CJK_WORD = re.compile(f"[{_KANJI}]+|[{_KANA}]+|[^{_KANJI}{_KANA}\u3040-\u309f]+")
_CJK = re.compile(f"[{_KANJI}{_KANA}\u3040-\u309f]")
#: Where a sentence ends: its mark, closing quotes or brackets, then space (or a CJK mark).
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019\u00bb)\]]*(?=\s)|[\u3002\uff01\uff1f]")
_ABBREVIATION = re.compile(
    r"(?:\b[A-Z]|\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|No|vs|etc|Inc|Co|Corp|Ltd|Gov|Sen|Rep|Gen|Lt|Col"
    r"|Capt|Prof|Mt|Ft|Jan|Feb|Aug|Sept|Oct|Nov|Dec|U\.S|U\.K))\.$"
)
_ENDS_A_SENTENCE = re.compile(r"[.!?\u3002\uff01\uff1f][\"'\u201d\u2019\u00bb)\]]*$")


def query_words(text: str) -> list[str]:
    """The words a query may be made of, in order (see the docstring)."""
    words = []
    for run in _ALNUM.findall(unicodedata.normalize("NFKC", text).casefold()):
        parts = _CJK_WORD.findall(run) if _CJK.search(run) else [run]
        for part in parts:
            shortest = 2 if _CJK.search(part) else 3  # a kanji or katakana run: 2
            if len(part) >= shortest and not part.isdigit() and part not in _STOPWORDS:
                words.append(part)
    return words


def sentences(paragraph: str) -> list[str]:
    """``paragraph`` cut after its sentence marks, not after an abbreviation."""
    found, start = [], 0
    for match in _SENTENCE_END.finditer(paragraph):
        head = paragraph[start : match.end()]
        if match.group()[0] == "." and _ABBREVIATION.search(head.rstrip("\"'\u201d\u2019)]")):
            continue
        found.append(head.strip())
        start = match.end()
    if paragraph[start:].strip():
        found.append(paragraph[start:].strip())
    return [s for s in found if s]


def _length_in_words(sentence: str) -> int:
    cjk = len(_CJK.findall(sentence))
    return len(sentence.split()) if cjk < len(sentence) / 3 else cjk // 2


def candidates(gold: str) -> list[str]:
    """The sentences of ``gold`` outside its first paragraph, of 8-40 words, whole."""
    paragraphs = [line.strip() for line in gold.split("\n") if line.strip()]
    if len(paragraphs) > 1:
        pool = [s for p in paragraphs[1:] for s in sentences(p)]
    else:
        pool = sentences(paragraphs[0])[1:] if paragraphs else []
    return [s for s in pool if 8 <= _length_in_words(s) <= 40 and _ENDS_A_SENTENCE.search(s)]


class _Head(html.parser.HTMLParser):
    """A page's ``<title>`` and its meta descriptions."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.meta: dict[str, str] = {}
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag == "meta":
            named = dict(attrs)
            key = (named.get("name") or named.get("property") or "").casefold()
            if key in ("description", "og:description", "og:title") and named.get("content"):
                self.meta.setdefault(key, named["content"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title and not self.title:
            self.title = data


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: text.rfind(" ", 0, limit) if " " in text[:limit] else limit] + " …"


@dataclass(frozen=True)
class Article:
    id: str
    gold: str
    title: str
    snippet: str
    snippet_from: str  # "meta" or "gold"
    path: str  # where the server serves it: its original URL's host and path, quoted


def _path_of(url: str, taken: set[str], page_id: str) -> str:
    """``/host/path`` of the page's original URL (ASCII, quoted), unique among the pages."""
    parts = urllib.parse.urlsplit(url)
    path = urllib.parse.quote(urllib.parse.unquote(f"/{parts.netloc}{parts.path or '/'}"))
    if path in taken:
        path = f"/page/{page_id[:16]}"
    taken.add(path)
    return path


def load_articles(data: Path) -> list[Article]:
    truth = json.loads((data / "ground-truth.json").read_text(encoding="utf-8"))
    articles: list[Article] = []
    taken: set[str] = set()
    for page_id in (data / "dev_ids.txt").read_text(encoding="utf-8").split():
        raw = gzip.decompress((data / "html" / f"{page_id}.html.gz").read_bytes())
        page = raw.decode("utf-8", "replace")
        end = page.casefold().find("</head>")
        head = _Head()
        head.feed(page[: end if end > 0 else 300_000])
        gold = truth[page_id]["articleBody"]
        title = " ".join((head.title or head.meta.get("og:title", "")).split())
        described = head.meta.get("description") or head.meta.get("og:description") or ""
        snippet = _cut(described or gold[:200], SNIPPET_CHARS)
        articles.append(
            Article(
                page_id,
                gold,
                title or _cut(gold, 60),
                snippet,
                "meta" if described.strip() else "gold",
                _path_of(truth[page_id]["url"], taken, page_id),
            )
        )
    return articles


@dataclass(frozen=True)
class Question:
    page_id: str
    sentence: str
    query: str
    results: tuple[str, ...]  # page ids, rank 1 first
    target_rank: int

    @property
    def needle(self) -> str:
        return normalise(self.sentence)


def _positions(spec: str) -> list[tuple[int, float]]:
    shares = []
    for part in spec.split(","):
        rank, _, share = part.partition(":")
        if not 1 <= int(rank) <= RESULTS:
            raise SystemExit(f"--positions: rank {rank} is not 1 to {RESULTS}")
        shares.append((int(rank), float(share)))
    return shares


def build_questions(articles: list[Article], seed: int, positions: str) -> list[Question]:
    """One question per page that has a candidate sentence, in ``dev_ids.txt`` order."""
    golds = {a.id: normalise(a.gold) for a in articles}
    words = {a.id: set(query_words(a.gold)) for a in articles}
    df = Counter(w for ws in words.values() for w in ws)
    idf = {w: math.log(len(articles) / n) for w, n in df.items()}
    picked: list[tuple[Article, str, str]] = []
    seen: set[str] = set()
    for article in articles:
        pool = []
        for sentence in candidates(article.gold):
            needle = normalise(sentence)
            if sum(f" {g} ".count(f" {needle} ") for g in golds.values()) != 1:
                continue  # said twice, or somewhere else too: not one page's answer
            distinct = list(dict.fromkeys(query_words(sentence)))
            if len(distinct) < MIN_QUERY_WORDS:
                continue
            best = sorted(distinct, key=lambda w: (-idf.get(w, 0.0), distinct.index(w)))
            chosen = sorted(best[:QUERY_WORDS], key=distinct.index)
            pool.append((sentence, " ".join(chosen)))
        pool = [(s, q) for s, q in pool if q not in seen]
        if not pool:
            continue
        sentence, query = random.Random(f"{seed}:{article.id}").choice(pool)
        seen.add(query)
        picked.append((article, sentence, query))
    # The target's rank: the shares of --positions over a seeded shuffle of the questions.
    shares = _positions(positions)
    total = sum(share for _, share in shares)
    order = list(range(len(picked)))
    random.Random(f"{seed}:positions").shuffle(order)
    ranks: dict[int, int] = {}
    cursor = 0.0
    for rank, share in shares:
        low, cursor = cursor, cursor + share / total * len(order)
        for index in order[round(low) : round(cursor)]:
            ranks[index] = rank
    questions = []
    for index, (article, sentence, query) in enumerate(picked):
        wanted = query.split()
        rng = random.Random(f"{seed}:distractors:{article.id}")
        others = [a.id for a in articles if a.id != article.id]
        rng.shuffle(others)  # the order of ties
        others.sort(key=lambda other: -sum(w in words[other] for w in wanted))
        results = others[: RESULTS - 1]
        results.insert(ranks.get(index, 1) - 1, article.id)
        questions.append(Question(article.id, sentence, query, tuple(results), ranks.get(index, 1)))
    return questions


# -- the server: its own process --------------------------------------------------------------


def serve(
    conn: Connection,
    data: str,
    routes: dict[str, str],
    engine: dict[str, list[Json]],
    latency_s: float,
) -> None:
    """Pages at their ``routes`` (path -> page id), SearXNG JSON at ``/search``, counters at
    ``/stats``. Sends its port down ``conn``; runs until the parent ends it."""
    root = Path(data)
    pages = {
        urllib.parse.unquote(path): gzip.decompress(
            (root / "html" / f"{page_id}.html.gz").read_bytes()
        )
        for path, page_id in routes.items()
    }
    hits: Counter[str] = Counter()
    lock = threading.Lock()
    base = ""  # this server's origin, once it listens

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes; without this, Nagle and delayed ACK
            # add ~40 ms to a keep-alive response.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/stats":
                with lock:
                    self._send(200, "application/json", json.dumps(dict(hits)).encode())
                return
            if latency_s:
                time.sleep(latency_s)
            if url.path == "/search":
                query = urllib.parse.parse_qs(url.query).get("q", [""])[0]
                results = engine.get(query)
                with lock:
                    hits["search" if results is not None else "search (unknown query)"] += 1
                listed = [{**r, "url": base + r["url"]} for r in results or []]
                body = json.dumps({"query": query, "results": listed}).encode()
                self._send(200, "application/json", body)
            elif (page := pages.get(urllib.parse.unquote(url.path))) is not None:
                with lock:
                    hits["page"] += 1
                self._send(200, "text/html; charset=utf-8", page)
            else:
                with lock:
                    hits["404"] += 1
                self._send(404, "text/plain", b"not here")

        def _send(self, status: int, kind: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    base = f"http://127.0.0.1:{server.server_address[1]}"
    conn.send(server.server_address[1])
    server.serve_forever()


# -- the contenders ----------------------------------------------------------------------------


@dataclass
class Read:
    """What one call gave the model: the text, and what it was made from."""

    text: str
    response: SearchResponse | None = None
    pages: list[Page] = field(default_factory=list)
    error: str | None = None


@dataclass
class Contender:
    key: str
    label: str
    ws: WebSearch
    run: Callable[[str], Read]
    pages_per_call: int
    reads: list[Read] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    found: list[bool] = field(default_factory=list)
    o200k: list[int] = field(default_factory=list)
    estimate: list[int] = field(default_factory=list)


def contenders(base: str, read: int, budget: int) -> list[Contender]:
    from websearch_core import WebSearch

    def fresh() -> WebSearch:
        return WebSearch("searxng", searxng_url=base, fetch_allow_private=True, memo_size=0)

    def snippets(ws: WebSearch) -> Callable[[str], Read]:
        def run(query: str) -> Read:
            response = ws.search(query, read=0)  # whatever the session's default
            return Read(response.render(), response)

        return run

    def top_whole(ws: WebSearch) -> Callable[[str], Read]:
        def run(query: str) -> Read:
            response = ws.search(query, read=0)  # whatever the session's default
            page = ws.fetch(response.results[0].url)
            return Read(f"{response.render()}\n\n{page.render()}", response, [page])

        return run

    pool = concurrent.futures.ThreadPoolExecutor(RESULTS, "search-read-bench")

    def all_whole(ws: WebSearch) -> Callable[[str], Read]:
        def run(query: str) -> Read:
            response = ws.search(query, read=0)  # whatever the session's default
            pages = list(pool.map(ws.fetch, [r.url for r in response.results]))
            text = "\n\n".join([response.render(), *(page.render() for page in pages)])
            return Read(text, response, pages)

        return run

    def ours(ws: WebSearch, count: int) -> Callable[[str], Read]:
        def run(query: str) -> Read:
            response = ws.search(query, read=count, read_tokens=budget)
            return Read(response.render(), response)

        return run

    made = [
        ("a", "(a) snippets only: search(q, read=0)", snippets, 0),
        ("b", "(b) search(q) + fetch(result 1)", top_whole, 1),
        ("c", f"(c) search(q) + fetch all {RESULTS} at once", all_whole, RESULTS),
    ]
    rows = []
    for key, label, factory, pages in made:
        ws = fresh()
        rows.append(Contender(key, label, ws, factory(ws), pages))
    for count in dict.fromkeys((read, RESULTS)):
        ws = fresh()
        label = f"(d) search(q, read={count}), {budget:,} tokens"
        rows.append(Contender(f"d{count}", label, ws, ours(ws, count), count))
    return rows


def call(contender: Contender, query: str) -> tuple[Read, float]:
    from websearch_core.errors import WebSearchError

    started = time.perf_counter()
    try:
        outcome = contender.run(query)
    except WebSearchError as exc:  # a miss, said in the counts
        outcome = Read("", error=f"{type(exc).__name__}: {exc}")
    return outcome, (time.perf_counter() - started) * 1000


# -- the numbers -------------------------------------------------------------------------------


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)] if ordered else float("nan")


def by_rank(contender: Contender, questions: list[Question]) -> dict[int, tuple[int, int]]:
    """Questions found and asked, by the target's rank."""
    counts: dict[int, list[int]] = {}
    for question, found in zip(questions, contender.found, strict=True):
        tally = counts.setdefault(question.target_rank, [0, 0])
        tally[0] += found
        tally[1] += 1
    return {rank: (f, n) for rank, (f, n) in sorted(counts.items())}


def table(rows: list[Contender], reference: Contender) -> str:
    lines = [
        "| contender | found | o200k mean | o200k median | estimate mean | est/o200k "
        "| p50 ms | p90 ms | p50 / (b) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    base = statistics.median(reference.ms)
    for row in rows:
        p50 = statistics.median(row.ms)
        lines.append(
            f"| {row.label} | {statistics.fmean(row.found):.1%} "
            f"| {statistics.fmean(row.o200k):,.0f} | {statistics.median(row.o200k):,.0f} "
            f"| {statistics.fmean(row.estimate):,.0f} "
            f"| {sum(row.estimate) / max(1, sum(row.o200k)):.2f} "
            f"| {p50:.1f} | {percentile(row.ms, 0.9):.1f} | {p50 / base:.2f}x |"
        )
    return "\n".join(lines)


def rank_table(rows: list[Contender], questions: list[Question]) -> str:
    ranks = sorted({q.target_rank for q in questions})
    lines = [
        "| contender | " + " | ".join(f"target at {r}" for r in ranks) + " |",
        "| --- |" + " ---: |" * len(ranks),
    ]
    for row in rows:
        tallies = by_rank(row, questions)
        cells = [f"{tallies[r][0]}/{tallies[r][1]}" for r in ranks]
        lines.append(f"| {row.label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# -- why a question was missed -----------------------------------------------------------------


@dataclass
class Miss:
    question: Question
    index: int
    cause: str
    detail: list[str]


def _page_text(data: Path, page_id: str) -> str:
    """The page's HTML with its tags, scripts and styles taken out (a crude visible text)."""
    import html as entities

    raw = gzip.decompress((data / "html" / f"{page_id}.html.gz").read_bytes()).decode(
        "utf-8", "replace"
    )
    raw = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", raw)
    return entities.unescape(re.sub(r"<[^>]+>", " ", raw))


def diagnose(
    question: Question, index: int, outcome: Read, count: int, ws: WebSearch, data: Path
) -> Miss:
    """Why ``search(q, read=count)`` did not show the sentence: the page unread, the
    converter's text without it, no passage holding it whole, or its passage not kept (the
    per-result cap, or the budget spent before its turn), with the scores that decided."""
    # The reader's own steps, run again on the same pages (read-only use of its parts).
    from websearch_core.reading.passages import split_passages
    from websearch_core.reading.reader import PER_RESULT, _candidates
    from websearch_core.reading.tokens import estimate_tokens

    needle, rank = question.needle, question.target_rank

    def miss(cause: str, *detail: str) -> Miss:
        return Miss(question, index, cause, list(detail))

    response = outcome.response
    if response is None:
        return miss(f"the call failed: {outcome.error}")
    if rank > count:
        return miss(f"not read: the target is result {rank}, read={count}")
    result = response.results[rank - 1]
    if result.read_error:
        return miss(f"the target was not read: {result.read_error}")
    pages: dict[int, tuple[str, list[Any]]] = {}
    content = ""
    for other in response.results[:count]:
        if other.read_error:
            continue
        page = ws.fetch(other.url)
        if other.rank == rank:
            content = page.content
        chunks = split_passages(page.content)
        if chunks:
            pages[other.rank] = (page.title or other.title, chunks)
    if not holds(normalise(content), needle):
        if holds(normalise(_page_text(data, question.page_id)), needle):
            return miss(
                "not in the converted page, though in its HTML text (a caption, a teaser or a "
                "part the converter leaves out, or the gold took it from there)"
            )
        return miss("not in the page's HTML text at all (the gold text differs from the page)")
    offered = _candidates(response.query, pages)
    kept = {(p.offset, r.rank) for r in response.results for p in r.passages}
    at = next(
        (
            i
            for i, c in enumerate(offered)
            if c.rank == rank and holds(normalise(c.chunk.text), needle)
        ),
        None,
    )
    if at is None:
        if any(holds(normalise(c.text), needle) for c in pages[rank][1]):
            return miss("its passage scores 0 (no query word), never offered")
        words = needle.split()
        head, tail = " ".join(words[:5]), " ".join(words[-5:])
        parts = [
            f"cut at offset {c.start}: ...{c.text[-90:]!r}"
            for c in pages[rank][1]
            if holds(normalise(c.text), head) or holds(normalise(c.text), tail)
        ]
        return miss("no one passage holds the whole sentence (cut between passages)", *parts)
    holder = offered[at]
    bare = response.model_copy(
        update={"results": [r.model_copy(update={"passages": ()}) for r in response.results]}
    )

    def said(c: Any) -> str:
        mark = "kept" if (c.chunk.start, c.rank) in kept else "not kept"
        return f"[{c.rank}] {c.score:.2f} ~{estimate_tokens(c.chunk.text)} tok {mark}"

    mine = [c for c in offered if c.rank == rank and (c.chunk.start, c.rank) in kept]
    firsts = len({c.rank for c in offered})  # a page with no query word offers none
    best = max(c.score for c in offered if c.rank == rank)
    top = max(c.score for c in offered)
    where = (
        f"its page's best, offered {at + 1} of the {firsts} firsts (firsts go by score)"
        if at < firsts
        else f"offered {at + 1 - firsts} of the rest (by score)"
    )
    detail = [
        f"its passage: score {holder.score:.2f} (its page's best {best:.2f}, the best of all "
        f"{top:.2f}), {where}, {len(holder.chunk.text)} chars, "
        f"~{estimate_tokens(holder.chunk.text)} tokens",
        f"the menu alone: ~{estimate_tokens(bare.render())} of the {response.read_tokens} tokens",
        "offered before it: "
        + (", ".join(said(c) for c in offered[: min(at, 8)]) or "-")
        + (f", and {at - 8} more" if at > 8 else ""),
        "kept after it: "
        + (", ".join(said(c) for c in offered[at + 1 :] if (c.chunk.start, c.rank) in kept) or "-"),
    ]
    if len(mine) >= PER_RESULT:
        return miss(f"outranked on its own page: the per-result cap ({PER_RESULT})", *detail)
    if at < firsts:
        return miss(
            "budget: its page's best did not fit in what the menu and the better firsts left",
            *detail,
        )
    return miss("budget: spent before its turn (on the firsts, then on better scores)", *detail)


def show(miss: Miss, outcome: Read) -> str:
    q = miss.question
    lines = [
        f"- question {miss.index} (page {q.page_id[:12]}, target at rank {q.target_rank})",
        f"  query: {q.query!r}",
        f"  sentence: {q.sentence!r}",
        f"  cause: {miss.cause}",
        *(f"  {line}" for line in miss.detail),
    ]
    if outcome.response is not None:
        for result in outcome.response.results:
            for passage in result.passages:
                text = " ".join(passage.text.split())
                lines.append(
                    f"  passage [{result.rank}] score {passage.score:.2f} offset "
                    f"{passage.offset} {passage.section[:40]!r}: {text[:150]!r}"
                )
    return "\n".join(lines)


# -- the run -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--questions", type=int, default=0, help="the first N (default all)")
    parser.add_argument("--read", type=int, default=3, help="our row's read= (1 to 5)")
    parser.add_argument("--budget", type=int, default=1500, help="read_tokens for our rows")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--positions", default="1:50,2:30,3:20", help="target rank:share,...")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="the server's wait")
    parser.add_argument("--show-misses", type=int, default=0, metavar="K")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the numbers here")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    import bpe_openai  # type: ignore[import-untyped]

    from websearch_core.reading.tokens import estimate_tokens

    articles = load_articles(args.data)
    questions = build_questions(articles, args.seed, args.positions)
    if args.questions:
        questions = questions[: args.questions]
    titles = {a.id: a for a in articles}
    engine = {
        q.query: [
            {"title": titles[i].title, "url": titles[i].path, "content": titles[i].snippet}
            for i in q.results
        ]
        for q in questions
    }
    routes = {a.path: a.id for a in articles}
    spawn = multiprocessing.get_context("spawn")
    ours_end, theirs = spawn.Pipe()
    server = spawn.Process(
        target=serve,
        args=(theirs, str(args.data), routes, engine, args.latency_ms / 1000),
        daemon=True,
    )
    server.start()
    try:
        port = ours_end.recv()
        base = f"http://127.0.0.1:{port}"
        rows = contenders(base, args.read, args.budget)
        print(
            f"{len(questions)} questions, {len(rows)} contenders, interleaved ...", file=sys.stderr
        )
        for question in questions[:WARMUP]:
            for row in rows:
                call(row, question.query)
        for index, question in enumerate(questions):
            shift = index % len(rows)
            for row in rows[shift:] + rows[:shift]:
                outcome, ms = call(row, question.query)
                row.reads.append(outcome)
                row.ms.append(ms)
            if (index + 1) % 20 == 0:
                print(f"  {index + 1}/{len(questions)}", file=sys.stderr)
        import httpx

        served = httpx.get(f"{base}/stats").json()
        from websearch_core import WebSearch

        with WebSearch("searxng", searxng_url=base, fetch_allow_private=True) as probe:
            misses = {
                row.key: [
                    diagnose(q, i, outcome, int(row.key[1:]), probe, args.data)
                    for i, (q, outcome) in enumerate(zip(questions, row.reads, strict=True))
                    if not holds(normalise(outcome.text), q.needle)
                ]
                for row in rows
                if row.key.startswith("d")
            }
    finally:
        server.terminate()
        server.join(5)

    encoding = bpe_openai.get_encoding("o200k_base")
    for row in rows:
        for question, outcome in zip(questions, row.reads, strict=True):
            normalised = normalise(outcome.text)
            row.found.append(holds(normalised, question.needle))
            row.o200k.append(len(encoding.encode(outcome.text)))
            row.estimate.append(estimate_tokens(outcome.text))
        row.ws.close()

    by_key = {row.key: row for row in rows}
    snippet_only, one, five, ours = by_key["a"], by_key["b"], by_key["c"], by_key[f"d{args.read}"]
    n = len(questions)
    calls = n + min(WARMUP, n)
    expected_pages = calls * sum(row.pages_per_call for row in rows)
    memo_pages = sum(page.from_memo for row in rows for r in row.reads for page in r.pages)
    errors = Counter(r.error for row in rows for r in row.reads if r.error)
    ranks = Counter(q.target_rank for q in questions)
    meta = sum(titles[q.page_id].snippet_from == "meta" for q in questions)
    target_render = [
        holds(normalise(r.pages[q.target_rank - 1].render()), q.needle)
        for q, r in zip(questions, five.reads, strict=True)
        if len(r.pages) == RESULTS
    ]
    target_content = [
        holds(normalise(r.pages[q.target_rank - 1].content), q.needle)
        for q, r in zip(questions, five.reads, strict=True)
        if len(r.pages) == RESULTS
    ]
    elapsed = time.perf_counter() - started

    found = statistics.fmean(ours.found)
    token_ratio = statistics.fmean(ours.o200k) / statistics.fmean(five.o200k)
    latency_ratio = statistics.median(ours.ms) / statistics.median(one.ms)
    print(
        f"A search that reads: {n} questions from {len(articles)} DEV pages of "
        f"{args.data.name} (seed {args.seed}), {RESULTS} results each; target at rank "
        + ", ".join(f"{r}: {c}" for r, c in sorted(ranks.items()))
        + f"; snippets from the meta description for {meta} targets, else the gold text's "
        f"start; server in its own process on 127.0.0.1, +{args.latency_ms:g} ms per answer; "
        f"Python {platform.python_version()}, {multiprocessing.cpu_count()} cores"
    )
    print()
    print(table(rows, one))
    print()
    print("Found, by the target's rank:")
    print()
    print(rank_table(rows, questions))
    print()
    print(f"Targets (ours is the read={args.read} row):")
    print(f"- found ≥ 90%: {found:.1%} ({'met' if found >= 0.9 else 'not met'})")
    print(
        f"- tokens ≤ 1/5 of (c): ratio {token_ratio:.3f} of the o200k means "
        f"({'met' if token_ratio <= 0.2 else 'not met'})"
    )
    print(
        f"- p50 latency ≤ 1.3× (b): ratio {latency_ratio:.2f} "  # noqa: RUF001
        f"({'met' if latency_ratio <= 1.3 else 'not met'})"
    )
    print()
    print("The estimate against o200k (our rows):")
    for row in rows:
        if not row.key.startswith("d"):
            continue
        ratios = [e / t for e, t in zip(row.estimate, row.o200k, strict=True) if t]
        high = sum(e >= t for e, t in zip(row.estimate, row.o200k, strict=True))
        over = sum(e > args.budget for e in row.estimate)
        print(
            f"- {row.label}: estimate / o200k {sum(row.estimate) / sum(row.o200k):.3f} of the "
            f"sums (per text {min(ratios):.2f} to {max(ratios):.2f}); the estimate is at or "
            f"above o200k for {high}/{n}; o200k at most {max(row.o200k):,}, the estimate "
            f"at most {max(row.estimate):,} ({over} above the budget)"
        )
    print()
    print("Ceilings and checks:")
    if target_render:
        print(
            f"- the sentence is in the target page's own render for "
            f"{statistics.fmean(target_render):.1%}, in its converted content for "
            f"{statistics.fmean(target_content):.1%} (from the (c) fetches)"
        )
    print(
        f"- (a) finds {statistics.fmean(snippet_only.found):.1%}: the sentence is never from "
        "the first paragraph, so a snippet (the meta description or the text's start) rarely "
        "holds it"
    )
    print(
        f"- the server answered {served.get('page', 0):,} page requests; the calls (warm-up "
        f"included) should ask for {expected_pages:,}; pages from a memo: {memo_pages}; "
        f"searches {served.get('search', 0):,} of {calls * len(rows):,}, unknown queries "
        f"{served.get('search (unknown query)', 0)}"
    )
    print(f"- failed calls: {sum(errors.values())}" + "".join(f"; {e}" for e in errors))
    for key, listed in misses.items():
        if not listed:
            continue
        causes = Counter(m.cause for m in listed)
        print(f"\nWhy {by_key[key].label} missed ({len(listed)} of {n}):")
        for cause, count in causes.most_common():
            print(f"- {count}: {cause}")
    shown = misses.get(ours.key, [])[: args.show_misses]
    if shown:
        print(f"\nThe first {len(shown)} misses of {ours.label}:")
        for miss in shown:
            print(show(miss, ours.reads[miss.index]))
    print(f"\n({elapsed:.0f} s in all)")

    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "questions": n,
                    "seed": args.seed,
                    "read": args.read,
                    "budget": args.budget,
                    "latency_ms": args.latency_ms,
                    "targets": {
                        "found": found,
                        "tokens_vs_c": token_ratio,
                        "p50_vs_b": latency_ratio,
                    },
                    "rows": [
                        {
                            "key": row.key,
                            "label": row.label,
                            "found": statistics.fmean(row.found),
                            "o200k_mean": statistics.fmean(row.o200k),
                            "o200k_median": statistics.median(row.o200k),
                            "estimate_mean": statistics.fmean(row.estimate),
                            "p50_ms": statistics.median(row.ms),
                            "p90_ms": percentile(row.ms, 0.9),
                        }
                        for row in rows
                    ],
                    "per_question": [
                        {
                            "page": q.page_id,
                            "query": q.query,
                            "sentence": q.sentence,
                            "target_rank": q.target_rank,
                            **{
                                row.key: {
                                    "found": row.found[i],
                                    "o200k": row.o200k[i],
                                    "estimate": row.estimate[i],
                                    "ms": round(row.ms[i], 2),
                                }
                                for row in rows
                            },
                        }
                        for i, q in enumerate(questions)
                    ],
                    "misses": {
                        key: [{"question": m.index, "cause": m.cause} for m in listed]
                        for key, listed in misses.items()
                    },
                },
                indent=2,
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
