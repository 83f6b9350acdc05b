"""Run a REAL searx 0.17.0 server on loopback, offline, for tests.

searx lives in its own Python 3.8 venv (installed by ``scripts/install-searx.sh``)
because 0.17 does not run on modern Pythons.  It is configured with exactly
one engine, searx's built-in ``json_engine``, pointed at an HTTP server the
test runs on 127.0.0.1, so a search never leaves the machine.

Notes on searx 0.17 (read from its source):

* settings come only from the file named by ``SEARX_SETTINGS_PATH`` (else the
  bundled settings.yml with ~80 internet engines -- never let that happen);
  the file replaces the defaults wholesale, so every key searx reads is set.
* it always serves ``format=json`` (``search.formats`` is SearXNG-only), so
  there is no way to switch JSON off.
* outgoing requests go through ``requests`` with ``trust_env``: with no
  ``outgoing.proxies`` the environment's proxy variables would apply, so they
  are removed from the subprocess.  0.17 has no private-address filter.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["ENGINE_NAME", "find_searx_python", "run_searx", "searx_unavailable_reason"]

#: name and ``!`` shortcut of the single engine in the generated settings
ENGINE_NAME = "localjson"
ENGINE_SHORTCUT = "lj"

# Kept in sync with scripts/install-searx.sh (same variable, same default).
_MARKER = ".websearch-pack-searx-installed"


def _venv_dir() -> Path:
    default = Path.home() / ".cache" / "websearch-pack" / "searx-venv"
    return Path(os.environ.get("SEARX_VENV") or default)


def find_searx_python() -> str | None:
    """The searx venv's python, or None if searx is not (fully) installed.

    The marker is written last by the install script, so its presence means
    the install finished and passed its import check.
    """
    venv = _venv_dir()
    python = venv / "bin" / "python"
    if (venv / _MARKER).is_file() and os.access(python, os.X_OK):
        return str(python)
    return None


def searx_unavailable_reason() -> str | None:
    """Why searx cannot run here (for pytest.skip/fail), or None if it can."""
    if find_searx_python() is not None:
        return None
    return (
        f"searx 0.17 venv not installed at {_venv_dir()} "
        "(run `bash scripts/install-searx.sh`; it needs a python3.8)"
    )


def _free_port() -> int:
    # Ask the kernel for an unused port; searx binds it a moment later (the
    # tiny race is handled by retrying in run_searx).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings(engine_url: str, port: int, request_timeout: float) -> dict[str, Any]:
    """A complete searx 0.17 settings document with one local JSON engine."""
    return {
        "general": {"debug": False, "instance_name": "searx-test"},
        "search": {
            "safe_search": 0,
            "autocomplete": "",  # no autocomplete backend (they are internet)
            "default_lang": "",
            # 0 = never suspend the engine after an error, so one test that
            # makes the local engine fail does not poison the next searches.
            "ban_time_on_fail": 0,
            "max_ban_time_on_fail": 0,
        },
        "server": {
            "port": port,
            "bind_address": "127.0.0.1",
            "secret_key": "websearch-pack-test-secret",
            "base_url": False,
            "image_proxy": False,
            "http_protocol_version": "1.0",
        },
        "ui": {
            "static_path": "",
            "templates_path": "",
            "default_theme": "oscar",
            "default_locale": "",
            "theme_args": {"oscar_style": "logicodev"},
        },
        "outgoing": {
            "request_timeout": request_timeout,
            "useragent_suffix": "",
            "pool_connections": 100,
            "pool_maxsize": 10,
        },
        "engines": [
            {
                "name": ENGINE_NAME,
                "engine": "json_engine",
                "shortcut": ENGINE_SHORTCUT,
                "categories": "general",
                # json_engine fills {query} with the url-encoded query
                # ("hello world" -> "hello+world").
                "search_url": engine_url + ("&" if "?" in engine_url else "?") + "q={query}",
                # Paths into the served document:
                #   {"results": [{"url": ..., "title": ..., "content": ...}]}
                "results_query": "results",
                "url_query": "url",
                "title_query": "title",
                "content_query": "content",
                "timeout": request_timeout,
            }
        ],
        # Read by /config and the preferences code; must exist.
        "locales": {"en": "English"},
        "doi_resolvers": {"oadoi.org": "https://oadoi.org/"},
        "default_doi_resolver": "oadoi.org",
    }


def _child_env(settings_path: str) -> dict[str, str]:
    env = dict(os.environ)
    # requests honours these (trust_env); the engine is on 127.0.0.1 and
    # nothing else may be contacted.
    for key in list(env):
        if key.lower() in {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}:
            del env[key]
    # Our interpreter's paths must not leak into the 3.8 venv; SEARX_SECRET /
    # SEARX_BIND_ADDRESS would override the settings file.
    for key in ("PYTHONPATH", "PYTHONHOME", "SEARX_SECRET", "SEARX_BIND_ADDRESS"):
        env.pop(key, None)
    env["SEARX_SETTINGS_PATH"] = settings_path
    # Debug mode would start werkzeug's reloader (a second process that
    # outlives terminate()) and load engines only in that child.
    env["SEARX_DEBUG"] = "0"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _get_config(port: int) -> dict[str, Any] | None:
    """GET /config (plain http.client: no proxies), None while not up."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/config")
        resp = conn.getresponse()
        body = resp.read()
        return json.loads(body) if resp.status == 200 else None
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        conn.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def run_searx(
    engine_url: str,
    *,
    request_timeout: float = 5.0,
    startup_timeout: float = 30.0,
) -> Iterator[str]:
    """Run searx 0.17 on 127.0.0.1 with one JSON engine at ``engine_url``.

    ``engine_url`` is requested as ``engine_url + "?q=<url-encoded query>"``
    (``&q=`` if it already has a query string)
    and must answer ``{"results": [{"url", "title", "content"}, ...]}``.
    Yields the base URL (``http://127.0.0.1:PORT``); the server is stopped on
    exit.  Raises RuntimeError if searx is not installed or does not come up
    (with its stderr).
    """
    python = find_searx_python()
    if python is None:
        raise RuntimeError(searx_unavailable_reason())

    with tempfile.TemporaryDirectory(prefix="searx-test-") as tmp:
        settings_path = os.path.join(tmp, "settings.yml")
        log_path = os.path.join(tmp, "searx.log")
        last_error = ""
        for _attempt in range(3):  # retry only if the picked port got taken
            port = _free_port()
            # JSON is valid YAML, and searx reads it with yaml.safe_load.
            with open(settings_path, "w", encoding="utf-8") as f:
                json.dump(_settings(engine_url, port, request_timeout), f, indent=1)
            # stdout/stderr go to a file, not a pipe: werkzeug logs every
            # request and a full, unread pipe would block the server.
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    [python, "-c", "from searx.webapp import run; run()"],
                    env=_child_env(settings_path),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=tmp,
                )
            try:
                deadline = time.monotonic() + startup_timeout
                config: dict[str, Any] | None = None
                while proc.poll() is None and time.monotonic() < deadline:
                    config = _get_config(port)
                    if config is not None:
                        break
                    time.sleep(0.1)
                output = Path(log_path).read_text(errors="replace")
                if config is None:
                    state = (
                        f"exited with code {proc.returncode}"
                        if proc.poll() is not None
                        else f"not answering after {startup_timeout:.0f} s"
                    )
                    last_error = f"searx {state}; its output:\n{output[-4000:]}"
                    if "Address already in use" in output:
                        continue
                    raise RuntimeError(last_error)
                # searx logs and carries on when an engine fails to load, so
                # make sure ours is really there.
                names = [e.get("name") for e in config.get("engines", [])]
                if ENGINE_NAME not in names:
                    raise RuntimeError(
                        f"searx is up but engine {ENGINE_NAME!r} is not loaded "
                        f"(engines: {names}); its output:\n{output[-4000:]}"
                    )
                yield f"http://127.0.0.1:{port}"
                return
            finally:
                _stop(proc)
        raise RuntimeError(last_error)
