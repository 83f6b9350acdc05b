"""The one deadline, as values: what each network step is allowed, and when it is refused.

The hostile-server tests show a trickling server is cut at the deadline; these pin down the
arithmetic under them, without a clock race: a step gets the shorter of its own timeout and
the time left, nothing once the deadline has passed, and a scope never extends an outer one
or leaks into another thread or task.
"""

from __future__ import annotations

import asyncio
import threading
import time

import httpcore
import pytest

from tests.support.http_server import Reply, ScriptedServer
from websearch_core import JailPolicy, WebSearch
from websearch_core.net.deadline import bounded_timeout, deadline_scope, seconds_left


def test_outside_any_scope_a_step_keeps_its_own_timeout() -> None:
    assert seconds_left() is None
    assert bounded_timeout(5.0, httpcore.ReadTimeout) == 5.0
    assert bounded_timeout(None, httpcore.ReadTimeout) is None


def test_inside_a_scope_a_step_gets_the_shorter_of_its_timeout_and_the_time_left() -> None:
    with deadline_scope(time.monotonic() + 10):
        assert bounded_timeout(5.0, httpcore.ReadTimeout) == 5.0
        longer = bounded_timeout(30.0, httpcore.ReadTimeout)
        unbounded = bounded_timeout(None, httpcore.ReadTimeout)
        assert longer is not None
        assert unbounded is not None
        assert 9.0 < longer <= 10.0
        assert 9.0 < unbounded <= 10.0


@pytest.mark.parametrize("past", [0.0001, 0.5, 5.0])
@pytest.mark.parametrize("expired", [httpcore.ReadTimeout, httpcore.ConnectTimeout])
def test_once_the_deadline_has_passed_a_step_is_refused(
    past: float, expired: type[Exception]
) -> None:
    with deadline_scope(time.monotonic() - past), pytest.raises(expired):
        bounded_timeout(5.0, expired)


def test_with_less_than_a_second_left_a_step_still_runs() -> None:
    with deadline_scope(time.monotonic() + 0.8):
        left = bounded_timeout(5.0, httpcore.ReadTimeout)
        assert left is not None
        assert 0.3 < left <= 0.8


def test_a_nested_scope_never_extends_the_outer_one() -> None:
    outer = time.monotonic() + 5
    with deadline_scope(outer):
        with deadline_scope(outer + 100):
            left = seconds_left()
            assert left is not None
            assert left <= 5
        with deadline_scope(outer - 4):
            left = seconds_left()
            assert left is not None
            assert left <= 1
        left = seconds_left()
        assert left is not None
        assert 4 < left <= 5
    assert seconds_left() is None


def test_a_scope_belongs_to_its_own_thread_and_task() -> None:
    seen: list[float | None] = []
    with deadline_scope(time.monotonic() + 5):
        worker = threading.Thread(target=lambda: seen.append(seconds_left()))
        worker.start()
        worker.join()

        async def other_task() -> float | None:
            return seconds_left()

        async def main() -> list[float | None]:
            with deadline_scope(time.monotonic() + 100):
                inside = asyncio.create_task(other_task())  # copies the context: sees 100
                await inside
            return [inside.result(), await asyncio.create_task(other_task())]

        tasks = asyncio.run(main())
    assert seen == [None]
    assert tasks[0] is not None
    assert tasks[1] is not None
    assert tasks[0] <= 5  # the outer scope still bounds it
    assert tasks[1] <= 5


def test_a_slow_page_within_its_deadline_arrives(server: ScriptedServer) -> None:
    server.script("/slow", Reply(200, "late but in time", delay_s=1.2))
    ws = WebSearch(fetch_policy=JailPolicy(allow_private=True), fetch_timeout=3)
    assert ws.fetch(f"{server.url}/slow").content == "late but in time"
