"""The call path stays correct as it gets cheaper (issue 19): where a sync tool runs, how an abort reaches
a running call without tasks of its own, and ids drawn in one step."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli import AbortSignal, tool
from opencode_cli.contract import unless_aborted
from opencode_cli.errors import AbortedError
from opencode_cli.truncate import ascending_id


def where_it_ran(blocking: bool, tool_context: Any) -> tuple[int, int]:
    """``(thread the tool ran on, thread of the event loop)``."""
    seen: dict[str, int] = {}

    @tool(blocking=blocking)
    def probe(text: str) -> str:
        """Say which thread this is."""
        seen["tool"] = threading.get_ident()
        return text

    async def main() -> None:
        seen["loop"] = threading.get_ident()
        result = await probe.run({"text": "hi"}, tool_context())
        assert result.output == "hi"

    asyncio.run(main())
    return seen["tool"], seen["loop"]


def test_a_plain_function_runs_in_a_worker_thread(tool_context: Any) -> None:
    ran, loop = where_it_ran(True, tool_context)
    assert ran != loop


def test_a_non_blocking_function_runs_on_the_loop(tool_context: Any) -> None:
    ran, loop = where_it_ran(False, tool_context)
    assert ran == loop


def test_an_abort_ends_a_waiting_call_as_aborted(tool_context: Any) -> None:
    async def main() -> None:
        signal = AbortSignal()
        ctx = tool_context(abort=signal)
        started = asyncio.Event()

        async def forever() -> None:
            started.set()
            await asyncio.Event().wait()

        call = asyncio.ensure_future(unless_aborted(forever(), ctx))
        await started.wait()
        threading.Thread(target=signal.abort).start()  # from another thread, as a Ctrl-C handler would
        with pytest.raises(AbortedError):
            await call
        assert not call.cancelled()

    asyncio.run(main())


def test_an_abort_after_the_call_ended_cancels_nothing_later(tool_context: Any) -> None:
    async def main() -> str:
        signal = AbortSignal()
        value = await unless_aborted(asyncio.sleep(0, result="done"), tool_context(abort=signal))
        signal.abort()  # schedules nothing for this task: the callback was taken back when the call ended
        for _ in range(5):  # turns of the loop in which a stray cancellation would land
            await asyncio.sleep(0)
        return value

    assert asyncio.run(main()) == "done"


def test_a_cancellation_from_outside_stays_a_cancellation(tool_context: Any) -> None:
    async def main() -> None:
        started = asyncio.Event()

        async def forever() -> None:
            started.set()
            await asyncio.Event().wait()

        call = asyncio.ensure_future(unless_aborted(forever(), tool_context()))
        await started.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(main())


def test_work_that_turns_the_abort_into_its_own_error_ends_as_aborted(tool_context: Any) -> None:
    async def main() -> int:
        signal = AbortSignal()
        started = asyncio.Event()

        async def tidy_then_fail() -> None:  # a library that wraps a cancellation in an error of its own
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                raise RuntimeError("connection reset") from None

        call = asyncio.ensure_future(unless_aborted(tidy_then_fail(), tool_context(abort=signal)))
        await started.wait()
        signal.abort()
        with pytest.raises(AbortedError):
            await call
        return call.cancelling()  # the abort's cancellation was taken back: none is left pending

    assert asyncio.run(main()) == 0


def test_already_aborted_before_the_call(tool_context: Any) -> None:
    async def main() -> None:
        signal = AbortSignal()
        signal.abort()

        async def forever() -> None:
            await asyncio.Event().wait()

        with pytest.raises(AbortedError):
            await unless_aborted(forever(), tool_context(abort=signal))

    asyncio.run(main())


def test_on_abort_calls_back_once_and_can_be_taken_back() -> None:
    signal = AbortSignal()
    calls: list[str] = []
    remove = signal.on_abort(lambda: calls.append("kept"))
    taken_back = signal.on_abort(lambda: calls.append("removed"))
    taken_back()
    signal.abort()
    signal.abort()
    assert calls == ["kept"]
    signal.on_abort(lambda: calls.append("late"))  # already aborted: called at once
    assert calls == ["kept", "late"]
    remove()


ID = re.compile(r"^call_[0-9a-f]{12}[0-9A-Za-z]{14}$")


@given(st.integers(min_value=1, max_value=50))
def test_ids_have_opencodes_shape_and_ascend(count: int) -> None:
    ids = [ascending_id("call") for _ in range(count)]
    assert all(ID.match(value) for value in ids)
    assert [value[:17] for value in ids] == sorted(value[:17] for value in ids)
    assert len(set(ids)) == count


def test_the_random_tail_uses_every_base62_character() -> None:
    seen: set[Any] = set()
    for _ in range(400):
        seen.update(ascending_id("x")[-14:])
    assert len(seen) == 62


# -- each thing once (issue 42) ----------------------------------------------------------------------------


def test_a_dispatched_call_checks_readiness_once_and_runs_in_the_generation_it_awaited(
    project_dir: Any, env: dict[str, str]
) -> None:
    """A call's readiness (the generation, its registry built on the loop) is awaited once, also by a
    session that has handed nothing out yet (main awaited it three times: the dispatch, the offer, the
    run)."""
    from opencode_cli import Project, ToolCall

    awaited: list[Any] = []

    class Counted(Project):
        async def ready(self) -> Any:
            generation = await super().ready()
            awaited.append(generation)
            return generation

    (project_dir / "notes.txt").write_text("a note\n")

    async def main() -> Any:
        async with Counted(project_dir, env=env) as project, project.session() as session:
            part = await session.dispatch(ToolCall("read", {"filePath": "notes.txt"}))
            return part, project.generation

    part, generation = asyncio.run(main())
    assert part.status == "completed", part.text
    assert awaited == [generation]
