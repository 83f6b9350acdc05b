"""HTML-to-markdown conversion on worker processes, for bulk reads.

Converting a page is pure CPU work under the GIL (~9 ms for a 120 kB article). A bulk read
that converts on the thread driving the network keeps one core busy and leaves the rest idle;
measured on 2 cores, moving conversion to a pool of processes nearly doubles pages per second
(``benchmarks/bulk.py``). Single fetches never come here: an agent's one page would pay a
round trip for nothing.

Why processes we start ourselves, not ``multiprocessing``: its ``spawn`` and ``forkserver``
methods re-import the user's ``__main__`` in every worker, so a plain script without an
``if __name__ == "__main__"`` guard would re-run its own top level (fetching pages again) in
each worker; ``fork`` copies a process whose other threads may hold locks. A worker here runs
``websearch_core.workers.serve`` in a new interpreter: it imports only this package and reads
pickled pages from a pipe. It works the same from a script, a notebook, a thread or an event loop.

- Started lazily, on the first page big enough to be worth the trip; until a worker is ready
  pages are converted in the caller's process, so a small batch never waits for start-up.
- Small pages (and anything not HTML) stay in-process: pickling and a pipe round trip cost
  more than converting them.
- Each worker has one dispatcher thread that owns it, so pages are converted ``workers`` at a
  time and a caller waits on a ``concurrent.futures.Future`` (from a thread, or awaited
  through ``asyncio.wrap_future`` on a loop).
- A worker that dies (killed, out of memory) fails only the page it held, with a
  ``FetchError``; the next page starts a new worker.
- ``close()`` ends the workers; so does the end of the parent process (their pipe closes).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from websearch_core.content import Converted, convert, media_type_of
from websearch_core.errors import FetchError

__all__ = ["IN_PROCESS_BELOW", "ConversionWorkers", "default_workers"]

logger = logging.getLogger(__name__)

#: Bodies smaller than this are converted where they are: a 16 kB page converts in about a
#: millisecond, about what shipping it to a worker and back costs.
IN_PROCESS_BELOW = 16_000
_HEADER = struct.Struct("!I")
_READY = b"R"
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class _Worker:
    """One worker process and its two pipes; used by one dispatcher thread at a time."""

    def __init__(self) -> None:
        env = dict(os.environ)
        # The parent may have found this package through sys.path alone (a clone, a notebook).
        env["PYTHONPATH"] = os.pathsep.join(
            part for part in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if part
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from websearch_core.workers import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self._to: IO[bytes] = self.process.stdin
        self._from: IO[bytes] = self.process.stdout
        self.ready = False

    def poll_ready(self, wait: bool = False) -> bool:
        """Whether the worker has finished importing (blocks only if ``wait``)."""
        if not self.ready:
            readable, _, _ = select.select([self._from], [], [], None if wait else 0)
            if readable:
                self.ready = self._from.read(1) == _READY
                if not self.ready:
                    raise EOFError("the conversion worker stopped while starting")
        return self.ready

    def convert(self, body: bytes, content_type: str | None, url: str) -> Converted:
        request = pickle.dumps((body, content_type, url), protocol=pickle.HIGHEST_PROTOCOL)
        self._to.write(_HEADER.pack(len(request)) + request)
        self._to.flush()
        # Our own child's answer, over a pipe only the two processes hold.
        outcome = pickle.loads(_read_frame(self._from))  # noqa: S301
        if isinstance(outcome, Converted):
            return outcome
        raise RuntimeError(f"conversion failed in a worker ({outcome})")

    def stop(self) -> None:
        _stop(self.process)


def _read_frame(stream: IO[bytes]) -> bytes:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("the conversion worker stopped")
    size = _HEADER.unpack(header)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the conversion worker stopped")
    return data


def _stop(process: subprocess.Popen[bytes]) -> None:
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    try:
        process.wait(timeout=2)  # its stdin closed: it exits at once
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _stop_all(workers: list[_Worker]) -> None:
    for worker in workers:
        worker.stop()
    workers.clear()


class ConversionWorkers:
    """Converts pages on ``workers`` processes; ``workers=0`` converts in-process."""

    def __init__(self, workers: int, *, in_process_below: int = IN_PROCESS_BELOW) -> None:
        self.workers = workers
        self.in_process_below = in_process_below
        self._lock = threading.Lock()
        self._dispatch: ThreadPoolExecutor | None = None
        self._local = threading.local()
        self._started: list[_Worker] = []
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._unavailable = False  # a worker could not start: everything stays in-process
        #: Wait for a starting worker instead of converting in-process meanwhile (for tests
        #: and benchmarks that must measure the workers themselves).
        self.wait_for_start = False
        self.converted_on_workers = 0  # pages converted on a worker (tests, benchmarks)

    def __repr__(self) -> str:
        return f"ConversionWorkers(workers={self.workers}, running={len(self._started)})"

    @property
    def pids(self) -> list[int]:
        """The worker processes running now."""
        with self._lock:
            return [worker.process.pid for worker in self._started]

    def worth_a_worker(self, body: bytes, content_type: str | None) -> bool:
        """Whether a page should go to a worker at all (big enough, and HTML)."""
        if self.workers == 0 or len(body) < self.in_process_below:
            return False
        return media_type_of(content_type, body) in ("text/html", "application/xhtml+xml")

    def submit(self, body: bytes, content_type: str | None, url: str) -> Future[Converted]:
        """The page's conversion, on a worker when one is ready, else in the caller's process
        on a dispatcher thread. Pages not ``worth_a_worker`` should be converted by the
        caller directly."""
        with self._lock:
            if self._dispatch is None:
                self._dispatch = ThreadPoolExecutor(
                    max_workers=self.workers, thread_name_prefix="websearch-convert"
                )
                self._finalizer = weakref.finalize(self, _stop_all, self._started)
            return self._dispatch.submit(self._convert, body, content_type, url)

    def _convert(self, body: bytes, content_type: str | None, url: str) -> Converted:
        worker: _Worker | None = getattr(self._local, "worker", None)
        if self._unavailable:
            return convert(body, content_type, url)
        if worker is None:
            try:
                worker = self._local.worker = _Worker()
            except OSError as exc:  # no interpreter to start (an embedded Python)
                return self._in_process_from_now(exc, body, content_type, url)
            with self._lock:
                self._started.append(worker)
        try:
            ready = worker.poll_ready(wait=self.wait_for_start)
        except EOFError as exc:  # it could not even import the package
            return self._in_process_from_now(exc, body, content_type, url)
        if not ready:
            return convert(body, content_type, url)  # still starting: do not wait for it
        try:
            converted = worker.convert(body, content_type, url)
            with self._lock:
                self.converted_on_workers += 1
            return converted
        except (EOFError, OSError, pickle.UnpicklingError):
            self._local.worker = None
            with self._lock:
                if worker in self._started:
                    self._started.remove(worker)
            worker.stop()
            logger.warning("a conversion worker stopped while converting %s", url)
            raise FetchError(
                "the page could not be converted: the worker converting it stopped "
                "(out of memory, or killed); try it again",
                retryable=True,
            ) from None

    def _in_process_from_now(
        self, exc: BaseException, body: bytes, content_type: str | None, url: str
    ) -> Converted:
        if not self._unavailable:
            self._unavailable = True
            logger.warning(
                "conversion workers could not start (%s): converting pages in this process",
                type(exc).__name__,
            )
        return convert(body, content_type, url)

    def close(self) -> None:
        """Stop the workers (a later page starts new ones)."""
        with self._lock:
            dispatch, self._dispatch = self._dispatch, None
        if dispatch is not None:
            dispatch.shutdown(wait=True)
        if self._finalizer is not None:
            self._finalizer()  # stops every worker, once


def serve() -> None:
    """The worker's loop: a pickled page in, a pickled ``Converted`` (or an error name) out."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print in the worker must not corrupt the protocol
    source = sys.stdin.buffer
    out.write(_READY)
    out.flush()
    while True:
        try:
            # The parent's request, over a pipe only the two processes hold.
            body, content_type, url = pickle.loads(_read_frame(source))  # noqa: S301
        except EOFError:
            return
        try:
            outcome: object = convert(body, content_type, url)
        except Exception as exc:  # reported to the parent by type, as the boundary does
            outcome = type(exc).__name__
        reply = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            out.write(_HEADER.pack(len(reply)) + reply)
            out.flush()
        except OSError:  # the parent closed the pipe (closing, or gone): nothing to answer
            return
