"""The worker threads sync tools run in: owned by the project, warm, concurrent, stopped on close."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from opencode_cli import ToolCall, hookimpl, tool
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
