"""The worker threads sync tools run in: owned by the project, warm, concurrent, stopped on close."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from opencode_cli import ToolCall, hookimpl, tool
from opencode_cli.context import ToolContext
from opencode_cli.project import Project
from opencode_cli.workers import Workers

ProjectFactory = Callable[..., Project]

BOUND = 60.0  # seconds: a generous bound, reached only when something hangs


def _project(make_project: ProjectFactory, *tools: Any) -> Project:
    class Plugin:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            for each in tools:
                register(each)

    return make_project(plugins=[("workers-probe", Plugin())])


def _workers_alive() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "opencode-tool"]


def test_calls_one_after_another_stay_on_one_warm_thread(make_project: ProjectFactory) -> None:
    """A sync call that follows one just returned lands on the worker that ran it (no new thread, no
    other idle worker woken), and the worker belongs to the project: closing it ends the thread."""
    threads: list[int] = []

    @tool
    def where(n: int) -> str:
        """Say which thread ran the call."""
        threads.append(threading.get_ident())
        return str(n)

    project = _project(make_project, where)

    async def main() -> list[str]:
        async with project.session() as session:
            parts = [await session.dispatch(ToolCall("where", {"n": n})) for n in range(30)]
            return [part.text for part in parts]

    assert asyncio.run(main()) == [str(n) for n in range(30)]
    assert len(set(threads)) == 1 and threads[0] != threading.get_ident()
    assert project.workers.threads == 1
    project.close()
    assert project.workers.threads == 0 and not _workers_alive()


@pytest.mark.parametrize("calls", [8, 40])
def test_calls_at_once_each_get_a_thread_up_to_the_limit(make_project: ProjectFactory, calls: int) -> None:
    """Sync calls at once run at once (each waits for all eight of a group to have started: a pool that
    ran fewer at a time would never get there); beyond :data:`~opencode_cli.workers.LIMIT` they queue."""
    barrier = threading.Barrier(8, timeout=BOUND)
    started: list[int] = []

    @tool
    def meet(n: int) -> str:
        """Wait for seven others."""
        started.append(n)
        barrier.wait()
        return str(n)

    project = _project(make_project, meet)

    async def main() -> list[Any]:
        async with project.session() as session:
            calls_at_once = [session.dispatch(ToolCall("meet", {"n": n})) for n in range(calls)]
            return await asyncio.wait_for(asyncio.gather(*calls_at_once), BOUND)

    parts = asyncio.run(main())
    assert sorted(part.text for part in parts) == sorted(str(n) for n in range(calls))
    assert project.workers.threads <= 32


def test_a_closed_pool_refuses_work_and_a_worker_idle_too_long_ends() -> None:
    workers = Workers(limit=4, idle_seconds=0.05, name="idle-probe")
    ended = threading.Event()

    async def main() -> int:
        result = await workers.run(lambda: 41 + 1)
        thread = next(t for t in threading.enumerate() if t.name == "idle-probe")
        await asyncio.to_thread(thread.join, BOUND)  # it ends itself once idle past its time
        ended.set()
        return result

    assert asyncio.run(main()) == 42 and ended.is_set() and workers.threads == 0
    workers.close()
    with pytest.raises(RuntimeError, match="worker threads are stopped"):
        asyncio.run(workers.run(lambda: None))


def test_an_error_and_context_variables_cross_the_hop() -> None:
    import contextvars

    var: contextvars.ContextVar[str] = contextvars.ContextVar("probe", default="unset")
    workers = Workers()

    def fail() -> None:
        raise ValueError(f"seen {var.get()}")

    async def main() -> None:
        var.set("the caller's")
        with pytest.raises(ValueError, match="seen the caller's"):
            await workers.run(fail)

    try:
        asyncio.run(main())
    finally:
        workers.close()
    assert workers.threads == 0


# -- interrupted sync calls ----------------------------------------------------------------------------


def test_an_interrupted_sync_tool_is_reported_only_once_its_thread_has_returned(
    make_project: ProjectFactory,
) -> None:
    """The tool sees ``ctx.abort`` and finishes the write it is in; the call's report comes after that
    write, never before it (nothing is written after the interruption was reported)."""
    from opencode_cli.context import AbortSignal
    from opencode_cli.errors import INTERRUPTED

    events: list[str] = []
    started = threading.Event()

    @tool
    def slow_write(name: str, ctx: ToolContext) -> str:
        """Write a file once the call is aborted, in steps."""
        started.set()
        ctx.abort.wait(BOUND)
        with open(ctx.resolve(name), "w") as out:
            for _ in range(20):  # a write in progress is finished, one step after another
                out.write("x" * 1000)
                out.flush()
                time.sleep(0.005)
        events.append("written")
        return "done"

    project = _project(make_project, slow_write)

    async def main() -> Any:
        async with project.session() as session:
            signal = AbortSignal()
            call = asyncio.ensure_future(
                session.dispatch(ToolCall("slow_write", {"name": "out.txt"}), abort=signal)
            )
            await asyncio.to_thread(started.wait, BOUND)
            signal.abort()
            part = await asyncio.wait_for(call, BOUND)
            events.append("reported")
            return part

    part = asyncio.run(main())
    assert part.status == "error" and part.error == INTERRUPTED
    assert events == ["written", "reported"]
    assert (project.directory / "out.txt").stat().st_size == 20_000


def test_aborted_sync_calls_that_never_return_do_not_delay_fresh_calls(make_project: ProjectFactory) -> None:
    """40 sync calls deaf to their abort (blocked on an event) are aborted: 64 fresh calls all complete
    while those are still blocked. The aborted ones that ran are reported as abandoned after the grace;
    the ones still queued never run."""
    from opencode_cli.context import AbortSignal
    from opencode_cli.errors import INTERRUPTED
    from opencode_cli.workers import LIMIT

    release = threading.Event()
    arrived: list[int] = []
    all_in = threading.Event()

    @tool
    def stuck(n: int) -> str:
        """Block until released."""
        arrived.append(n)
        if len(arrived) == LIMIT:
            all_in.set()
        release.wait(BOUND)
        return "late"

    @tool
    def quick(n: int) -> str:
        """Answer at once."""
        return str(n)

    project = _project(make_project, stuck, quick)
    project.workers.grace = 0.05

    async def main() -> tuple[list[Any], list[Any], bool]:
        async with project.session() as session:
            signals = [AbortSignal() for _ in range(40)]
            aborted = [
                asyncio.ensure_future(session.dispatch(ToolCall("stuck", {"n": n}), abort=signal))
                for n, signal in enumerate(signals)
            ]
            await asyncio.to_thread(all_in.wait, BOUND)  # the pool is full of them; the rest queue
            for signal in signals:
                signal.abort()
            fresh = [session.dispatch(ToolCall("quick", {"n": n})) for n in range(64)]
            done = await asyncio.wait_for(asyncio.gather(*fresh), BOUND / 2)
            still_blocked = not release.is_set() and len(arrived) == LIMIT
            reports = await asyncio.wait_for(asyncio.gather(*aborted), BOUND)
            release.set()
            return done, reports, still_blocked

    try:
        done, reports, still_blocked = asyncio.run(main())
    finally:
        release.set()
    assert sorted(int(part.text) for part in done) == list(range(64)) and still_blocked
    abandoned = [part for part in reports if "left running" in (part.error or "")]
    assert len(abandoned) == LIMIT and all(part.error.startswith(INTERRUPTED) for part in abandoned)
    assert [part.error for part in reports if part not in abandoned] == [INTERRUPTED] * (40 - LIMIT)
    assert len(arrived) == LIMIT  # the queued ones never ran
    assert project.workers.abandoned == LIMIT


def test_a_cancelled_host_task_is_the_calls_abort(make_project: ProjectFactory) -> None:
    """A host whose request is cancelled as a task (an MCP client's cancel) awaits the call through
    :func:`~opencode_cli.loops.abort_on_cancel`: the tool sees ``ctx.abort``, and the cancellation
    reaches the host once the call has ended."""
    from opencode_cli.context import AbortSignal
    from opencode_cli.loops import abort_on_cancel

    seen: list[str] = []
    started = threading.Event()

    @tool
    def attentive(ctx: ToolContext) -> str:
        """Wait for the abort."""
        started.set()
        seen.append("aborted" if ctx.abort.wait(BOUND) else "timed out")
        return "stopped"

    project = _project(make_project, attentive)

    async def main() -> AbortSignal:
        async with project.session() as session:
            signal = AbortSignal()
            host = asyncio.ensure_future(
                abort_on_cancel(session.execute("attentive", {}, abort=signal), signal)
            )
            await asyncio.to_thread(started.wait, BOUND)
            host.cancel()
            with pytest.raises(asyncio.CancelledError):
                await host
            assert seen == ["aborted"]  # the thread returned before the host heard of the end
            return signal

    assert asyncio.run(main()).reason == "cancelled"


def test_ctrl_c_in_run_tool_is_the_calls_abort(make_project: ProjectFactory) -> None:
    """``Session.run_tool`` from sync code: a SIGINT while it waits sets the call's abort, the tool sees
    it and returns, and only then does ``KeyboardInterrupt`` reach the caller."""
    import os
    import signal

    seen: list[str] = []
    started = threading.Event()

    @tool
    def attentive(ctx: ToolContext) -> str:
        """Wait for the abort."""
        started.set()
        seen.append("aborted" if ctx.abort.wait(BOUND) else "timed out")
        return "stopped"

    project = _project(make_project, attentive)

    def interrupt() -> None:
        started.wait(BOUND)
        os.kill(os.getpid(), signal.SIGINT)

    helper = threading.Thread(target=interrupt)
    helper.start()
    with project.session() as session, pytest.raises(KeyboardInterrupt):
        session.run_tool("attentive", {})
    helper.join()
    assert seen == ["aborted"]
    part = session.messages[-1].parts[-1]
    assert part.status == "error" and part.error == "[Tool execution was interrupted]"
