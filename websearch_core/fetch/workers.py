"""HTML-to-markdown conversion on worker processes, for bulk reads and the service.

Converting a page is pure CPU work under the GIL (~9 ms for a 120 kB article). A bulk read
that converts on the thread driving the network keeps one core busy and leaves the rest idle;
measured on 2 cores, moving conversion to a pool of processes nearly doubles pages per second
(``benchmarks/bulk.py``). Single fetches never come here: an agent's one page would pay a
round trip for nothing.

Why processes we start ourselves, not ``multiprocessing``: its ``spawn`` and ``forkserver``
methods re-import the user's ``__main__`` in every worker, so a plain script without an
``if __name__ == "__main__"`` guard would re-run its own top level (fetching pages again) in
each worker; ``fork`` copies a process whose other threads may hold locks. A worker here runs
``websearch_core.fetch.workers.serve`` in a new interpreter: it imports only this package and reads
pickled pages from a pipe. It works the same from a script, a notebook, a thread or an event loop.

- Started when a batch that is known to be large begins (``expect``: the loaders and readers
  pass lists), all at once, or else once a session has had ``START_AFTER`` pages big enough
  to be worth the trip (a retriever's ten pages never start them); until a worker is ready,
  pages are converted in the caller's process, so no batch waits for start-up. A service
  starts them and waits (``start``): its event loop must never convert a page itself.
- A worker imports only the converter: the package's ``__init__`` is lazy, so it pays for
  neither the session nor httpx. They stay up for the session's later batches.
- A worker runs a module-level function of this package on pickled arguments: ``convert``
  for a bulk read, ``scrape.scrape`` for the service's Firecrawl door.
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
import gc
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, NoReturn, TypeVar

from websearch_core.errors import FetchError
from websearch_core.fetch.content import Converted, convert, media_type_of

__all__ = ["IN_PROCESS_BELOW", "ConversionWorkers", "default_workers"]

logger = logging.getLogger(__name__)

#: Bodies smaller than this are converted where they are: a 16 kB page converts in about a
#: millisecond, about what shipping it to a worker and back costs.
IN_PROCESS_BELOW = 16_000
#: A page a worker has not converted by then is lost, and the worker stopped: a conversion
#: is linear in a body of at most 10 MB, so this is a bug or a machine out of memory.
CONVERT_DEADLINE_S = 60.0
_NICENESS = 10
#: Workers start only once a session has sent this many pages their way: starting two
#: interpreters costs about a second of CPU each, more than a short batch saves (measured on
#: 100 pages at +30 ms: 20-27% slower with workers than without).
START_AFTER = 64
_HEADER = struct.Struct("!I")
_READY = b"R"
#: The directory this package is in, however deep this module sits in it (one level per dot).
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[__name__.count(".")])

T = TypeVar("T")


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class _Worker:
    """One worker process: requests go down its stdin, answers come up a pipe of its own
    (so nothing the worker prints can be read as an answer). Used by one dispatcher thread at
    a time."""

    def __init__(self) -> None:
        env = dict(os.environ)
        # The parent may have found this package through sys.path alone (a clone, a notebook).
        env["PYTHONPATH"] = os.pathsep.join(
            part for part in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if part
        )
        answers, answer_end = os.pipe()
        try:
            self.process = subprocess.Popen(  # noqa: S603 - this interpreter, our own code
                [sys.executable, "-c", _WORKER_MAIN, str(answer_end)],
                stdin=subprocess.PIPE,
                env=env,
                close_fds=True,
                pass_fds=(answer_end,),
            )
        except BaseException:
            os.close(answers)
            raise
        finally:
            os.close(answer_end)
        assert self.process.stdin is not None
        self._to: IO[bytes] = self.process.stdin
        self._from: IO[bytes] = os.fdopen(answers, "rb")
        self.ready = False
        self.stopped = False

    def poll_ready(self, wait: bool = False) -> bool:
        """Whether the worker has finished importing (blocks only if ``wait``)."""
        if not self.ready:
            readable, _, _ = select.select([self._from], [], [], None if wait else 0)
            if readable:
                self.ready = self._from.read(1) == _READY
                if not self.ready:
                    raise EOFError("the conversion worker stopped while starting")
        return self.ready

    def send(self, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
        if self.process.poll() is not None:
            raise BrokenPipeError("the conversion worker has stopped")
        request = pickle.dumps((function, args), protocol=pickle.HIGHEST_PROTOCOL)
        self._to.write(_HEADER.pack(len(request)) + request)
        self._to.flush()

    def receive(self, deadline_s: float) -> Any:
        readable, _, _ = select.select([self._from], [], [], deadline_s)
        if not readable:
            raise TimeoutError
        # Our own child's answer, over a pipe only the two processes hold.
        done, outcome = pickle.loads(_read_frame(self._from))  # noqa: S301
        if done:
            return outcome
        raise RuntimeError(f"conversion failed in a worker ({outcome})")

    def stop(self) -> None:
        self.stopped = True
        for stream in (self._to, self._from):
            with contextlib.suppress(OSError, ValueError):
                stream.close()
        try:
            self.process.wait(timeout=2)  # its stdin closed: it exits at once
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


#: What a worker runs: without the current directory on sys.path (``-c`` puts it first, and a
#: file there must not shadow a module), answering on the descriptor it is given.
_WORKER_MAIN = f"import sys; del sys.path[0]; from {__name__} import serve; serve(int(sys.argv[1]))"


def _read_frame(stream: IO[bytes]) -> bytes:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("the conversion worker stopped")
    size = _HEADER.unpack(header)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the conversion worker stopped")
    return data


def _stop_all(workers: list[_Worker], lock: threading.Lock) -> None:
    with lock:
        doomed = list(workers)
        workers.clear()
    for worker in doomed:
        worker.stop()


#: Sessions' worker pools, so a forked child can forget its parent's (see ``_after_fork``).
_POOLS: weakref.WeakSet[ConversionWorkers] = weakref.WeakSet()


class ConversionWorkers:
    """Converts pages on ``workers`` processes; ``workers=0`` converts in-process."""

    def __init__(self, workers: int, *, in_process_below: int = IN_PROCESS_BELOW) -> None:
        self.workers = workers
        self.in_process_below = in_process_below
        self._reset()
        self._unavailable = False  # a worker could not start: everything stays in-process
        #: Start workers at once and wait for them instead of converting in-process meanwhile
        #: (for tests and benchmarks that must measure the workers themselves).
        self.wait_for_start = False
        self.converted_on_workers = 0  # pages converted on a worker (tests, benchmarks)
        self._submitted = 0
        _POOLS.add(self)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._starting = threading.Lock()
        self._dispatch: ThreadPoolExecutor | None = None
        self._local = threading.local()
        self._started: list[_Worker] = []
        self._finalizer = weakref.finalize(self, _stop_all, self._started, self._lock)

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
        return self.call(url, convert, body, content_type, url)

    def call(self, url: str, function: Callable[..., T], *args: Any) -> Future[T]:
        """``function(*args)`` for the page at ``url``, as ``submit`` runs a conversion:
        ``function`` is a module-level function of this package (a worker imports it)."""
        with self._lock:
            if self._dispatch is None:
                self._dispatch = ThreadPoolExecutor(
                    max_workers=self.workers, thread_name_prefix="websearch-convert"
                )
            self._submitted += 1
            if self._submitted <= START_AFTER and not self.wait_for_start:
                return self._dispatch.submit(function, *args)
            return self._dispatch.submit(self._on_worker, url, function, args)

    def expect(self, pages: int) -> None:
        """A batch of ``pages`` pages is about to be read: if that is enough to be worth the
        workers (``START_AFTER``), start every one of them now, without waiting. They import
        while the first pages are on the network (converted in-process meanwhile), instead of
        one at a time after the batch's first ``START_AFTER`` pages: on 200 pages that left
        most of the batch converted on one core."""
        if pages >= START_AFTER:
            self.start(wait=False)

    def start(self, *, wait: bool = True) -> None:
        """Start every worker now, one per dispatcher thread, all at once. ``wait`` (a
        service at start-up): wait until each is ready, and from now on send every page worth
        a worker to one, never converting on the caller's side. Without ``wait``: pages go to
        workers once they are ready, and are converted in-process until then."""
        if self.workers == 0 or self._unavailable:
            return
        if wait:
            self.wait_for_start = True
        elif len(self.pids) >= self.workers:
            return  # all running (a session's earlier batch): nothing to queue behind pages
        everyone = threading.Barrier(self.workers)

        def started() -> None:  # one per dispatcher thread: the barrier keeps them apart
            worker = None if self._unavailable else self._thread_worker()
            if worker is not None and wait:
                try:
                    worker.poll_ready(wait=True)
                except (EOFError, OSError, ValueError) as exc:
                    self._retire(worker)
                    self._give_up(exc)
            with contextlib.suppress(threading.BrokenBarrierError):
                everyone.wait(timeout=60)

        with self._lock:
            if self._dispatch is None:
                self._dispatch = ThreadPoolExecutor(
                    max_workers=self.workers, thread_name_prefix="websearch-convert"
                )
            dispatch = self._dispatch
            self._submitted = max(self._submitted, START_AFTER)  # no page waits for a quota
        with self._starting:  # one call's tasks queued together: two barriers never interleave
            starting = [dispatch.submit(started) for _ in range(self.workers)]
        if wait:
            for done in starting:
                done.result(timeout=120)

    def _on_worker(self, url: str, function: Callable[..., T], args: tuple[Any, ...]) -> T:
        worker = None if self._unavailable else self._thread_worker()
        if worker is None:
            return function(*args)
        try:
            ready = worker.poll_ready(wait=self.wait_for_start)
        except (EOFError, OSError, ValueError) as exc:  # it could not import the package
            self._retire(worker)
            self._give_up(exc)
            return function(*args)
        if not ready:
            return function(*args)  # still starting: do not wait for it
        try:
            worker.send(function, args)
        except (OSError, ValueError):  # it stopped while idle, or close() stopped it:
            self._retire(worker)  # it never had this page; the next page starts another
            return function(*args)
        try:
            done: T = worker.receive(CONVERT_DEADLINE_S)
        except (EOFError, OSError, ValueError, pickle.UnpicklingError, TimeoutError) as exc:
            closing = worker.stopped
            self._retire(worker)
            if closing:  # close() ran while it worked: finish the page here
                return function(*args)
            self._lost(exc, url)
        with self._lock:
            self.converted_on_workers += 1
        return done

    def _thread_worker(self) -> _Worker | None:
        """This dispatcher thread's worker, started if it has none; ``None`` if none can
        start (then everything is converted in-process, said once in the log)."""
        worker: _Worker | None = getattr(self._local, "worker", None)
        if worker is not None and not worker.stopped:
            return worker
        try:
            worker = _Worker()
        except OSError as exc:  # no interpreter to start (an embedded Python)
            self._give_up(exc)
            return None
        self._local.worker = worker
        with self._lock:
            self._started.append(worker)
        return worker

    def _retire(self, worker: _Worker) -> None:
        self._local.worker = None
        with self._lock:
            if worker in self._started:
                self._started.remove(worker)
        worker.stop()

    @staticmethod
    def _lost(exc: BaseException, url: str) -> NoReturn:
        if isinstance(exc, TimeoutError):
            logger.warning(
                "converting %s took over %g s: its worker was stopped", url, CONVERT_DEADLINE_S
            )
            raise FetchError(
                f"the page could not be converted within {CONVERT_DEADLINE_S:g} s; "
                "use another source"
            ) from None
        logger.warning("a conversion worker stopped while converting %s", url)
        raise FetchError(
            "the page could not be converted: the worker converting it stopped "
            "(out of memory, or killed); try it again",
            retryable=True,
        ) from None

    def _give_up(self, exc: BaseException) -> None:
        if not self._unavailable:
            self._unavailable = True
            logger.warning(
                "conversion workers could not start (%s): converting pages in this process",
                type(exc).__name__,
            )

    def close(self) -> None:
        """Stop the workers. Conversions under way finish first; a page submitted meanwhile,
        or later, starts new workers."""
        with self._lock:
            dispatch, self._dispatch = self._dispatch, None
            doomed = list(self._started)
            self._started.clear()
        if dispatch is not None:
            dispatch.shutdown(wait=True)
        for worker in doomed:
            worker.stop()

    def _after_fork(self) -> None:
        # The child has the parent's pool objects but not its threads; the workers are the
        # parent's to stop. Start afresh.
        self._finalizer.detach()
        self._reset()


def _forget_pools_in_child() -> None:
    for pool in list(_POOLS):
        pool._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools_in_child)


def serve(answers: int) -> None:
    """The worker's loop: a pickled call in (a function of this package and its arguments),
    its pickled outcome out on the descriptor ``answers``: ``(True, result)``, or ``(False,
    the error's type name)``. Ctrl-C is the parent's to handle: the worker ends when the
    parent closes its stdin."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Conversion is throughput work; the parent's thread driving the network is latency
    # work. On a machine short of CPU, the workers yield to it, so connections are served on
    # time and the pipeline stays full.
    with contextlib.suppress(OSError, AttributeError):
        os.nice(_NICENESS)
    # What the worker has imported lives as long as it does: frozen, a full collection scans
    # only what conversions made since, not the modules and the converter's caches (in a
    # process converting the 121 DEV pages three times, its one full collection took 6 ms
    # instead of 18).
    gc.freeze()
    out = os.fdopen(answers, "wb")
    source = sys.stdin.buffer
    try:
        out.write(_READY)
        out.flush()
    except OSError:  # the parent closed before it needed us
        return
    while True:
        try:
            # The parent's request, over a pipe only the two processes hold.
            function, args = pickle.loads(_read_frame(source))  # noqa: S301
        except EOFError:
            return
        try:
            outcome: tuple[bool, object] = (True, function(*args))
        except Exception as exc:  # reported to the parent by type, as the boundary does
            outcome = (False, type(exc).__name__)
        reply = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            out.write(_HEADER.pack(len(reply)) + reply)
            out.flush()
        except OSError:  # the parent closed the pipe (closing, or gone): nothing to answer
            return
