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


class CountsBuilds:
    """A plugin whose tool is declared with :func:`define`: ``init`` counts how often it is built."""

    def __init__(self) -> None:
        self.builds = 0

    def init(self) -> Any:
        self.builds += 1
        return {"json_schema": {"type": "object", "properties": {}}, "execute": lambda: "built"}

    @hookimpl
    def register_tools(self, register: Any) -> None:
        from opencode_cli import define

        register(define("counted", self.init, description="Say how it was made."))


def test_a_tool_is_built_once_per_generation_and_again_after_a_reload(make_opencode_project) -> None:
    plugin = CountsBuilds()
    project = make_opencode_project(("counts", plugin))

    async def calls(count: int) -> list[str]:
        async with project.session() as session:
            return [(await session.execute("counted", {})).output for _ in range(count)]

    assert asyncio.run(calls(5)) == ["built"] * 5
    assert [d.id for d in project.tools() if d.id == "counted"] == ["counted"]  # listing builds nothing more
    assert plugin.builds == 1
    assert project.install(project.prepare(["plugin:counts"]))  # a reload of that source
    assert asyncio.run(calls(3)) == ["built"] * 3
    assert plugin.builds == 2
