"""Sessions connect the configured MCP servers however they are opened, and a project closed while a
server is still connecting does not wait out the stop bound (issue 36, finding 10). Real servers."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from _mcp_servers import alive

from opencode_cli.mcp import connection
from opencode_cli.project import Project

ProjectFactory = Callable[..., Project]


def configure(project_dir: Path, **servers: dict[str, Any]) -> None:
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": servers}))


def test_a_plain_with_session_offers_the_servers_tools(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str]
) -> None:
    configure(project_dir, demo={"type": "local", "command": demo_server_command})
    with make_project() as project, project.session() as session:
        names = {tool.name for tool in session.resolve()}
        assert "demo_echo" in names
        assert session.run_tool("demo_echo", {"text": "hi"}).output == "hi"


def test_a_plain_with_session_inside_async_code_connects_too(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str]
) -> None:
    configure(project_dir, demo={"type": "local", "command": demo_server_command})
    project = make_project()

    async def main() -> set[str]:
        async with project:
            with project.session() as session:  # no await here: the connection starts as a task
                async with asyncio.timeout(60):
                    while not project.mcp.connected("demo"):
                        await asyncio.sleep(0.02)
                return {tool.name for tool in session.resolve()}

    assert "demo_echo" in asyncio.run(main())


def test_closing_while_a_server_connects_does_not_wait_for_it(
    make_project: ProjectFactory, project_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The server never answers ``initialize`` (its timeout is far away); with the stop bounds made an
    hour, a close that waited for the connecting task would not return within the test's bound."""
    monkeypatch.setattr(connection, "STOP_TIMEOUT", 3600.0)
    started = tmp_path / "started"
    script = f"import pathlib, os, time; pathlib.Path({str(started)!r}).write_text(str(os.getpid())); "
    script += "time.sleep(1000)"
    command = [sys.executable, "-c", script]
    configure(project_dir, mute={"type": "local", "command": command, "timeout": 600000})
    project = make_project()
    project.services.stop_timeout = 3600.0

    async def main() -> int:
        async with project:
            opening = asyncio.ensure_future(project.open())
            async with asyncio.timeout(60):
                while not started.exists() or not started.read_text():
                    await asyncio.sleep(0.02)
            async with asyncio.timeout(60):  # far below the stop bounds
                await project.aclose()
            await asyncio.gather(opening, return_exceptions=True)
            return int(started.read_text())

    pid = asyncio.run(main())

    async def gone() -> None:
        async with asyncio.timeout(30):
            while alive(pid):
                await asyncio.sleep(0.02)

    asyncio.run(gone())  # its process went with it
