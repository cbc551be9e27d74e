"""One call path (issue 25): hooks run on the caller's loop with no thread per call, a tool is built once
per generation, and the context a tool sees is the same whatever the host."""

from __future__ import annotations

import asyncio
from typing import Any

from opencode_cli import ToolContext, hookimpl, tool
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
    assert project.generations.install(
        project.generations.prepare(["plugin:counts"])
    )  # a reload of that source
    assert asyncio.run(calls(3)) == ["built"] * 3
    assert plugin.builds == 2


def _imports(module: Any) -> set[str]:
    """The modules ``module``'s source imports (relative ones made absolute)."""
    import ast
    import inspect

    found: set[str] = set()
    package = module.__name__.rpartition(".")[0]
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.ImportFrom):
            base = package if node.level else ""
            for _ in range(max(node.level - 1, 0)):
                base = base.rpartition(".")[0]
            name = ".".join(part for part in (base, node.module or "") if part)
            found.update(f"{name}.{alias.name}" for alias in node.names)
            found.add(name)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_policy_imports_no_tool_or_code_mode_module() -> None:
    from opencode_cli import policy

    imported = _imports(policy)
    assert not [name for name in imported if name.startswith(("opencode_cli.tools", "opencode_cli.codemode"))]


def test_no_tool_module_or_the_boundary_branches_on_a_running_loop() -> None:
    """One path: nothing a tool runs asks whether an event loop runs (the loop-less route is gone)."""
    import pkgutil
    import re

    import opencode_cli.boundary
    import opencode_cli.tools

    sources = [inspect_source(opencode_cli.boundary)]
    for info in pkgutil.iter_modules(opencode_cli.tools.__path__):
        sources.append(inspect_source(__import__(f"opencode_cli.tools.{info.name}", fromlist=["_"])))
    pattern = re.compile(r"running_loop\(\)\s*(is|is not|==|!=)|need_loop|loopless|driving\(")
    assert [match.group(0) for text in sources for match in pattern.finditer(text)] == []


def inspect_source(module: Any) -> str:
    import inspect

    return inspect.getsource(module)


def test_closing_a_session_aborts_its_running_calls(make_opencode_project) -> None:
    """A closed session is an abort like any other: the running call sees ``ctx.abort`` and ends as
    interrupted, with its part in a final state."""
    import threading

    started = threading.Event()

    @tool
    def waits(ctx: ToolContext) -> str:
        """Wait for the abort."""
        started.set()
        return "aborted: " + str(ctx.abort.reason) if ctx.abort.wait(60) else "never aborted"

    class Waits:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(waits)

    project = make_opencode_project(("waits", Waits()))

    async def main() -> Any:
        session = project.session()
        call = asyncio.ensure_future(session.dispatch(ToolCall("waits", {})))
        await asyncio.to_thread(started.wait, 60)
        session.close()
        return await call, session.transcript.messages[-1].parts[-1]

    part, recorded = asyncio.run(asyncio.wait_for(main(), 60))
    assert part.status == "error" and part.error == "[Tool execution was interrupted]"
    assert recorded.status == "error"


@tool
def guarded_sync(ctx: ToolContext) -> str:
    """Ask, from a worker thread, then answer."""
    ctx.ask_blocking("guarded", ["*"])
    return "allowed"


@tool
async def guarded_async(ctx: ToolContext) -> str:
    """Ask, on the loop, then answer."""
    await ctx.ask("guarded", ["*"])
    return "allowed"


def test_a_sync_and_an_async_tool_ask_through_the_same_session(
    make_opencode_project, permission_replies
) -> None:
    """The same request reaches the same prompt from both forms (through the portal, as a sync host)."""
    from opencode_cli.testing import ToolRunner

    class Guarded:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(guarded_sync)
            register(guarded_async)

    project = make_opencode_project(("guarded", Guarded()))
    runner = ToolRunner(project, permission_replies).rule("guarded")
    permission_replies.extend(["once", "once", "reject"])
    assert runner("guarded_sync").output == "allowed"
    assert runner("guarded_async").output == "allowed"
    assert (
        runner.dispatch("guarded_sync").text == "The user rejected permission to use this specific tool call."
    )
    assert permission_replies.permissions == ["guarded", "guarded", "guarded"]
