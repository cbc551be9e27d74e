"""``opencode mcp serve`` declares ``logging``: ``logging/setLevel`` works, and what the server says about a
call (start, ask, denial, error, interrupt) reaches the client as ``notifications/message``."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from _serve import run, stdio_session
from mcp.types import ElicitResult


@pytest.fixture
def project(project_dir: Path) -> Path:
    (project_dir / "notes.txt").write_text("alpha\n")
    (project_dir / "opencode.toml").write_text('[permission.bash]\n"*" = "ask"\n"rm *" = "deny"\n')
    return project_dir


def test_set_level_and_log_messages_about_calls(project: Path, env: dict[str, str]) -> None:
    logged: list[tuple[str, dict[str, Any]]] = []

    async def on_log(params: Any) -> None:
        logged.append((params.level, params.data))

    async def decline(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="decline")

    async def main() -> Any:
        async with stdio_session(
            project, env, logging_callback=on_log, elicitation_callback=decline
        ) as session:
            assert session.server_capabilities is not None and session.server_capabilities.logging is not None
            await session.call_tool("read", {"filePath": "notes.txt"})  # at "info": its start is not sent
            assert logged == []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the SDK marks logging deprecated on the newest revision
                await session.set_logging_level("debug")
            await session.call_tool("read", {"filePath": "notes.txt"})
            await session.call_tool("bash", {"command": "echo hi", "description": "Echo"})  # asked, declined
            await session.call_tool("bash", {"command": "rm notes.txt", "description": "Remove"})  # denied
            await session.call_tool("read", {"filePath": "missing.txt"})  # an error
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await session.set_logging_level("error")
            await session.call_tool("read", {"filePath": "notes.txt"})
            await session.call_tool("read", {"filePath": "missing.txt"})
            await session.call_tool("read", {"filePath": 7})  # invalid arguments: an error too

    run(main())
    events = [(level, data["event"], data.get("tool")) for level, data in logged]
    assert events == [
        ("debug", "start", "read"),
        ("debug", "start", "bash"),
        ("info", "ask", None),
        ("warning", "denial", "bash"),
        ("debug", "start", "bash"),
        ("warning", "denial", "bash"),
        ("debug", "start", "read"),
        ("error", "error", "read"),
        ("error", "error", "read"),  # at "error" only errors are sent
        ("error", "error", "read"),  # invalid arguments fail the call: an error (RFC 5424's, as MCP's levels)
    ]
    assert "bash on echo hi" in logged[2][1]["message"]


def test_a_client_of_the_newest_revision_gets_what_its_requests_opt_in_to(
    project: Path, env: dict[str, str]
) -> None:
    from _serve import HttpServer
    from mcp import Client

    served = HttpServer(project, env)
    logged: list[tuple[str, str]] = []

    async def on_log(params: Any) -> None:
        logged.append((params.level, params.data["event"]))

    async def main() -> str:
        async with Client(served.url, log_level="debug", logging_callback=on_log) as client:
            await client.call_tool("read", {"filePath": "missing.txt"})
            return client.protocol_version

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK marks log_level deprecated
            version = run(main())
    finally:
        served.stop()
    assert version == "2026-07-28"
    assert logged == [("debug", "start"), ("error", "error")]
