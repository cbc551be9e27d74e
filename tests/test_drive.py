"""The driver of a loop-less call (issue 19): a coroutine runs by hand while it never waits, and on a
loop from the moment it does (opencode_cli.drive)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from opencode_cli.drive import drive
from opencode_cli.loops import driving, is_cancellation, need_loop, offload, running_loop
from opencode_cli.session import Decision


def test_a_coroutine_that_never_waits_completes_without_a_loop() -> None:
    seen: list[Any] = []

    async def inner() -> int:
        seen.append((running_loop(), driving()))
        return 41

    async def work() -> int:
        return await inner() + 1

    assert drive(work()) == 42
    assert seen == [(None, True)]
    assert not driving()


def test_a_bare_yield_steps_it_again_without_a_loop() -> None:
    async def work() -> str:
        await asyncio.sleep(0)  # a bare yield: no loop is needed for it
        return "stepped" if running_loop() is None else "on a loop"

    assert drive(work()) == "stepped"


def test_a_coroutine_that_suspends_finishes_on_a_loop_with_its_value() -> None:
    calls: list[Any] = []

    async def work() -> tuple[Any, Any]:
        before = running_loop()
        await need_loop()
        after = running_loop()
        await asyncio.sleep(0.01)  # a real wait, on the loop
        future = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(future.set_result, "from the loop")
        return before, (after is not None, await future)

    value = drive(work(), on_loop=lambda: calls.append(running_loop() is not None))
    assert value == (None, (True, "from the loop"))
    assert calls == [True]  # on_loop ran once, in the loop


def test_an_error_before_the_suspension_propagates_with_its_type() -> None:
    cleaned: list[str] = []

    async def work() -> None:
        try:
            raise LookupError("before")
        finally:
            cleaned.append("finally")

    with pytest.raises(LookupError, match="before"):
        drive(work(), on_loop=lambda: cleaned.append("a loop was started"))
    assert cleaned == ["finally"]


def test_an_error_after_the_suspension_propagates_with_its_type() -> None:
    async def work() -> None:
        await need_loop()
        await asyncio.sleep(0)
        raise PermissionError("after")

    with pytest.raises(PermissionError, match="after"):
        drive(work())


def test_an_error_thrown_in_by_the_loop_reaches_the_coroutine() -> None:
    caught: list[str] = []

    async def work() -> str:
        await need_loop()
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().call_soon(task.cancel)
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            caught.append("cancelled")
            raise
        return "not reached"

    with pytest.raises(asyncio.CancelledError):
        drive(work())
    assert caught == ["cancelled"]


def test_a_failure_before_the_handover_closes_the_coroutine() -> None:
    cleaned: list[str] = []

    async def work() -> None:
        try:
            await need_loop()
        finally:
            cleaned.append("finally")

    def on_loop() -> None:
        raise OSError("no loop today")

    with pytest.raises(OSError, match="no loop today"):
        drive(work(), on_loop=on_loop)
    assert cleaned == ["finally"]


def test_need_loop_on_a_loop_returns_at_once() -> None:
    async def work() -> bool:
        await need_loop()
        return running_loop() is not None

    assert asyncio.run(work()) is True


def test_offload_runs_inline_without_a_loop_and_in_a_thread_on_one() -> None:
    def where() -> tuple[bool, bool]:
        return threading.current_thread() is threading.main_thread(), driving()

    assert drive(offload(where)) == (True, False)  # inline, and not a driven coroutine's step

    async def on_loop() -> tuple[bool, bool]:
        return await offload(where)

    assert asyncio.run(on_loop()) == (False, False)


def test_is_cancellation_names_only_cancelled_error() -> None:
    assert is_cancellation(asyncio.CancelledError())
    assert not is_cancellation(KeyboardInterrupt())
    assert not is_cancellation(ValueError())


def test_a_read_driven_without_a_loop(make_project: Any, project_dir: Path) -> None:
    (project_dir / "notes.txt").write_text("one\ntwo\n")
    project = make_project()

    async def work() -> Any:
        async with project:
            return await project.arun_tool("read", {"filePath": "notes.txt"})

    result = drive(work())
    assert "1: one" in result.output and "2: two" in result.output


def test_a_read_that_asks_permission_moves_to_a_loop_and_is_answered(
    make_project: Any, project_dir: Path
) -> None:
    (project_dir / ".env").write_text("SECRET=1\n")
    project = make_project()
    asked: list[Any] = []

    async def approve(request: Any) -> Decision:
        asked.append((request.permission, running_loop() is not None))
        return Decision("once")

    async def work() -> Any:
        async with project:
            return await project.arun_tool("read", {"filePath": ".env"}, prompt=approve)

    result = drive(work())
    assert "SECRET=1" in result.output
    assert asked == [("read", True)]  # the prompt ran on the loop the call moved to
