"""One call path (issue 25): hooks run on the caller's loop with no thread per call, a tool is built once
per generation, and the context a tool sees is the same whatever the host."""

from __future__ import annotations

import asyncio
from typing import Any

from opencode_cli import hookimpl, tool
from opencode_cli.session import ToolCall


@tool
def shout(text: str) -> str:
    """Repeat the text in capitals."""
    return text.upper()


class Registers:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(shout)


class LogsInAThread:
    """A plugin whose async hook appends to a log through ``asyncio.to_thread`` (an ordinary way to log)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    @hookimpl
    async def tool_execute_before(self, tool: str, args: dict) -> None:
        await asyncio.to_thread(self.lines.append, f"{tool} {args}")


def test_async_hooks_awaiting_to_thread_do_not_deadlock_many_dispatches(make_opencode_project) -> None:
    """More concurrent dispatches than the default executor has threads (at most 32): on main each
    dispatch's pluggy call took a worker thread while its hook waited for another one, and all hung."""
    log = LogsInAThread()
    project = make_opencode_project(("regs", Registers()), ("log", log))
    calls = 40

    async def main() -> list[Any]:
        async with project.session() as session:
            return await asyncio.gather(
                *(session.dispatch(ToolCall("shout", {"text": f"n{i}"})) for i in range(calls))
            )

    parts = asyncio.run(asyncio.wait_for(main(), 60))
    assert [part.output for part in parts] == [f"N{i}" for i in range(calls)]
    assert len(log.lines) == calls
