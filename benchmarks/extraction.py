"""Main-content extraction: websearch-pack next to trafilatura, readability-lxml and html2text.

Usage::

    pip install -r benchmarks/requirements.txt
    python benchmarks/extraction.py [DATA_DIR] [--rounds 3] [--worst 10] [--json]

``DATA_DIR`` (default ``../shared/data/extraction`` relative to the repository root) holds the
DEV split of the ScrapingHub article-extraction benchmark: ``dev_ids.txt``,
``ground-truth.json`` and ``html/<id>.html.gz``. Every contender runs in this one process on
the same decoded pages (gzip and UTF-8 decoding happen before any clock starts; parsing is
inside every contender's timed call).

The metric is the upstream benchmark's, as the data README states it: ``\\w+`` tokens
(case-sensitive), bags of overlapping 4-token shingles, per-page precision and recall from the
bag intersection, both averaged over pages (an empty prediction is left out of the precision
average and scores 0 recall), F1 the harmonic mean of the two averages. The table also gives
the per-page F1 mean (empty output scores 0), the number of empty outputs, the mean over pages
of (words returned / gold words) counted on the scored text, pages/s, and pages/s as a ratio of
trafilatura's measured in the same run (the best of ``--rounds`` timed passes, after a
warm-up pass).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "extraction"

_TOKEN = re.compile(r"\w+")
SHINGLE = 4


def shingles(text: str, n: int = SHINGLE) -> Counter[tuple[str, ...]]:
    """The bag of overlapping ``n``-token runs of ``\\w+`` tokens (case kept)."""
    tokens = _TOKEN.findall(text)
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


@dataclass(frozen=True)
class PageScore:
    empty: bool
    precision: float
    recall: float

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 0.0 if self.empty or total == 0 else 2 * self.precision * self.recall / total


def score_page(gold: str, predicted: str) -> PageScore:
    """One page: precision and recall of the predicted shingle bag against the gold one."""
    if not predicted.strip():
        return PageScore(empty=True, precision=0.0, recall=0.0)
    truth, guess = shingles(gold), shingles(predicted)
    tp = sum((truth & guess).values())
    fp = sum(guess.values()) - tp
    fn = sum(truth.values()) - tp
    # Upstream divides TP, FP and FN by their sum so each page weighs the same; the per-page
    # ratios below are unchanged by that scaling.
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return PageScore(empty=False, precision=precision, recall=recall)


@dataclass(frozen=True)
class Summary:
    f1: float
    precision: float
    recall: float
    page_f1: float
    empty: int


def summarise(scores: Sequence[PageScore]) -> Summary:
    """Averages over pages: precision skips empty outputs, recall counts them as 0."""
    precisions = [s.precision for s in scores if not s.empty]
    precision = statistics.fmean(precisions) if precisions else 0.0
    recall = statistics.fmean(s.recall for s in scores) if scores else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    page_f1 = statistics.fmean(s.f1 for s in scores) if scores else 0.0
    return Summary(f1, precision, recall, page_f1, sum(s.empty for s in scores))


@dataclass(frozen=True)
class Page:
    id: str
    url: str
    html: str
    gold: str


def load_readability_pages(root: Path) -> list[Page]:
    """Mozilla Readability's test pages: ``<root>/<name>/source.html`` and ``expected.html``.

    The "gold" is Readability's own output, not a human's: a score against it says whether a
    page's body was kept (recall) and how much else came with it, on pages far more varied
    than news (blogs, docs, wikis, forums, shops, page builders, right-to-left scripts).
    """
    import lxml.html

    pages = []
    for folder in sorted(path for path in root.iterdir() if (path / "expected.html").exists()):
        expected = (folder / "expected.html").read_text(encoding="utf-8")
        gold = str(lxml.html.fromstring(expected).text_content()) if expected.strip() else ""
        source = (folder / "source.html").read_text(encoding="utf-8", errors="replace")
        pages.append(Page(folder.name, f"http://fakehost/{folder.name}/", source, gold))
    return pages


def load_pages(data: Path) -> list[Page]:
    truth = json.loads((data / "ground-truth.json").read_text(encoding="utf-8"))
    ids = (data / "dev_ids.txt").read_text(encoding="utf-8").split()
    pages = []
    for page_id in ids:
        raw = gzip.decompress((data / "html" / f"{page_id}.html.gz").read_bytes())
        entry = truth[page_id]
        pages.append(
            Page(page_id, entry["url"], raw.decode("utf-8", "replace"), entry["articleBody"])
        )
    return pages


Extractor = Callable[[str, str], str]


def _websearch_pack() -> Extractor:
    from websearch_core import extract

    return lambda html, url: extract(html, url).text


def _trafilatura() -> Extractor:
    import trafilatura

    return lambda html, url: trafilatura.extract(html, url=url, include_comments=False) or ""


def _readability() -> Extractor:
    import lxml.html
    from readability import Document

    def run(html: str, url: str) -> str:
        summary = Document(html, url=url).summary(html_partial=True)
        return str(lxml.html.fromstring(summary).text_content()) if summary.strip() else ""

    return run


def _html2text(*, links: bool) -> Extractor:
    import html2text

    def run(html: str, url: str) -> str:
        converter = html2text.HTML2Text(baseurl=url)
        converter.ignore_links = not links
        return str(converter.handle(html))

    return run


CONTENDERS: dict[str, Callable[[], Extractor]] = {
    "websearch-pack": _websearch_pack,
    "trafilatura 2.3.1": _trafilatura,
    "readability-lxml 0.9": _readability,
    "html2text (defaults)": lambda: _html2text(links=True),
    "html2text (links off)": lambda: _html2text(links=False),
}


def _words(text: str) -> int:
    return len(text.split())


def run_pass(extractor: Extractor, pages: Iterable[Page]) -> tuple[float, list[str]]:
    outputs = []
    started = time.perf_counter()
    for page in pages:
        outputs.append(extractor(page.html, page.url))
    return time.perf_counter() - started, outputs


@dataclass(frozen=True)
class Row:
    name: str
    summary: Summary
    words_ratio: float
    pages_per_s: float
    scores: list[PageScore]


def measure(name: str, extractor: Extractor, pages: list[Page], rounds: int) -> Row:
    _, outputs = run_pass(extractor, pages[:10])  # warm-up: imports, caches, first allocations
    times = []
    for _ in range(rounds):
        elapsed, outputs = run_pass(extractor, pages)
        times.append(elapsed)
    scores = [score_page(p.gold, out) for p, out in zip(pages, outputs, strict=True)]
    ratio = statistics.fmean(
        _words(out) / max(1, _words(p.gold)) for p, out in zip(pages, outputs, strict=True)
    )
    return Row(name, summarise(scores), ratio, len(pages) / min(times), scores)


def table(rows: list[Row], split: str) -> str:
    reference = next((r.pages_per_s for r in rows if r.name.startswith("trafilatura")), None)
    lines = [
        f"{split}; speed is the best of the timed passes, one process",
        "",
        "| contender | F1 | precision | recall | page F1 | empty | words/gold | pages/s "
        "| vs trafilatura |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        s = row.summary
        versus = f"{row.pages_per_s / reference:.2f}x" if reference else "n/a"
        lines.append(
            f"| {row.name} | {s.f1:.3f} | {s.precision:.3f} | {s.recall:.3f} | {s.page_f1:.3f} "
            f"| {s.empty} | {row.words_ratio:.2f} | {row.pages_per_s:.1f} | {versus} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=3, help="timed passes per contender")
    parser.add_argument("--only", action="append", help="run contenders whose name has this")
    parser.add_argument("--worst", type=int, default=0, help="list websearch-pack's worst pages")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument(
        "--readability-pages",
        type=Path,
        metavar="DIR",
        help="score against Mozilla Readability's test pages in DIR (a checkout's "
        "test/test-pages) instead of the news DEV split",
    )
    args = parser.parse_args(argv)
    if args.readability_pages:
        pages = load_readability_pages(args.readability_pages)
        split = f"Readability's test pages (its own output as gold), {len(pages)} pages"
    else:
        pages = load_pages(args.data)
        split = f"DEV split, {len(pages)} pages"
    rows = []
    for name, factory in CONTENDERS.items():
        if args.only and not any(part in name for part in args.only):
            continue
        try:
            extractor = factory()
        except ImportError as exc:
            print(f"skipping {name}: {exc}", file=sys.stderr)
            continue
        print(f"running {name} ...", file=sys.stderr)
        rows.append(measure(name, extractor, pages, args.rounds))
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": r.name,
                        **r.summary.__dict__,
                        "words_ratio": r.words_ratio,
                        "pages_per_s": r.pages_per_s,
                    }
                    for r in rows
                ],
                indent=2,
            )
        )
    else:
        print(table(rows, split))
    ours = next((r for r in rows if r.name == "websearch-pack"), None)
    if ours is not None and args.worst:
        print("\nwebsearch-pack's worst pages (id, F1, precision, recall, url):")
        ranked = sorted(zip(pages, ours.scores, strict=True), key=lambda pair: pair[1].f1)
        for page, score in ranked[: args.worst]:
            scored = f"{score.f1:.3f}  {score.precision:.3f}  {score.recall:.3f}"
            print(f"  {page.id}  {scored}  {page.url}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
