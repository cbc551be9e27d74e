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
def test_another_host_needs_a_token_keeps_host_checks_and_warns(project: Path, env: dict[str, str]) -> None:
    import httpx

    token_env = {**env, "OPENCODE_SERVE_TOKEN": "s3cret"}
    served = HttpServer(project, token_env, "--host", "0.0.0.0", "--allow-host", "tools.example")
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }

    def post(**headers: str) -> int:
        base = {"accept": "application/json, text/event-stream", "authorization": "Bearer s3cret"}
        return httpx.post(served.url, json=init, headers={**base, **headers}, timeout=30).status_code

    try:
        assert "warning: serving on 0.0.0.0" in served.log.read_text()
        assert post() == 200
        assert post(host="tools.example") == 200  # named with --allow-host
        assert post(authorization="Bearer wrong") == 401
        assert post(authorization="") == 401
        assert post(host="evil.example") != 200  # DNS rebinding: an unknown Host is refused
        assert post(origin="http://evil.example") != 200
        assert post(origin=f"http://127.0.0.1:{served.port}") == 200
    finally:
        served.stop()


def test_a_non_loopback_host_without_a_token_is_a_usage_error(project: Path, env: dict[str, str]) -> None:
    env = {key: value for key, value in env.items() if key != "OPENCODE_SERVE_TOKEN"}
    done = subprocess.run(
        [*SERVE, "--transport", "http", "--host", "0.0.0.0", "--port", "0"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "needs a bearer token: pass --token or set OPENCODE_SERVE_TOKEN" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--transport", "sse"], "--transport is stdio or http"),
        (["--transport", "http", "--session", "s1"], "--session is for --transport stdio"),
        (["--port", "4000"], "--host and --port are for --transport http"),
        (["--transport", "http", "--port", "70000"], "--port must be between 0 and 65535"),
        (["--agent", "nobody"], "no agent named 'nobody'"),
        (["--token", "t0k"], "--allow-host and --token are for --transport http"),
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

    async def main() -> Any:
        async with served.session() as session:
            await session.list_tools()  # the client checks results against the listing it has
            call = asyncio.ensure_future(
                session.call_tool("bash", {"command": "echo $$ > shell.pid; sleep 60", "description": "Wait"})
            )
            while not pid_file.exists() or not pid_file.read_text().strip():
                await asyncio.sleep(0.05)
            os.kill(served.process.pid, signal.SIGTERM)  # the server only, not its process group
            await asyncio.to_thread(served.process.wait, 20)
            return await asyncio.wait_for(call, 20)

    try:
        result = run(main())
        assert served.process.returncode == 0, served.log.read_text()
        assert "User aborted the command" in text_of(result)  # the call was aborted and answered
        assert wait_gone(int(pid_file.read_text())), "a command outlived the server"
        assert "Traceback" not in served.log.read_text()
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


# -- state belongs to whom it says ---------------------------------------------------------------------


def test_sessionless_clients_share_no_doom_loop(server: HttpServer) -> None:
    async def one_read(_: int) -> Any:
        async with server.modern_session() as session:
            assert session.discover_result is not None  # the single-exchange revision, no MCP session id
            return await session.call_tool("read", {"filePath": "file3.txt"})

    async def main() -> list[Any]:
        return [await one_read(index) for index in range(3)]

    for result in run(main()):
        assert not result.is_error, text_of(result)
        assert "content of file 3" in text_of(result)


def test_three_identical_calls_of_one_client_are_three_steps(server: HttpServer) -> None:
    async def main() -> list[Any]:
        results = []
        async with server.modern_session() as modern, server.session() as legacy:
            for session in (modern, legacy):
                for _ in range(3):
                    results.append(await session.call_tool("read", {"filePath": "file4.txt"}))
        return results

    results = run(main())
    assert [r.is_error for r in results] == [False] * 6, [text_of(r) for r in results]


def test_an_always_answer_allows_only_the_client_that_gave_it(server: HttpServer) -> None:
    asked: dict[str, int] = {"first": 0, "second": 0}

    def answering(name: str) -> Any:
        async def answer(context: Any, params: Any) -> ElicitResult:
            asked[name] += 1
            return ElicitResult(action="accept", content={"decision": "always"})

        return answer

    bash = {"command": "printf hello", "description": "Print"}

    async def main() -> None:
        async with server.session(elicitation_callback=answering("first")) as first:
            assert not (await first.call_tool("bash", bash)).is_error
            assert not (await first.call_tool("bash", bash)).is_error  # "always": not asked again
            async with server.session(elicitation_callback=answering("second")) as second:
                assert not (await second.call_tool("bash", bash)).is_error

    run(main())
    assert asked == {"first": 1, "second": 1}


def test_a_directory_with_a_name_that_is_not_utf8_is_listed_as_glob_lists_it(
    server: HttpServer, project: Path
) -> None:
    """The name shows U+FFFD for its byte that is not UTF-8 (as ``glob`` lists it), and that form read
    back reaches the file."""
    folder = project / "odd"
    folder.mkdir()
    (folder / "fine.txt").write_text("x")
    with open(os.path.join(os.fsencode(folder), b"bad-\xff.txt"), "w") as out:
        out.write("odd content\n")

    async def main() -> tuple[Any, Any]:
        async with server.session() as session:
            listed = await session.call_tool("read", {"filePath": "odd"})
            return listed, await session.call_tool("read", {"filePath": "odd/bad-\ufffd.txt"})

    result, back = run(main())
    assert not result.is_error, text_of(result)
    assert "bad-\ufffd.txt" in text_of(result) and "fine.txt" in text_of(result)
    assert not back.is_error and "1: odd content" in text_of(back)


def test_a_body_over_the_limit_is_refused_and_the_server_serves_on(server: HttpServer) -> None:
    import httpx

    from opencode_cli.mcp.serve.limits import MAX_REQUEST_BYTES

    body = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"x": "'
        + b"x" * MAX_REQUEST_BYTES
        + b'"}}'
    )
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    refused = httpx.post(server.url, content=body, headers=headers, timeout=60)
    assert refused.status_code == 413
    assert len(refused.content) < 1000  # nothing of the request is echoed

    async def main() -> Any:
        async with server.session() as session:
            return await session.call_tool("read", {"filePath": "file1.txt"})

    assert "content of file 1" in text_of(run(main()))
