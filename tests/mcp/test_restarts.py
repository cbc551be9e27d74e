"""A server's tools outlive its restarts (issue 33), in the library: a call made right after the server
died starts it again; a server that never started is offered nothing, and a call of its tool says why."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from _mcp_servers import wait_gone

from opencode_cli.errors import UnavailableToolError
from opencode_cli.project import Project
from opencode_cli.session import Decision

ProjectFactory = Callable[..., Project]


def configure(project_dir: Path, **servers: list[str]) -> None:
    tables = {name: {"type": "local", "command": command} for name, command in servers.items()}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": tables}))


async def allow(request: Any) -> Decision:
    return Decision("once")


def test_a_call_made_right_after_the_server_died_starts_it_again(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str]
) -> None:
    configure(project_dir, demo=demo_server_command)
    project = make_project()

    async def main() -> None:
        async with project:
            await project.open()
            pid = project.mcp.peek("demo").pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            assert wait_gone(pid)  # dead, and this loop has not had a turn to notice it
            async with project.session(prompt=allow) as session:
                result = await session.execute("demo_echo", {"text": "again"})
            assert result.output == "again"
            assert project.mcp.peek("demo").pid not in (None, pid)
            assert "demo_echo" in project.generation.offer().ids()

    asyncio.run(asyncio.wait_for(main(), 120))


@pytest.mark.parametrize("listed", [False, True])
def test_a_server_that_never_started_is_offered_nothing_and_its_tool_says_why(
    make_project: ProjectFactory, project_dir: Path, exit_server_command: list[str], listed: bool
) -> None:
    configure(project_dir, broken=exit_server_command)
    project = make_project()

    async def main() -> None:
        async with project:
            await project.open()
            if listed:
                assert not any(tool_id.startswith("broken_") for tool_id in project.generation.offer().ids())
            async with project.session(prompt=allow) as session:
                with pytest.raises(UnavailableToolError) as raised:
                    await session.execute("broken_ok", {})
            message = str(raised.value)
            assert message.startswith('MCP server "broken" failed: exited with code 1')
            assert "exit_server: cannot start" in message and "No tool named" not in message

    asyncio.run(asyncio.wait_for(main(), 120))
