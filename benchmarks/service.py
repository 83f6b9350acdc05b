"""What ``websearch serve`` costs on top of the in-process API, measured in one run.

Fake Brave and Mojeek APIs and HTML pages (``tests/support/fake_engines.py``) run on loopback
in a process of their own; ``websearch serve`` runs as a real uvicorn process against them
(``tests/support/service.py``). Two workloads, each driven at a fixed concurrency (that many
workers, each sending its next request when its last is answered):

- search: ``POST /v1/websearch`` (``{"query": q, "count": 5}``) through an
  ``httpx.AsyncClient``, against ``await ws.asearch(q, count=5)`` on a blend of the same two
  engines in this process;
- scrape: ``POST /v2/scrape`` (``{"url": u, "formats": ["markdown"]}``) against
  ``await ws.ascrape(u)`` with ``fetch_allow_private=True``.

Every request carries its own query or page, so no memo or blend cache answers it, and every
answer is checked: a search's first result must name its own query, a scrape's markdown its
own page. Each side is warmed up, then run ``--rounds`` times, interleaved (service first in
even rounds, in-process first in odd ones); the table keeps each side's best round (highest
requests/s) with that round's p50 and p99. The service's RSS is sampled every 20 ms.

One run on a shared machine: read the ratios, not the absolute numbers. Three processes
share the cores (engines, service, this one), and the service side spreads its work over two
of them (client here, session there) where the in-process side has one.

The hung-engine scenario (``--scenario hung``) is what an operator fears: mojeek stops
answering (it holds every request for 30 s, past the blend's 4 s deadline) while brave keeps
answering in about a millisecond. Three phases, each against the same service:

- before: searches at concurrency 16 with both engines well;
- during: a burst of 300 requests at once (200 searches, 100 scrapes of 120 kB pages) while
  mojeek hangs, and ``/healthz`` polled every 10 ms throughout;
- after: mojeek answers again; searches at concurrency 16 for 10 s, the first one timed alone.

Each phase reports searches/s, p50 and p99, and how often each engine was reported down (brave
must never be: it is healthy). ``--compare REF`` runs the same scenario against the service of
an older commit too (a ``git archive`` of it, started from its own directory), in the same run.

    python benchmarks/service.py [--concurrency 32] [--requests 400] [--rounds 2]
    python benchmarks/service.py --scenario hung [--compare 2b35722]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import psutil

from tests.support.fake_engines import fake_engines
from tests.support.service import run_service
from websearch_core import WebSearch

KEY = "benchmark-key"

#: One request: its index in, ``None`` when the answer is right, else what was wrong.
Call = Callable[[int], Awaitable[str | None]]


@dataclass
class Run:
    rps: float
    p50_ms: float
    p99_ms: float
    failures: list[str]


async def drive(call: Call, requests: int, concurrency: int) -> Run:
    indices = iter(range(requests))
    latencies: list[float] = []
    failures: list[str] = []

    async def worker() -> None:
        for i in indices:  # shared: each worker takes the next index
            started = time.perf_counter()
            try:
                problem = await call(i)
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc}"
            latencies.append(time.perf_counter() - started)
            if problem:
                failures.append(f"#{i}: {problem}")

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = time.perf_counter() - started
    p50, p99 = statistics.median(latencies), statistics.quantiles(latencies, n=100)[98]
    return Run(requests / seconds, p50 * 1000, p99 * 1000, failures)


def search_problem(query: str, first_url: str | None) -> str | None:
    if first_url is not None and f"/{quote(query, safe='')}/" in first_url:
        return None
    return f"first result {first_url}"


def scrape_problem(name: str, markdown: str | None) -> str | None:
    return None if f"This page is called {name}." in (markdown or "") else "not its page"


def serve_engines(conn: Connection) -> None:
    """The fake engines in their own process: ``(engine, seconds)`` makes an engine hold each
    request that long (0: answer at once again), ``"stop"`` ends it."""
    with fake_engines() as engines:
        conn.send((engines.url, engines.environment()))
        while (command := conn.recv()) != "stop":
            name, seconds = command
            if seconds:
                engines.delay_s[name] = seconds
            else:
                engines.delay_s.pop(name, None)
            conn.send("ok")


def watch_rss(pid: int, stop: threading.Event, peak: list[int]) -> None:
    """Samples a process's resident memory every 20 ms until ``stop``; the largest in ``peak``."""
    process = psutil.Process(pid)
    while not stop.wait(0.02):
        peak[0] = max(peak[0], process.memory_info().rss)


async def bench(engines_url: str, service_url: str, args: argparse.Namespace) -> list[str]:
    ws = WebSearch(
        "blend",
        brave_api_key="fake-brave-key",
        brave_base_url=f"{engines_url}/brave",
        mojeek_api_key="fake-mojeek-key",
        mojeek_base_url=f"{engines_url}/mojeek",
        blend_engines=["brave", "mojeek"],
    )
    pages = WebSearch(fetch_allow_private=True)
    limits = httpx.Limits(max_connections=args.concurrency)
    client = httpx.AsyncClient(limits=limits, timeout=60, trust_env=False)
    headers = {"X-API-Key": KEY, "Authorization": f"Bearer {KEY}"}

    def calls(workload: str, tag: str) -> dict[str, Call]:
        async def service_search(i: int) -> str | None:
            query = f"svc-{tag}-q{i}"
            body = {"query": query, "count": 5}
            r = await client.post(f"{service_url}/v1/websearch", json=body, headers=headers)
            if r.status_code != 200:
                return f"HTTP {r.status_code}: {r.text[:200]}"
            results = r.json()["results"]
            return search_problem(query, results[0]["url"] if results else None)

        async def local_search(i: int) -> str | None:
            results = (await ws.asearch(f"lib-{tag}-q{i}", count=5)).results
            return search_problem(f"lib-{tag}-q{i}", results[0].url if results else None)

        async def service_scrape(i: int) -> str | None:
            name = f"p{i}svc{tag}"
            body = {"url": f"{engines_url}/pages/{name}", "formats": ["markdown"]}
            r = await client.post(f"{service_url}/v2/scrape", json=body, headers=headers)
            if r.status_code != 200 or not r.json().get("success"):
                return f"HTTP {r.status_code}: {r.text[:200]}"
            return scrape_problem(name, r.json()["data"].get("markdown"))

        async def local_scrape(i: int) -> str | None:
            page = await pages.ascrape(f"{engines_url}/pages/p{i}lib{tag}")
            return scrape_problem(f"p{i}lib{tag}", page.markdown)

        if workload == "search":
            return {"service": service_search, "in-process": local_search}
        return {"service": service_scrape, "in-process": local_scrape}

    lines: list[str] = []
    try:
        for workload in ("search", "scrape"):
            for side, call in calls(workload, "warm").items():
                warm = await drive(call, args.concurrency * 2, args.concurrency)
                if warm.failures:
                    raise SystemExit(f"{workload} {side} warm-up failed: {warm.failures[:3]}")
            runs: dict[str, list[Run]] = {"service": [], "in-process": []}
            for round_ in range(args.rounds):
                order = list(calls(workload, f"r{round_}").items())
                for side, call in order if round_ % 2 == 0 else order[::-1]:
                    runs[side].append(await drive(call, args.requests, args.concurrency))
                    print(f"{workload} round {round_} {side}: done", file=sys.stderr)
            best = {side: max(rs, key=lambda run: run.rps) for side, rs in runs.items()}
            lines += [f"\n{workload}\n", "| way | req/s | p50 ms | p99 ms | failed |"]
            lines.append("|---|---:|---:|---:|---:|")
            for side, run in best.items():
                failures = [f for r in runs[side] for f in r.failures]
                lines.append(
                    f"| {side} | {run.rps:.0f} | {run.p50_ms:.1f} | {run.p99_ms:.1f} "
                    f"| {len(failures)} |"
                )
                lines += [f"  {side} failed {failure}" for failure in failures[:5]]
            svc, lib = best["service"], best["in-process"]
            lines.append(
                f"\nservice / in-process ({workload}): p50 {svc.p50_ms / lib.p50_ms:.2f}x, "
                f"p99 {svc.p99_ms / lib.p99_ms:.2f}x; in-process req/s / service req/s "
                f"{lib.rps / svc.rps:.2f}x"
            )
    finally:
        await client.aclose()
        await ws.aclose()
        await pages.aclose()
    return lines


# -- the hung-engine scenario -----------------------------------------------------------------


@dataclass
class Phase:
    name: str
    latencies: list[float]
    down: dict[str, int]
    errors: list[str]
    seconds: float

    def row(self) -> str:
        ordered = sorted(self.latencies) or [0.0]
        p50 = statistics.median(ordered) * 1000
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000
        rate = len(self.latencies) / self.seconds if self.seconds else 0.0
        return (
            f"| {self.name} | {len(self.latencies)} | {rate:.0f} | {p50:.0f} | {p99:.0f} "
            f"| {self.down.get('brave', 0)} | {self.down.get('mojeek', 0)} | {len(self.errors)} |"
        )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


async def hung_engine(
    service_url: str, engines_url: str, control: Connection, concurrency: int
) -> list[str]:
    limits = httpx.Limits(max_connections=400, max_keepalive_connections=400)
    headers = {"X-API-Key": KEY, "Authorization": f"Bearer {KEY}"}
    counter = iter(range(10**9))

    def phase(name: str) -> Phase:
        return Phase(name, [], {}, [], 0.0)

    async with httpx.AsyncClient(limits=limits, timeout=60, trust_env=False) as client:

        async def search(into: Phase) -> dict[str, str]:
            query = f"hung-{next(counter)}"
            started = time.perf_counter()
            try:
                reply = await client.post(
                    f"{service_url}/v1/websearch", json={"query": query}, headers=headers
                )
            except httpx.TransportError as exc:
                into.latencies.append(time.perf_counter() - started)
                into.errors.append(f"{type(exc).__name__}: the service did not answer")
                return {"error": type(exc).__name__}
            into.latencies.append(time.perf_counter() - started)
            if reply.status_code != 200:
                into.errors.append(f"HTTP {reply.status_code}: {reply.text[:120]}")
                message = reply.json().get("error", {}).get("message", "")
                for engine in ("brave", "mojeek"):  # "every engine is down: brave (timeout)…"
                    if f"{engine} (" in message:
                        into.down[engine] = into.down.get(engine, 0) + 1
                return {"error": message}
            found = {o["engine"]: o["status"] for o in reply.json()["outcomes"]}
            for engine, status in found.items():
                if status == "down":
                    into.down[engine] = into.down.get(engine, 0) + 1
            return found

        async def scrape(i: int, into: Phase) -> None:
            body = {"url": f"{engines_url}/pages/big{next(counter)}"}
            try:
                reply = await client.post(f"{service_url}/v2/scrape", json=body, headers=headers)
            except httpx.TransportError as exc:
                into.errors.append(f"scrape {type(exc).__name__}: the service did not answer")
                return
            if reply.status_code != 200 or not reply.json().get("success"):
                into.errors.append(f"scrape HTTP {reply.status_code}: {reply.text[:120]}")

        async def closed_loop(into: Phase, seconds: float) -> None:
            end = time.perf_counter() + seconds

            async def worker() -> None:
                while time.perf_counter() < end:
                    await search(into)

            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            into.seconds = time.perf_counter() - started

        before = phase("before (both well)")
        await closed_loop(before, 5.0)

        control.send(("mojeek", 30.0))
        control.recv()
        during = phase("during (mojeek hangs; 300 at once)")
        health: list[float] = []
        stop = asyncio.Event()

        async def poll() -> None:
            while not stop.is_set():
                started = time.perf_counter()
                with contextlib.suppress(httpx.TransportError):
                    await client.get(f"{service_url}/healthz")
                health.append(time.perf_counter() - started)
                await asyncio.sleep(0.01)

        poller = asyncio.ensure_future(poll())
        started = time.perf_counter()
        await asyncio.gather(
            *(search(during) for _ in range(200)), *(scrape(i, during) for i in range(100))
        )
        during.seconds = time.perf_counter() - started
        stop.set()
        await poller

        control.send(("mojeek", 0))
        control.recv()
        first = phase("first search after")
        first_outcomes = await search(first)
        after = phase("after (10 s, mojeek well)")
        await closed_loop(after, 10.0)

    lines = ["| phase | searches | /s | p50 ms | p99 ms | brave down | mojeek down | errors |"]
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    lines += [p.row() for p in (before, during, first, after)]
    lines.append(
        f"\n/healthz during the burst: {len(health)} polls, p50 "
        f"{statistics.median(health) * 1000:.1f} ms, p99 {percentile(health, 0.99):.1f} ms, "
        f"max {max(health) * 1000:.1f} ms"
    )
    lines.append(f"first search after mojeek recovered: outcomes {first_outcomes}")
    for p in (before, during, first, after):
        lines += [f"  {p.name}: {error}" for error in p.errors[:3]]
    return lines


def older_tree(ref: str, into: str) -> str:
    """A ``git archive`` of ``ref`` unpacked in ``into``: the service as it was then."""
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", ref], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return into


def hung_scenario(args: argparse.Namespace) -> None:
    ours, theirs = multiprocessing.Pipe()
    engines = multiprocessing.Process(target=serve_engines, args=(theirs,), daemon=True)
    engines.start()
    engines_url, env = ours.recv()
    env |= {"WEBSEARCH_API_KEY": KEY, "WEBSEARCH_FETCH_ALLOW_PRIVATE": "1"}
    trees: list[tuple[str, str | None]] = [("this tree", None)]
    try:
        with tempfile.TemporaryDirectory(prefix="websearch-bench-") as tmp:
            if args.compare:
                trees.insert(0, (args.compare, older_tree(args.compare, tmp)))
            for label, cwd in trees:
                with run_service(env, cwd=cwd) as service:
                    lines = asyncio.run(
                        hung_engine(service.url, engines_url, ours, args.concurrency)
                    )
                print(f"\nhung-engine scenario, service of {label}:\n")
                print("\n".join(lines))
    finally:
        ours.send("stop")
        engines.join(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--scenario", choices=("throughput", "hung", "all"), default="all")
    parser.add_argument("--compare", metavar="REF", help="also run the hung scenario on REF")
    args = parser.parse_args()
    if args.scenario != "throughput":
        hung_scenario(argparse.Namespace(**{**vars(args), "concurrency": 16}))
        if args.scenario == "hung":
            return
    ours, theirs = multiprocessing.Pipe()
    engines = multiprocessing.Process(target=serve_engines, args=(theirs,), daemon=True)
    engines.start()
    engines_url, env = ours.recv()
    env |= {"WEBSEARCH_API_KEY": KEY, "WEBSEARCH_FETCH_ALLOW_PRIVATE": "1"}
    started = time.perf_counter()
    try:
        with run_service(env) as service:
            start_rss = psutil.Process(service.process.pid).memory_info().rss
            stop, peak = threading.Event(), [start_rss]
            watcher = threading.Thread(target=watch_rss, args=(service.process.pid, stop, peak))
            watcher.start()
            try:
                lines = asyncio.run(bench(engines_url, service.url, args))
            finally:
                stop.set()
                watcher.join()
    finally:
        ours.send("stop")
        engines.join(10)
    print(
        f"{args.requests} requests a round, concurrency {args.concurrency}, {args.rounds} "
        f"interleaved rounds, best round per side; {psutil.cpu_count()} CPUs; "
        f"{time.perf_counter() - started:.0f} s"
    )
    print("\n".join(lines))
    print(f"\nservice RSS: {start_rss >> 20} MB after start-up, {peak[0] >> 20} MB peak")
    log = [line for line in service.log().splitlines() if '"event": "request"' in line]
    refused = [line for line in log if '"status": 200' not in line]
    print(f"service requests logged: {len(log)}, not answered 200: {len(refused)}")
    for line in refused[:10]:
        print(f"  {line[:300]}")


if __name__ == "__main__":
    main()
