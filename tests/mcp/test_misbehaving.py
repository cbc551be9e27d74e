"""MCP servers as people really run them: one that never answers, hangs, is killed, exits at start,
prints garbage, or is slow to stop (issue 26, items 0-5). Every server here is a real process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from _mcp_servers import SERVERS, alive, wait_gone
from _processes import run_opencode

from opencode_cli import ToolError
from opencode_cli.project import Project
from opencode_cli.session import Decision

ProjectFactory = Callable[..., Project]
NEVER_ANSWERS = ["sleep", "1000"]


def configure(project_dir: Path, **servers: dict[str, Any]) -> None:
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": servers}))


def local(command: list[str], **extra: Any) -> dict[str, Any]:
    return {"type": "local", "command": command, **extra}


def run(coroutine: Any, timeout: float = 120) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def allow(request: Any) -> Decision:
    return Decision("once")


async def until(check: Callable[[], Any], timeout: float = 30) -> Any:
    """Wait for ``check()`` to be truthy (it follows an event of another process), within ``timeout``."""
    async with asyncio.timeout(timeout):
        while not (found := check()):
            await asyncio.sleep(0.02)
    return found


def processes_in(directory: Path, name: str) -> list[int]:
    """Live processes whose command line has ``name`` and that run in ``directory``."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if name.encode() not in Path(f"/proc/{entry}/cmdline").read_bytes():
                continue
            if Path(os.readlink(f"/proc/{entry}/cwd")) != directory:
                continue
        except OSError:
            continue
        if alive(int(entry)):
            found.append(int(entry))
    return found


def status_of(project: Project, name: str) -> Any:
    return next(s for s in project.mcp.statuses() if s.name == name)


# -- 0. a server that never answers initialize ---------------------------------------------------------


@pytest.mark.slow
def test_a_server_that_never_answers_fails_at_its_timeout_and_is_stopped(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str]
) -> None:
    configure(project_dir, mute=local(NEVER_ANSWERS, timeout=3000), demo=local(demo_server_command))
    project = make_project()

    async def main() -> Any:
        async with project:
            await project.open()
            statuses = {s.name: s for s in project.mcp.statuses()}
            assert not processes_in(project_dir, "sleep")  # its process group is gone already
            return statuses

    statuses = run(main())  # on main: asyncio.run never returned
    assert (statuses["mute"].status, statuses["mute"].error) == ("failed", "no answer within 3 s")
    assert statuses["demo"].status == "connected"
    assert wait_gone_all(processes_in(project_dir, "sleep"))


def wait_gone_all(pids: list[int]) -> bool:
    return all(wait_gone(pid) for pid in pids)


@pytest.mark.slow
def test_cli_commands_exit_with_a_server_that_never_answers(
    project_dir: Path, env: dict[str, str], demo_server_command: list[str]
) -> None:
    configure(project_dir, mute=local(NEVER_ANSWERS, timeout=3000), demo=local(demo_server_command))
    env = {**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    listed = run_opencode(project_dir, env, "mcp", "list")  # on main: never exits (the run times out)
    assert listed.returncode == 0, listed.stderr
    assert "error: no answer within 3 s" in listed.stdout
    tools = run_opencode(project_dir, env, "tools", "list", "--json")
    assert tools.returncode == 0 and "demo_echo" in tools.stdout
    ran = run_opencode(project_dir, env, "tools", "run", "demo_echo", "text=hi", "--yes")
    assert (ran.returncode, ran.stdout) == (0, "hi\n")
    assert "Traceback" not in listed.stderr + tools.stderr + ran.stderr
    assert wait_gone_all(processes_in(project_dir, "sleep"))


@pytest.mark.slow
def test_mcp_serve_waits_out_a_hung_servers_start_timeout_then_serves_the_others_whole(
    project_dir: Path, env: dict[str, str], demo_server_command: list[str]
) -> None:
    """The first ``tools/list`` waits for the servers still connecting, each within its start timeout
    (issue 33: the first list is whole): a server that never answers costs its timeout once, and the
    list that follows already holds the quick server's tools, with no later list needed."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    configure(project_dir, mute=local(NEVER_ANSWERS, timeout=3000), demo=local(demo_server_command))
    script = Path(sys.executable).parent / "opencode"
    params = StdioServerParameters(
        command=str(script),
        args=["mcp", "serve", "--yes"],
        env={**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"},
        cwd=project_dir,
    )

    async def main() -> list[str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            async with asyncio.timeout(60):
                await session.initialize()
                return [tool.name for tool in (await session.list_tools()).tools]

    names = run(main(), timeout=120)
    assert "demo_echo" in names
    assert not any(name.startswith("mute_") for name in names)
    assert wait_gone_all(processes_in(project_dir, "sleep"))


# -- 1. a hung server -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_stopped_server_times_out_by_name_is_stopped_and_started_afresh(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str]
) -> None:
    configure(project_dir, demo=local(demo_server_command, timeout=6000))
    project = make_project()

    async def main() -> None:
        async with project:
            await project.open()
            first = status_of(project, "demo").pid
            assert first and alive(first)
            async with project.session(prompt=allow) as session:
                # the whole group: the server (the pid shown) runs under a launcher, which leads its group
                group = os.getpgid(first)
                assert group != first
                os.killpg(group, signal.SIGSTOP)
                try:
                    with pytest.raises(ToolError) as timed_out:
                        await session.execute("demo_echo", {"text": "hello?"})
                finally:
                    if alive(first):
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(group, signal.SIGCONT)
                assert str(timed_out.value) == (
                    'MCP server "demo" did not answer tools/call within 6 s (mcp.demo.timeout)'
                )
                status = status_of(project, "demo")
                assert status.status == "failed" and "nor a ping" in (status.error or "")
                assert wait_gone(first)  # its process group was stopped
                assert (await session.execute("demo_echo", {"text": "back"})).output == "back"
                second = status_of(project, "demo").pid
                assert second and second != first

    run(main())


@pytest.mark.slow
def test_a_tool_that_never_returns_times_out_and_the_server_stays(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str]
) -> None:
    configure(project_dir, demo=local(demo_server_command, timeout=6000))
    project = make_project()

    async def main() -> None:
        async with project:
            await project.open()
            pid = status_of(project, "demo").pid
            async with project.session(prompt=allow) as session:
                with pytest.raises(ToolError) as timed_out:
                    await session.execute("demo_slow", {"seconds": 3600})
                assert str(timed_out.value) == (
                    'MCP server "demo" did not answer tools/call within 6 s (mcp.demo.timeout)'
                )
                # it answered the ping: still connected, the same process
                assert (status_of(project, "demo").status, status_of(project, "demo").pid) == (
                    "connected",
                    pid,
                )
                assert (await session.execute("demo_echo", {"text": "still"})).output == "still"

    run(main())


# -- 2. a server that exits mid-session; 4. one that exits at start -------------------------------------


def test_the_status_follows_the_process_and_the_next_call_reconnects(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str]
) -> None:
    configure(project_dir, demo=local(demo_server_command))
    project = make_project()

    async def main() -> None:
        async with project:
            await project.open()
            first = status_of(project, "demo").pid
            async with project.session(prompt=allow) as session:
                assert (await session.execute("demo_leave", {"code": 4})).output == "bye"
                status = await until(lambda: (s := status_of(project, "demo")).status == "failed" and s)
                assert status.error == "exited with code 4; stderr: demo: leaving with code 4"
                assert (
                    "demo_echo" in project.generation.offer().ids()
                )  # its tools stay while it is not running
                # the next call starts it again, without failing first
                assert (await session.execute("demo_echo", {"text": "again"})).output == "again"
                assert status_of(project, "demo").pid not in (None, first)

    run(main())


def test_a_server_that_exits_at_start_gives_its_code_and_stderr(
    make_project: ProjectFactory, project_dir: Path, exit_server_command: list[str]
) -> None:
    configure(project_dir, exits=local(exit_server_command))
    project = make_project()

    async def main() -> Any:
        async with project:
            await project.open()
            return status_of(project, "exits")

    status = run(main())
    assert (status.status, status.error) == (
        "failed",
        "exited with code 1; stderr: exit_server: cannot start: this server always fails",
    )


# -- 3. garbage on stdout ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_garbage_on_stdout_is_one_line_never_a_traceback(
    project_dir: Path, env: dict[str, str], demo_server_command: list[str], garbage_server_command: list[str]
) -> None:
    configure(
        project_dir,
        demo=local(demo_server_command),
        garbage=local(garbage_server_command),  # 30 s to start: it must fail long before
        noisy=local([sys.executable, str(SERVERS / "noisy_server.py")]),
    )
    env = {**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    listed = run_opencode(project_dir, env, "mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stderr
    servers = {s["name"]: s for s in json.loads(listed.stdout)["servers"]}
    assert servers["demo"]["status"] == "connected"
    assert (servers["garbage"]["status"], servers["garbage"]["error"]) == (
        "failed",
        "printed 'garbage line 1: this is not JSON {' on stdout, which is not JSON-RPC",
    )
    note = (
        'MCP server "noisy" printed a line that is not JSON-RPC on stdout: '
        "'noisy server 1.0 starting, this line is not JSON-RPC'"
    )
    assert servers["noisy"]["status"] == "connected" and servers["noisy"]["notes"] == [note]
    assert listed.stderr.splitlines() == [f"warning: {note}"]  # once, one line
    shown = run_opencode(project_dir, env, "mcp", "list")
    assert f"note: {note}" in shown.stdout and "Traceback" not in shown.stderr
    ran = run_opencode(project_dir, env, "tools", "run", "noisy_echo", "text=fine", "--yes")
    assert (ran.returncode, ran.stdout) == (0, "fine\n") and "Traceback" not in ran.stderr


# -- 5. closing ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_servers_are_stopped_all_at_once(
    make_project: ProjectFactory, project_dir: Path, tmp_path: Path
) -> None:
    log = tmp_path / "stubborn.log"
    log.touch()
    names = [f"s{number}" for number in range(5)]
    stubborn = str(SERVERS / "stubborn_server.py")
    configure(project_dir, **{name: local([sys.executable, stubborn, name]) for name in names})
    project = make_project(extra_env={"STUBBORN_LOG": str(log)})

    async def main() -> list[int]:
        async with project:
            await project.open()
            pids = [status_of(project, name).pid for name in names]
            assert all(pids), project.mcp.statuses()
            return pids  # type: ignore[return-value]

    pids = run(main())
    assert all(wait_gone(pid) for pid in pids)
    events = log.read_text().split("\n")[:-1]
    # every server's stdin was closed before any was sent SIGTERM: the stops ran side by side
    first_term = min(i for i, event in enumerate(events) if event.startswith("term"))
    assert sorted(e for e in events[:first_term] if e.startswith("eof")) == [f"eof {n}" for n in names]
