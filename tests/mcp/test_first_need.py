"""A library session sees MCP tools without ``await project.open()`` (issue 26, item 9)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomli_w
from _mcp_servers import alive

from opencode_cli.project import Project
from opencode_cli.session import Decision, ToolCall

ProjectFactory = Callable[..., Project]


async def allow(request: Any) -> Decision:
    return Decision("once")


def configure(project_dir: Path, command: list[str]) -> None:
    (project_dir / "opencode.toml").write_text(
        tomli_w.dumps({"mcp": {"demo": {"type": "local", "command": command}}})
    )


def test_a_session_connects_the_servers_on_first_need(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str]
) -> None:
    configure(project_dir, demo_server_command)
    project = make_project()

    async def main() -> Any:
        async with project, project.session(prompt=allow) as session:
            offered = [tool.name for tool in session.resolve()]
            part = await session.dispatch(ToolCall("demo_echo", json.dumps({"text": "no ritual"})))
            [status] = project.mcp.statuses()
            return offered, part, status

    offered, part, status = asyncio.run(asyncio.wait_for(main(), 90))
    assert "demo_echo" in offered
    assert (part.tool, part.status, part.output) == ("demo_echo", "completed", "no ritual")
    assert status.status == "connected" and status.pid is not None and not alive(status.pid)


def test_a_dispatch_alone_connects_its_server(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str]
) -> None:
    configure(project_dir, demo_server_command)
    project = make_project()

    async def main() -> Any:
        async with project:
            session = project.session(prompt=allow)  # never entered: the call is the first need
            return await session.dispatch(ToolCall("demo_echo", json.dumps({"text": "first"})))

    part = asyncio.run(asyncio.wait_for(main(), 90))
    assert (part.tool, part.status, part.output) == ("demo_echo", "completed", "first")
