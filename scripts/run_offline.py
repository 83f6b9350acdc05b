"""Run a command where only loopback exists: inside a fresh network namespace, bring ``lo`` up.

``scripts/test.sh`` starts this under ``unshare --net --map-root-user``: the namespace has no
interface but ``lo`` (and that one down), so once ``lo`` is up, 127.0.0.1 works and nothing
else is reachable, for Python, for ddgs's Rust client, for any subprocess. Then the command
replaces this process. ``WEBSEARCH_TESTS_OFFLINE=netns`` tells the tests where they run.
"""

from __future__ import annotations

import fcntl
import os
import socket
import struct
import sys

_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(probe, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | _IFF_UP))


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: run_offline.py COMMAND [ARGS...]")
    interfaces = [name for _, name in socket.if_nameindex()]
    if interfaces != ["lo"]:
        sys.exit(f"run_offline.py: expected a namespace with only lo, found {interfaces}")
    loopback_up()
    os.environ["WEBSEARCH_TESTS_OFFLINE"] = "netns"
    os.execvp(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
