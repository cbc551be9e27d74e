"""Issue 42 item 2: an MCP server that connects is built into a generation off the serving loop, and
the watcher's offer is a session's, ``async def tool_definition`` hooks included."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import tomli_w

from opencode_cli import hookimpl


class Marking:
    """An async ``tool_definition`` hook that marks every description."""

    @hookimpl
    async def tool_definition(self, tool_id, model, output) -> None:
        output.description = f"[marked] {output.description}"


class Holding:
    """A sync ``tool_definition`` hook that holds the builder's offer of the server's tools while ``gate``
    is shut. Sync code with no loop calls a hook with async implementations on the project's portal:
    that is where the builder's offer calls it (a session's offer calls it on the session's loop)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()

    @hookimpl
    def tool_definition(self, tool_id, model, output) -> None:
        held = threading.current_thread().name == "opencode-portal" and tool_id.startswith("demo_")
        if held and not self.gate.is_set():
            self.entered.set()
            self.gate.wait(60)  # a bound for the failure, not a measure


def test_a_server_connecting_is_built_off_the_loop_and_watched_as_sessions_see_it(
    make_project, project_dir: Path, demo_server_command: list[str]
) -> None:
    (project_dir / "opencode.toml").write_text(
        tomli_w.dumps({"mcp": {"demo": {"type": "local", "command": demo_server_command}}})
    )
    (project_dir / "notes.txt").write_text("still served\n")
    holding = Holding()
    project = make_project(plugins=[("marking", Marking()), ("holding", holding)])

    async def main() -> None:
        async with project.watch() as watcher:
            await project.ready()
            opening = asyncio.ensure_future(project.open())
            # the builder is held inside the watcher's offer of the server's tools, on its thread...
            assert await asyncio.to_thread(holding.entered.wait, 60)
            # ...while this loop opens a session and serves a call: nothing here waits for the build
            async with project.session() as session:
                result = await session.execute("read", {"filePath": str(project_dir / "notes.txt")})
                assert "still served" in result.output
                holding.gate.set()
                await opening
                async with asyncio.timeout(60):  # a bound for the failure, not a measure
                    while "demo_echo" not in watcher.current.tools:
                        await anext(watcher)
                wire = {tool.name: (tool.description, tool.normalized) for tool in await session.aresolve()}
        watched = {tool.id: (tool.description, tool.parameters) for tool in watcher.current.tools.values()}
        watched.pop("question", None)  # offered only to a session someone answers
        assert watched == wire
        assert wire["demo_echo"][0].startswith("[marked] ")  # the async hook, in both

    async def guarded() -> None:
        try:
            await main()
        finally:
            holding.gate.set()  # a failure never leaves the builder held

    asyncio.run(guarded())
