"""The project owns what runs long: a service a tool starts lives once across calls, sessions and reloads,
and is stopped when the project closes (also when the ``opencode`` process gets SIGINT or SIGTERM)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _processes import alive, wait_gone

from opencode_cli.project import Project

#: A tool file whose tool talks to a long-lived child process, a service of the project.
ECHO_TOOL = '''
import sys
from pathlib import Path

from opencode_cli import ToolContext, tool
from opencode_cli.services import ProcessService

SERVER = (
    "import sys\\n"
    "for line in sys.stdin:\\n    sys.stdout.write(line.upper())\\n    sys.stdout.flush()\\n"
)


def _echo_server():
    return ProcessService([sys.executable, "-u", "-c", SERVER], name="echo")


@tool
async def default(text: str, ctx: ToolContext, pidfile: str = "", hang: bool = False) -> str:
    """Say the text back in capitals, through the echo service."""
    service = await ctx.project.services.get("echo", _echo_server)
    process = service.process
    if pidfile:
        Path(pidfile).write_text(str(process.pid))
    if hang:
        import asyncio

        await asyncio.sleep(3600)
    process.stdin.write(text.encode() + b"\\n")
    await process.stdin.drain()
    answer = await process.stdout.readline()
    return f"{answer.decode().strip()} pid={process.pid}"
'''

HELLO_TOOL = '''
from opencode_cli import tool


@tool
def default(name: str) -> str:
    """Say hello."""
    return "hello " + name
'''


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def pid_of(output: str) -> int:
    return int(output.rsplit("pid=", 1)[1])


@pytest.fixture
def tools(project_dir: Path) -> Path:
    folder = project_dir / ".opencode" / "tool"
    write(folder / "echo.py", ECHO_TOOL)
    write(folder / "hello.py", HELLO_TOOL)
    return folder


def test_a_service_starts_once_over_100_calls_in_two_sessions_and_a_reload(
    make_project: Callable[..., Project], tools: Path
) -> None:
    project = make_project()
    pids: set[int] = set()

    async def main() -> None:
        async with project:
            watcher = project.watch()
            async with project.session() as first, project.session() as second:
                for index in range(50):
                    for session in (first, second):
                        result = await session.execute("echo", {"text": f"call {index}"})
                        assert result.output.startswith(f"CALL {index} pid=")
                        pids.add(pid_of(result.output))
                unrelated = HELLO_TOOL.replace('"hello "', '"hi "').replace("Say hello.", "Say hi.")
                write(tools / "hello.py", unrelated)
                report = watcher.reload([tools / "hello.py"])
                assert report is not None and [change.id for change in report.changed] == ["hello"]
                after = await first.execute("echo", {"text": "after the reload"})
                pids.add(pid_of(after.output))
                assert (await second.execute("hello", {"name": "x"})).output == "hi x"
            [status] = project.services.statuses()
            assert status.name == "echo" and status.state == "running"
            [pid] = pids
            assert alive(pid)

    asyncio.run(asyncio.wait_for(main(), 120))
    [pid] = pids
    assert wait_gone(pid)  # async with project: stopped at exit


def test_the_sync_facade_keeps_services_between_calls_and_close_stops_them(
    make_project: Callable[..., Project], tools: Path
) -> None:
    project = make_project()
    first = pid_of(project.run_tool("echo", {"text": "a"}).output)
    second = pid_of(project.run_tool("echo", {"text": "b"}).output)
    assert first == second and alive(first)
    project.close()
    assert wait_gone(first)
    project.close()  # twice is fine


def test_1000_run_tool_calls_leave_no_subscriber_behind(make_project: Callable[..., Project]) -> None:
    project = make_project()
    (project.directory / "notes.txt").write_text("hi\n")
    before = project.permissions.subscribers
    for _ in range(1000):
        project.run_tool("read", {"filePath": "notes.txt"})
    assert project.permissions.subscribers == before == 0
    assert project.permissions.pending() == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_the_cli_stops_the_service_on_a_signal(
    cli_env: dict[str, str], tmp_path: Path, signum: int, code: int
) -> None:
    project = Path(cli_env["project"])
    write(project / ".opencode" / "tool" / "echo.py", ECHO_TOOL)
    pidfile = tmp_path / "service.pid"
    script = Path(sys.executable).parent / "opencode"
    env = {k: v for k, v in cli_env.items() if k != "project"}
    process = subprocess.Popen(
        [str(script), "tools", "run", "echo", "text=x", f"pidfile={pidfile}", "hang:=true"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
        service_pid = int(pidfile.read_text())
        assert alive(service_pid)
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr
    assert wait_gone(service_pid)
