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
import gc
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


def _resiliparse() -> Extractor:
    from resiliparse.extract.html2text import extract_plain_text

    return lambda html, url: extract_plain_text(html, main_content=True, links=False)


CONTENDERS: dict[str, Callable[[], Extractor]] = {
    "websearch-pack": _websearch_pack,
    "trafilatura 2.3.1": _trafilatura,
    "resiliparse (main content)": _resiliparse,
    "readability-lxml 0.9": _readability,
    "html2text (defaults)": lambda: _html2text(links=True),
    "html2text (links off)": lambda: _html2text(links=False),
}


def _words(text: str) -> int:
    return len(text.split())


def run_pass(extractor: Extractor, pages: Iterable[Page]) -> tuple[float, list[str], list[float]]:
    """Wall time of the pass, the outputs, and each page's CPU time (this process)."""
    outputs, cpu = [], []
    started = time.perf_counter()
    for page in pages:
        before = time.process_time()
        outputs.append(extractor(page.html, page.url))
        cpu.append(time.process_time() - before)
    return time.perf_counter() - started, outputs, cpu


@dataclass(frozen=True)
class Row:
    name: str
    summary: Summary
    words_ratio: float
    pages_per_s: float
    scores: list[PageScore]
    cpu_ms: list[float]  # per page, the least of the timed passes

    @property
    def cpu_ms_mean(self) -> float:
        return statistics.fmean(self.cpu_ms)


def measure(name: str, extractor: Extractor, pages: list[Page], rounds: int) -> Row:
    run_pass(extractor, pages[:10])  # warm-up: imports, caches, first allocations
    times, cpu = [], [float("inf")] * len(pages)
    outputs: list[str] = []
    for _ in range(rounds):
        elapsed, outputs, page_cpu = run_pass(extractor, pages)
        times.append(elapsed)
        cpu = [min(a, b) for a, b in zip(cpu, page_cpu, strict=True)]
    scores = [score_page(p.gold, out) for p, out in zip(pages, outputs, strict=True)]
    ratio = statistics.fmean(
        _words(out) / max(1, _words(p.gold)) for p, out in zip(pages, outputs, strict=True)
    )
    cpu_ms = [1000 * seconds for seconds in cpu]
    return Row(name, summarise(scores), ratio, len(pages) / min(times), scores, cpu_ms)


def table(rows: list[Row], split: str) -> str:
    reference = next((r.pages_per_s for r in rows if r.name.startswith("trafilatura")), None)
    lines = [
        f"{split}; speed is the best of the timed passes, one process",
        "",
        "| contender | F1 | precision | recall | page F1 | empty | words/gold | pages/s "
        "| CPU ms/page | vs trafilatura |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        s = row.summary
        versus = f"{row.pages_per_s / reference:.2f}x" if reference else "n/a"
        lines.append(
            f"| {row.name} | {s.f1:.3f} | {s.precision:.3f} | {s.recall:.3f} | {s.page_f1:.3f} "
            f"| {s.empty} | {row.words_ratio:.2f} | {row.pages_per_s:.1f} "
            f"| {row.cpu_ms_mean:.2f} | {versus} |"
        )
    return "\n".join(lines)


# -- --compare REF: this tree against an older commit, page by page --------------------------

REPO_ROOT = Path(__file__).resolve().parent.parent


def _child_pass(data: str, readability: str | None) -> None:
    """In a child whose PYTHONPATH starts with one tree of the package: one timed pass (after
    a warm-up), each page's CPU time and output, and the CPU time the garbage collector took
    during each page, as JSON on stdout. A full collection (10-20 ms, the whole heap) falls
    on the same page in every fresh process, as the allocations before it are the same: the
    page's time then says more about the heap than about the page."""
    pages = load_readability_pages(Path(readability)) if readability else load_pages(Path(data))
    extractor = _websearch_pack()
    run_pass(extractor, pages[:10])
    collected = [0.0] * len(pages)
    at = {"page": 0, "since": 0.0}

    def clock(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            at["since"] = time.process_time()
        else:
            collected[int(at["page"])] += time.process_time() - at["since"]

    gc.callbacks.append(clock)
    outputs, cpu = [], []
    for index, page in enumerate(pages):
        at["page"] = index
        before = time.process_time()
        outputs.append(extractor(page.html, page.url))
        cpu.append(time.process_time() - before)
    gc.callbacks.remove(clock)
    print(json.dumps({"cpu": cpu, "outputs": outputs, "gc": collected}))


def _tree_of(ref: str, into: Path) -> Path:
    """``git archive ref`` of the package, extracted into ``into``."""
    import io
    import subprocess
    import tarfile

    archive = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "archive", "--format=tar", ref, "websearch_core"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _foreign(
    foreign: list[tuple[float, Page]],
    mine: list[float],
    old: list[float],
    pages: list[Page],
    ref: str,
) -> str:
    if not foreign:
        return "none"
    at = [pages.index(page) for _, page in foreign]
    ratio = sum(mine[i] for i in at) / sum(old[i] for i in at)
    return f"this tree / {ref} {ratio:.3f}, the slowest of them {max(r for r, _ in foreign):.2f}x"


def compare(ref: str, pages: list[Page], args: argparse.Namespace) -> str:
    """This tree and ``ref``, each pass in a fresh process, alternating, ``args.rounds``
    times; each page's least CPU time, and where this tree is slower."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as temp:
        trees = {"this tree": REPO_ROOT, ref: _tree_of(ref, Path(temp))}
        cpu = {name: [float("inf")] * len(pages) for name in trees}
        collected = {name: [0.0] * len(pages) for name in trees}  # in the least-CPU pass
        outputs: dict[str, list[str]] = {}
        for round_ in range(args.rounds):
            for name, root in trees.items():
                print(f"compare round {round_ + 1}: {name} ...", file=sys.stderr)
                command = [sys.executable, __file__, "--child-pass", str(args.data)]
                if args.readability_pages:
                    command += ["--readability-pages", str(args.readability_pages)]
                done = subprocess.run(
                    command,
                    capture_output=True,
                    text=True,
                    check=True,
                    env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
                )
                result = json.loads(done.stdout)
                for i, (seconds, in_gc) in enumerate(zip(result["cpu"], result["gc"], strict=True)):
                    if seconds < cpu[name][i]:
                        cpu[name][i], collected[name][i] = seconds, in_gc
                outputs[name] = result["outputs"]
    mine, old = cpu["this tree"], cpu[ref]
    same = sum(a == b for a, b in zip(outputs["this tree"], outputs[ref], strict=True))

    def non_ascii(page: Page) -> bool:
        text = page.gold or page.html
        return sum(not char.isascii() for char in text) > 0.1 * max(1, len(text))

    ratios = [(m / o if o else 1.0, page) for m, o, page in zip(mine, old, pages, strict=True)]
    slower = [(ratio, page) for ratio, page in ratios if ratio > 1.1]
    worst_ratio, worst = max(ratios, key=lambda item: item[0])
    at = pages.index(worst)
    worst_gc = (collected["this tree"][at], collected[ref][at])
    collecting = (
        f"; the garbage collector's share of it {1000 * worst_gc[0]:.2f} ms here, "
        f"{1000 * worst_gc[1]:.2f} ms at {ref}"
        if max(worst_gc) > 0.001
        else ""
    )
    gc_ms = {name: 1000 * sum(times) / len(pages) for name, times in collected.items()}
    foreign = [(ratio, page) for ratio, page in ratios if non_ascii(page)]
    lines = [
        f"\nThis tree against {ref}: each pass in its own process, {args.rounds} alternating "
        "round(s), each page's least CPU time",
        "",
        "| tree | CPU ms/page mean | median | p90 | F1 |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, times in cpu.items():
        ms = sorted(1000 * t for t in times)
        f1 = summarise(
            [score_page(p.gold, out) for p, out in zip(pages, outputs[name], strict=True)]
        )
        lines.append(
            f"| {name} | {statistics.fmean(ms):.2f} | {statistics.median(ms):.2f} "
            f"| {ms[int(0.9 * len(ms))]:.2f} | {f1.f1:.3f} |"
        )
    lines += [
        "",
        f"- this tree / {ref}, mean CPU per page: {sum(mine) / sum(old):.3f}",
        f"- outputs byte-identical on {same} of {len(pages)} pages",
        f"- pages more than 10% slower here: {len(slower)} "
        f"({sum(non_ascii(page) for _, page in slower)} of them mostly non-ASCII); the worst "
        f"{worst_ratio:.2f}x ({worst.id[:12]}, {1000 * old[at]:.2f} ms before{collecting})",
        "- the garbage collector, mean CPU per page: "
        + ", ".join(f"{name} {ms:.3f} ms" for name, ms in gc_ms.items()),
        f"- mostly non-ASCII pages ({len(foreign)}): " + _foreign(foreign, mine, old, pages, ref),
    ]
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
    parser.add_argument(
        "--compare",
        metavar="REF",
        help="also time this tree's extractor against REF's, page by page (git archive)",
    )
    parser.add_argument("--child-pass", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_pass:
        _child_pass(str(args.data), str(args.readability_pages) if args.readability_pages else None)
        return 0
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
    if args.compare:
        print(compare(args.compare, pages, args))
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
