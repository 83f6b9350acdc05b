"""The suite cannot reach anything but loopback, at two depths.

scripts/test.sh runs pytest in a network namespace with only ``lo`` (when one can be made):
there, the operating system itself has no route off the machine, for Python and for code in
any other language. Inside the process, an audit hook and two patches (tests/conftest.py)
refuse any lookup or connect that is not loopback, with a message naming the culprit. The
address used here is TEST-NET-1 (RFC 5737), which no network routes, so even a broken guard
would not reach anyone.
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys

import pytest

from tests.conftest import OFFLINE

UNROUTABLE = ("192.0.2.1", 9)


def test_a_raw_connect_off_loopback_is_refused_in_process() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        with pytest.raises(OSError, match="tests must stay on loopback"):
            sock.connect(UNROUTABLE)


def test_a_lookup_off_loopback_is_refused_in_process() -> None:
    with pytest.raises(OSError, match="tests must stay on loopback"):
        socket.getaddrinfo("example.com", 443)


def test_loopback_still_works() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=2):
            pass


def test_the_operating_system_has_no_route_off_loopback() -> None:
    if OFFLINE != "netns":
        # Outside scripts/test.sh's namespace there is nothing to check; under CI the promise
        # must be checked, so a CI machine where the namespace could not be made fails here.
        if os.environ.get("CI"):
            pytest.fail(
                "CI must run the suite in a network namespace with only loopback: "
                "scripts/test.sh could not create one (unshare --net --map-root-user failed)"
            )
        pytest.skip("not run by scripts/test.sh in a namespace")
    probe = (
        "import socket\n"
        "s = socket.socket()\n"
        "s.settimeout(2)\n"
        "try:\n"
        f"    s.connect({UNROUTABLE!r})\n"
        "except OSError as exc:\n"
        "    print(exc.errno)\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=30, check=True
    )
    assert done.stdout.strip() == str(errno.ENETUNREACH)
