"""``websearch search QUERY`` and ``websearch fetch URL``: what a model would read, or JSON;
``websearch serve``: the HTTP service (``websearch_core/server``).

Errors are one line on stderr (with ``--json``, ``{"error": {...}}`` on stdout, the core's
``WebSearchError.as_dict``) and a non-zero exit, never a traceback: 2 for a bad request,
a refused URL or a configuration problem (a port that cannot be listened on among them), 1
for a provider or network failure, or output that cannot be written (a full disk, a closed
stdout). A reader that stops early (``| head -1``) ends the output quietly, as Unix tools
do, with status 141; Ctrl-C ends it at once with 130.

The command (``entry``) ends its process as soon as its answer is out: threads still waiting
on a search its deadline gave up on (a blocking engine that ignores its timeout, HTTP engines
cut at the blend's deadline) are not waited for, as the interpreter's exit would.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from websearch_core import __version__
from websearch_core.errors import (
    ConfigurationError,
    InvalidRequestError,
    URLRefusedError,
    WebSearchError,
)
from websearch_core.models import DEFAULT_READ_TOKENS, MAX_COUNT, MAX_READ
from websearch_core.planning import CHOICES
from websearch_core.session import WebSearch

__all__ = ["entry", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse, with a mistake said in one line (not its usage block), status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="websearch", description="Web search for LLM agents: prints what the model reads."
    )
    parser.add_argument("--version", action="version", version=f"websearch {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    search = commands.add_parser("search", help="search the web and print the result menu")
    search.add_argument("query", nargs="+", help="the words to search for")
    search.add_argument(
        "--provider",
        choices=list(CHOICES),
        default=None,
        help="pin a provider (default: WEBSEARCH_PROVIDER, else auto)",
    )
    search.add_argument(
        "--count", type=int, default=5, help=f"results, 1 to {MAX_COUNT} (more is capped)"
    )
    search.add_argument("--site", help="only results from this domain, e.g. docs.python.org")
    search.add_argument("--exclude", action="append", default=[], help="leave out this domain")
    search.add_argument("--freshness", choices=["day", "week", "month", "year"])
    search.add_argument("--answer", action="store_true", help="ask for a synthesised answer")
    search.add_argument(
        "--read",
        type=int,
        metavar="N",
        help=f"also read the top N results (0 to {MAX_READ}) and show their best passages",
    )
    search.add_argument(
        "--read-tokens",
        type=int,
        metavar="TOKENS",
        help=f"the budget of a search that reads (default {DEFAULT_READ_TOKENS:,} tokens)",
    )
    search.add_argument("--json", action="store_true", help="print the structured response")
    fetch = commands.add_parser("fetch", help="fetch one page and print it as the model reads it")
    fetch.add_argument("url", help="an http(s) URL on the public internet")
    fetch.add_argument("--max-bytes", type=int, help="read ceiling in bytes (default 2 MB)")
    fetch.add_argument("--offset", type=int, default=0, help="continue a long page from here")
    fetch.add_argument("--json", action="store_true", help="print the structured page")
    fetch.add_argument(
        "--allow-private",
        action="store_true",
        default=None,
        help="also fetch loopback and private addresses (local testing, an intranet); cloud "
        "metadata endpoints stay refused (default: WEBSEARCH_FETCH_ALLOW_PRIVATE)",
    )
    commands.add_parser("providers", help="list configured providers and what the others need")
    serve = commands.add_parser(
        "serve",
        help="serve search and scrape over HTTP (typed, SearXNG- and Firecrawl-shaped); "
        "needs WEBSEARCH_API_KEY",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    serve.add_argument("--port", type=_port, default=8080, help="port (default 8080)")
    for flag, kind, meaning in (
        ("--max-inflight", int, "searches answered at once (default 64); more wait"),
        ("--max-inflight-scrapes", int, "scrapes answered at once (default 64); more wait"),
        ("--max-queued", int, "requests waiting, per lane (default 512); more get 503"),
        ("--header-timeout", _seconds, "seconds for a request's line and headers (default 10)"),
        ("--body-timeout", _seconds, "seconds for a request's body (default 10)"),
    ):
        serve.add_argument(flag, type=kind, help=meaning)
    mcp = commands.add_parser(
        "mcp", help="serve web_search and web_fetch over MCP (stdio, or --http on loopback)"
    )
    mcp.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="with --http: a loopback address")
    mcp.add_argument("--port", type=_port, default=8765, help="with --http: port (default 8765)")
    return parser


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text[:20]!r} is not a port: give 0 to 65535")
    return port


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"{text[:20]!r} is not a number of seconds above 0")
    return seconds


#: What a shell reports for a process ended by SIGPIPE (128 + 13).
_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _emit(_run(_parser().parse_args(argv)))
    except BrokenPipeError:
        # The reader went away: point stdout at nothing so the interpreter's final flush
        # does not raise again, and end as a process killed by SIGPIPE would.
        _silence_stdout()
        return _BROKEN_PIPE
    except OSError as exc:  # stdout closed, or a full disk (/dev/full)
        _silence_stdout()
        why = os.strerror(exc.errno) if exc.errno else type(exc).__name__
        print(f"websearch: error: the output could not be written ({why})", file=sys.stderr)
        return 1


def _silence_stdout() -> None:
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no stdout descriptor at all
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C: end now, as the shell expects (130), without waiting on any thread."""
    _flush_quietly()
    os._exit(128 + signal.SIGINT)


def _flush_quietly() -> None:
    for stream in (sys.stdout, sys.stderr):  # None when the process started without one
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()


def entry() -> NoReturn:
    """The ``websearch`` command: ``main``, then the process ends with its status at once."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted)
    status = main()
    _flush_quietly()
    os._exit(status)


def _emit(result: tuple[int, str | None]) -> int:
    status, output = result
    if output is not None:
        sys.stdout.write(output + "\n")
        sys.stdout.flush()
    return status


def _serve(args: argparse.Namespace) -> tuple[int, str | None]:
    # One structured line per request from the service; the core's own INFO lines (which
    # carry queries) stay out of a long-running server's log.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("websearch_core").setLevel(logging.WARNING)
    logging.getLogger("websearch_core.server").setLevel(logging.INFO)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # its lines carry query strings
    try:
        from websearch_core.server import ServiceLimits, serve

        given = {
            "max_inflight": args.max_inflight,
            "max_inflight_scrapes": args.max_inflight_scrapes,
            "max_queued": args.max_queued,
            "header_timeout_s": args.header_timeout,
            "body_timeout_s": args.body_timeout,
        }
        limits = ServiceLimits(**{name: v for name, v in given.items() if v is not None})
        serve(args.host, args.port, limits)
    except WebSearchError as exc:
        print(f"websearch: error: {exc}", file=sys.stderr)
        return 2, None
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it handled gracefully
        return 130, None
    return 0, None


def _mcp(args: argparse.Namespace) -> tuple[int, str | None]:
    # stdout belongs to the protocol on stdio: every log line goes to stderr, at
    # WEBSEARCH_LOG_LEVEL (WARNING unless set: the core's INFO lines carry queries and URLs).
    level = os.environ.get("WEBSEARCH_LOG_LEVEL", "").strip().upper() or "WARNING"
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        print("websearch: error: WEBSEARCH_LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR",
              file=sys.stderr)  # fmt: skip
        return 2, None
    logging.basicConfig(level=level, stream=sys.stderr, format="%(name)s %(message)s")
    try:
        import anyio

        from websearch_core import mcp

        session = WebSearch()
        if args.http:
            mcp.run_http(session, args.host, args.port)
        else:
            anyio.run(mcp.run_stdio, session)
    except WebSearchError as exc:
        print(f"websearch: error: {exc}", file=sys.stderr)
        return 2, None
    except KeyboardInterrupt:
        return 130, None
    return 0, None


def _run(args: argparse.Namespace) -> tuple[int, str | None]:
    if args.command == "serve":
        return _serve(args)
    if args.command == "mcp":
        return _mcp(args)
    if not _writable_stdout():
        print(
            "websearch: error: the output could not be written (stdout is closed)", file=sys.stderr
        )
        return 1, None
    try:
        with WebSearch(
            args.provider if args.command == "search" else None,
            fetch_allow_private=getattr(args, "allow_private", None),
        ) as ws:
            if args.command == "providers":
                lines = [f"{name}: configured" for name in ws.providers]
                lines += [
                    f"{name}: not configured ({why})" for name, why in ws.unconfigured.items()
                ]
                return 0, "\n".join(lines)
            if args.command == "fetch":
                page = ws.fetch(args.url, max_bytes=args.max_bytes, offset=args.offset)
                return 0, page.model_dump_json(indent=2) if args.json else page.render()
            response = ws.search(
                " ".join(args.query),
                count=args.count,
                site=args.site,
                exclude_domains=args.exclude,
                freshness=args.freshness,
                include_answer=args.answer,
                read=args.read,
                read_tokens=args.read_tokens,
            )
    except WebSearchError as exc:
        refused = ConfigurationError | InvalidRequestError | URLRefusedError
        status = 2 if isinstance(exc, refused) else 1
        if getattr(args, "json", False):  # a program reads stdout: the error as JSON there
            return status, json.dumps({"error": exc.as_dict()}, indent=2)
        print(f"websearch: error: {exc}", file=sys.stderr)
        return status, None
    except KeyboardInterrupt:
        return 130, None
    return 0, response.model_dump_json(indent=2) if args.json else response.render()


def _writable_stdout() -> bool:
    """Whether there is a stdout to write to at all (a search is not worth its cost else)."""
    if sys.stdout is None:
        return False
    try:
        descriptor = sys.stdout.fileno()
    except (OSError, ValueError):  # an in-memory stream (a test's, a notebook's): writable
        return True
    try:
        os.fstat(descriptor)
    except OSError:  # the descriptor is closed
        return False
    return True


if __name__ == "__main__":
    entry()
