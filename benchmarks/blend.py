"""The blend's wall time against its engines' own, measured in one run.

Every installed ddgs text backend is one engine, answered by a stand-in for ``ddgs.DDGS``
that sleeps a realistic latency and returns ten results (nothing leaves the machine). One
engine is slower than the blend's deadline. Three ways to ask them all:

- the blend (``WebSearch("blend")``, sync and async): every engine at once, one deadline;
- the slowest engine that answers, alone: the floor for anything that waits for all answers;
- one after another, each cut at the same deadline: what a caller looping over providers pays.

The blend should sit near the deadline (an engine is slower than it), never near the sum.
Then the cost of fusing, per result.

    python benchmarks/blend.py [--deadline 2.0] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ddgs

from websearch_core import SearchResult, WebSearch
from websearch_core.blend import fuse
from websearch_core.providers.ddgs import DdgsProvider, text_backends

#: Seconds each engine takes, slowest last; the last is past any sensible deadline.
LATENCIES = [0.15, 0.25, 0.35, 0.5, 0.8, 1.2, 6.0]


class TimedEngines:
    """Stands in for ``ddgs.DDGS``: each backend sleeps its latency, then answers."""

    latency: ClassVar[dict[str, float]] = {}

    def __init__(self, timeout: int | None = None, **_: Any) -> None:
        self.timeout = timeout

    def text(self, query: str, **options: Any) -> list[dict[str, str]]:
        backend = options.get("backend", "")
        time.sleep(self.latency.get(backend, 0.1))
        return [
            {
                "title": f"{backend} {i}",
                "href": f"https://{i % 7}.example/{i}",
                "body": "text " * 20,
            }
            for i in range(10)
        ]


def timed(call: Any) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def one_engine(backend: str, deadline: float) -> None:
    """One engine alone, cut at the deadline as the blend cuts it."""
    pool = ThreadPoolExecutor(1)
    future = pool.submit(DdgsProvider(backend).search_blocking, _request(), "q", deadline)
    wait([future], timeout=deadline)
    pool.shutdown(wait=False)  # a caller that gives up does not wait for the engine


def _request() -> Any:
    from websearch_core.models import SearchRequest

    return SearchRequest(query="q", count=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deadline", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    median = statistics.median
    backends = text_backends()
    for scenario, latencies in (
        ("one engine slower than the deadline", LATENCIES),
        ("every engine answers in time", [*LATENCIES[:-1], 1.0]),
    ):
        TimedEngines.latency = dict(zip(backends, latencies[-len(backends) :], strict=False))
        ddgs.DDGS = TimedEngines  # type: ignore[misc,assignment]
        answering = [b for b in backends if TimedEngines.latency[b] < args.deadline]
        slowest = max(answering, key=TimedEngines.latency.__getitem__)
        ws = WebSearch("blend", blend_timeout=args.deadline, memo_size=0)
        blend_s, ablend_s, alone_s, sequential_s = [], [], [], []
        for run in range(args.runs):
            blend_s.append(timed(lambda run=run, ws=ws: ws.search(f"q{run}")))
            ablend_s.append(timed(lambda run=run, ws=ws: asyncio.run(ws.asearch(f"a{run}"))))
            alone_s.append(timed(lambda slowest=slowest: one_engine(slowest, args.deadline)))
            sequential_s.append(
                timed(lambda: [one_engine(backend, args.deadline) for backend in backends])
            )
        print(
            f"\n{scenario}: {len(backends)} engines, latencies "
            f"{sorted(TimedEngines.latency.values())} s, deadline {args.deadline:g} s, "
            f"{args.runs} runs (medians)\n"
        )
        print("| way | wall time (s) | vs the blend |")
        print("|---|---:|---:|")
        rows = [
            ("blend (sync)", median(blend_s)),
            ("blend (async)", median(ablend_s)),
            (f"slowest answering engine alone ({slowest})", median(alone_s)),
            ("one after another, each cut at the deadline", median(sequential_s)),
        ]
        for name, seconds in rows:
            print(f"| {name} | {seconds:.2f} | {seconds / median(blend_s):.2f}x |")

    lists = [
        (
            backend,
            [
                SearchResult(
                    rank=i + 1,
                    title=f"t{i}",
                    url=f"https://{i % 7}.example/{i}?utm_source={backend}",
                    snippet="s" * 200,
                )
                for i in range(10)
            ],
        )
        for backend in backends
    ]
    rounds = 2000
    fuse_s = timed(lambda: [fuse(lists, 10) for _ in range(rounds)])
    results = sum(len(r) for _, r in lists)
    print(
        f"\nfusion: {fuse_s / rounds / results * 1e6:.1f} µs per result ({results} results "
        f"from {len(lists)} engines per blend)"
    )


if __name__ == "__main__":
    main()
