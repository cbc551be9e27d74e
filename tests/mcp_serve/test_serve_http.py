"""``opencode mcp serve --transport http``: several clients at once, each with its own session, over the
SDK's streamable HTTP client; the bind address."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _processes import wait_gone
from _serve import SERVE, HttpServer, Notes, run, text_of
from mcp.types import ElicitResult

from opencode_cli.cli.app import app


@pytest.fixture
def project(project_dir: Path) -> Path:
    for index in range(20):
        (project_dir / f"file{index}.txt").write_text(f"content of file {index}\n")
    (project_dir / "opencode.toml").write_text('[permission]\nbash = "ask"\n')
    (project_dir / ".opencode" / "tool").mkdir(parents=True)
    return project_dir


@pytest.fixture
def server(project: Path, env: dict[str, str]) -> Iterator[HttpServer]:
    served = HttpServer(project, env, "--allow", "bash=echo *")
    yield served
    served.stop()


def test_calls_over_http(server: HttpServer, project: Path) -> None:
    async def main() -> list[Any]:
        async with server.session() as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert {"read", "grep", "edit", "bash"} <= names and "invalid" not in names
            return [
                await session.call_tool("read", {"filePath": "file1.txt"}),
                await session.call_tool("grep", {"pattern": "file 7"}),
                await session.call_tool(
                    "edit", {"filePath": "file2.txt", "oldString": "content", "newString": "changed"}
                ),
                await session.call_tool("bash", {"command": "echo over http", "description": "Echo"}),
                await session.call_tool("read", {}),
            ]

    read, grep, edit, bash, invalid = run(main())
    assert "1: content of file 1" in text_of(read)
    assert "file7.txt" in text_of(grep)
    assert not edit.is_error and (project / "file2.txt").read_text() == "changed of file 2\n"
    assert "over http" in text_of(bash)
    assert invalid.is_error and "invalid arguments" in text_of(invalid)


@pytest.mark.slow
def test_twenty_concurrent_calls_from_two_clients_nothing_lost(server: HttpServer) -> None:
    async def client(indexes: range) -> list[tuple[int, Any]]:
        async with server.session() as session:
            calls = [
                session.call_tool("read", {"filePath": f"file{i}.txt"})
                if i % 2
                else session.call_tool("bash", {"command": f"echo result {i}", "description": "Echo"})
                for i in indexes
            ]
            return list(zip(indexes, await asyncio.gather(*calls), strict=True))

    async def main() -> list[tuple[int, Any]]:
        first, second = await asyncio.gather(client(range(0, 10)), client(range(10, 20)))
        return first + second

    results = run(main())
    assert len(results) == 20
    for index, result in results:
        assert not result.is_error, text_of(result)
        expected = f"content of file {index}" if index % 2 else f"result {index}"
        assert expected in text_of(result)
    sessions = set(re.findall(r"client connected: .* \(session (ses_\w+)\)", server.log.read_text()))
    assert len(sessions) == 2  # each client its own session


def test_elicitation_and_list_changed_over_http(server: HttpServer, project: Path) -> None:
    notes = Notes()

    async def answer(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"decision": "once"})

    async def main() -> tuple[Any, Any]:
        async with server.session(elicitation_callback=answer, message_handler=notes.handler) as session:
            asked = await session.call_tool("bash", {"command": "printf asked", "description": "Print"})
            await session.list_tools()
            (project / ".opencode" / "tool" / "hello.py").write_text(
                "from opencode_cli import tool\n\n\n@tool\ndef default() -> str:\n"
                '    """Say hello."""\n    return "hello over http"\n'
            )
            await asyncio.wait_for(notes.changed.wait(), 30)
            return asked, await session.call_tool("hello", {})

    asked, hello = run(main())
    assert not asked.is_error and "asked" in text_of(asked)
    assert text_of(hello) == "hello over http"


def test_binds_loopback_by_default(server: HttpServer) -> None:
    listening = Path(f"/proc/{server.process.pid}/net/tcp").read_text()
    port = f"{server.port:04X}"
    local = [line.split()[1] for line in listening.splitlines()[1:] if line.split()[3] == "0A"]
    assert f"0100007F:{port}" in local  # 127.0.0.1 in /proc's byte order, LISTEN state
    assert f"00000000:{port}" not in local


@pytest.mark.slow
def test_another_host_needs_the_flag_and_warns(project: Path, env: dict[str, str]) -> None:
    served = HttpServer(project, env, "--host", "0.0.0.0")
    try:
        assert "warning: serving on 0.0.0.0" in served.log.read_text()
    finally:
        served.stop()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--transport", "sse"], "--transport is stdio or http"),
        (["--transport", "http", "--session", "s1"], "--session is for --transport stdio"),
        (["--port", "4000"], "--host and --port are for --transport http"),
        (["--transport", "http", "--port", "70000"], "--port must be between 0 and 65535"),
        (["--agent", "nobody"], "no agent named 'nobody'"),
    ],
)
def test_bad_options_are_usage_errors(
    args: list[str], message: str, project: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    monkeypatch.chdir(project)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(app, ["mcp", "serve", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_serve_is_listed_in_help() -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["mcp", "--help"])
    assert result.exit_code == 0 and "serve" in result.output


@pytest.mark.slow
def test_sigterm_stops_the_server_and_what_its_calls_started(project: Path, env: dict[str, str]) -> None:
    served = HttpServer(project, env, "--yes")
    pid_file = project / "shell.pid"

    async def main() -> None:
        async with served.session() as session:
            call = asyncio.ensure_future(
                session.call_tool("bash", {"command": "echo $$ > shell.pid; sleep 60", "description": "Wait"})
            )
            while not pid_file.exists() or not pid_file.read_text().strip():
                await asyncio.sleep(0.05)
            os.kill(served.process.pid, signal.SIGTERM)  # the server only, not its process group
            await asyncio.to_thread(served.process.wait, 20)
            call.cancel()

    try:
        run(main())
        assert served.process.returncode == 0, served.log.read_text()
        assert wait_gone(int(pid_file.read_text())), "a command outlived the server"
    finally:
        if served.process.poll() is None:
            served.stop()


@pytest.mark.slow
def test_a_port_in_use_is_a_one_line_error(server: HttpServer, project: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [*SERVE, "--transport", "http", "--port", str(server.port)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert f"error: cannot listen on 127.0.0.1:{server.port}:" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_question_over_http(server: HttpServer) -> None:
    async def answer(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"q1": "Yes"})

    async def main() -> tuple[set[str], Any]:
        async with server.session(elicitation_callback=answer) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            question = {
                "question": "Go on?",
                "header": "Go",
                "options": [{"label": "Yes", "description": "y"}],
            }
            return names, await session.call_tool("question", {"questions": [question]})

    names, result = run(main())
    assert "question" in names
    assert not result.is_error and '"Go on?"="Yes"' in text_of(result)
