"""Interrupts of ``opencode mcp serve`` through one door: a client's ``notifications/cancelled`` is the
call's abort (the tool sees ``ctx.abort``), and SIGTERM answers every call in flight, bash included,
before the server exits (stdio and HTTP)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from _processes import wait_gone
from _serve import SERVE, HttpServer, run, text_of
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

WAITER = '''
import asyncio
from pathlib import Path

from opencode_cli import ToolContext, tool


@tool
async def default(ctx: ToolContext) -> str:
    """Wait until the call is aborted."""
    Path("started.txt").write_text("yes")
    try:
        await asyncio.sleep(60)
    finally:
        Path("seen.txt").write_text(f"aborted={ctx.abort.aborted} reason={ctx.abort.reason}")
    return "never"
'''

#: Calls in flight when the server is stopped.
IN_FLIGHT = 11
#: Half the commands ignore SIGTERM: bash kills them only after its grace period.
TRAP = "trap '' TERM; "


@pytest.fixture
def project(project_dir: Path) -> Path:
    tools = project_dir / ".opencode" / "tool"
    tools.mkdir(parents=True)
    (tools / "waiter.py").write_text(WAITER)
    return project_dir


def test_a_clients_cancel_is_the_calls_abort(project: Path, env: dict[str, str]) -> None:
    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], env=env, cwd=project)

    async def main() -> Any:
        with (project.parent / "serve.log").open("a") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                call = asyncio.ensure_future(session.call_tool("waiter", {}))
                while not (project / "started.txt").exists():
                    await asyncio.sleep(0.02)
                call.cancel()  # the SDK's client sends notifications/cancelled
                with pytest.raises(asyncio.CancelledError):
                    await call
                while not (project / "seen.txt").exists():
                    await asyncio.sleep(0.02)
                return await session.call_tool("read", {"filePath": "seen.txt"})

    after = run(main())
    assert (project / "seen.txt").read_text() == "aborted=True reason=cancelled"
    assert not after.is_error  # the server serves on


def _bash_calls(session: ClientSession, project: Path) -> list[asyncio.Future[Any]]:
    return [
        asyncio.ensure_future(
            session.call_tool(
                "bash",
                {"command": f"{TRAP * (n % 2)}echo $$ > shell{n}.pid; sleep 60", "description": f"Wait {n}"},
            )
        )
        for n in range(IN_FLIGHT)
    ] + [asyncio.ensure_future(session.call_tool("waiter", {}))]


async def _all_started(project: Path) -> list[int]:
    pid_files = [project / f"shell{n}.pid" for n in range(IN_FLIGHT)]
    while (
        not all(p.exists() and p.read_text().strip() for p in pid_files)
        or not (project / "started.txt").exists()
    ):
        await asyncio.sleep(0.05)
    return [int(p.read_text()) for p in pid_files]


def _check_answers(results: list[Any]) -> None:
    assert len(results) == IN_FLIGHT + 1
    for result in results[:IN_FLIGHT]:
        assert "User aborted the command" in text_of(result), text_of(result)
    assert "interrupted" in text_of(results[-1]).lower(), text_of(results[-1])


@pytest.mark.slow
def test_sigterm_over_stdio_answers_every_call_in_flight(project: Path, env: dict[str, str]) -> None:
    params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], "--yes"], env=env, cwd=project)
    pids: list[int] = []

    async def main() -> list[Any]:
        with (project.parent / "serve.log").open("a") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                calls = _bash_calls(session, project)
                pids.extend(await _all_started(project))
                server = _server_pid(project)
                os.kill(server, signal.SIGTERM)
                return list(await asyncio.wait_for(asyncio.gather(*calls), 30))

    results = run(main())
    _check_answers(results)
    for pid in pids:
        assert wait_gone(pid, 10.0), "a command outlived the server"


def _server_pid(project: Path) -> int:
    """The pid of the ``opencode mcp serve`` process serving ``project`` (a child of this test)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if b"opencode_cli" in argv and b"serve" in argv and cwd == str(project):
            return int(entry.name)
    raise AssertionError("no server process found")


@pytest.mark.slow
def test_sigterm_over_http_answers_every_call_in_flight(project: Path, env: dict[str, str]) -> None:
    served = HttpServer(project, env, "--yes")
    pids: list[int] = []

    async def main() -> list[Any]:
        async with served.session() as session:
            await session.list_tools()
            calls = _bash_calls(session, project)
            pids.extend(await _all_started(project))
            os.kill(served.process.pid, signal.SIGTERM)  # the server only, not its process group
            return list(await asyncio.wait_for(asyncio.gather(*calls), 30))

    try:
        results = run(main())
        assert served.process.wait(20) == 0, served.log.read_text()
        _check_answers(results)
        for pid in pids:
            assert wait_gone(pid, 10.0), "a command outlived the server"
        assert "Traceback" not in served.log.read_text()
    finally:
        if served.process.poll() is None:
            served.stop()
