"""``websearch serve`` as a real process on loopback: started with the environment a test
gives it (nothing else of the test's), stopped with SIGTERM, its log kept for assertions."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

__all__ = ["Service", "free_port", "run_service"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Service:
    url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    _kept: str | None = None

    def log(self) -> str:
        """Everything the process wrote (kept after it stopped)."""
        if self._kept is not None:
            return self._kept
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, as an orchestrator stops it; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


@contextmanager
def run_service(
    environment: dict[str, str], *args: str, startup_s: float = 30.0, cwd: str | None = None
) -> Iterator[Service]:
    """``cwd``: where the process starts, so its ``websearch_core`` is the one found there
    (``-m`` puts the working directory first on its path): a benchmark runs an older tree."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", tempfile.gettempdir()),
        "PYTHONUNBUFFERED": "1",
        **environment,
    }
    with tempfile.TemporaryDirectory(prefix="websearch-serve-") as tmp:
        log_path = Path(tmp) / "service.log"
        port = free_port()
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "websearch_core.cli", "serve", "--port", str(port), *args],
                env=env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        service = Service(f"http://127.0.0.1:{port}", process, log_path)
        try:
            deadline = time.monotonic() + startup_s
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"websearch serve exited:\n{service.log()[-3000:]}")
                try:
                    # Up once it answers; 503 is a service that says it cannot serve (no key).
                    if httpx.get(f"{service.url}/healthz", timeout=1).status_code in (200, 503):
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"websearch serve did not start:\n{service.log()[-3000:]}")
                time.sleep(0.05)
            yield service
        finally:
            service.stop()
            service._kept = service.log()
