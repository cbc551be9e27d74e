"""``opencode mcp serve`` while its own MCP servers connect, die and restart (issue 33): the first
``tools/list`` is whole, a server's tools outlive its restarts, and a call starts it again."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
import tomli_w
from _mcp_servers import DEMO_SERVER, EXIT_SERVER
from _processes import run_opencode, wait_gone
from _serve import run, stdio_session, text_of

#: What the demo server brings (it declares resources, so the three resource tools come with it).
DEMO_TOOLS = {
    "demo_echo",
    "demo_add_tool",
    "list_mcp_resources",
    "list_mcp_resource_templates",
    "read_mcp_resource",
}
#: Starts of the whole-list test (``OPENCODE_TEST_SERVE_STARTS`` for more).
STARTS = int(os.environ.get("OPENCODE_TEST_SERVE_STARTS", "20"))


def configure(project_dir: Path, **servers: list[str]) -> None:
    tables = {name: {"type": "local", "command": command} for name, command in servers.items()}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": tables}))


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _demo_server_pids() -> list[int]:
    """The demo servers started by an ``opencode mcp serve`` child of this test process."""
    found = []
    for child in _children(os.getpid()):
        for grandchild in _children(child):
            try:
                argv = Path(f"/proc/{grandchild}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(DEMO_SERVER).encode() in argv:
                found.append(grandchild)
    return found


@pytest.mark.slow
@pytest.mark.timeout(30 * STARTS)  # each start is a serve process and a server process
def test_the_first_tools_list_is_whole_on_every_start(project_dir: Path, env: dict[str, str]) -> None:
    configure(project_dir, demo=[sys.executable, str(DEMO_SERVER), "stdio"])

    async def once() -> set[str]:
        async with stdio_session(project_dir, env) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    missing = [sorted(DEMO_TOOLS - run(once())) for _ in range(STARTS)]

    assert [m for m in missing if m] == []  # every first list had every tool


@pytest.mark.slow
def test_a_server_killed_under_serve_keeps_its_tools_and_the_next_call_starts_it_again(
    project_dir: Path, env: dict[str, str]
) -> None:
    configure(project_dir, demo=[sys.executable, str(DEMO_SERVER), "stdio"])

    async def main() -> None:
        async with stdio_session(project_dir, env, "--yes") as client:
            assert {tool.name for tool in (await client.list_tools()).tools} >= DEMO_TOOLS
            [pid] = _demo_server_pids()
            os.kill(pid, signal.SIGKILL)
            assert wait_gone(pid)
            after = {tool.name for tool in (await client.list_tools()).tools}
            assert after >= DEMO_TOOLS  # its tools stay while it is down
            result = await client.call_tool("demo_echo", {"text": "again"})
            assert not result.is_error and text_of(result) == "again"
            [restarted] = _demo_server_pids()
            assert restarted != pid
            listed = await client.call_tool("list_mcp_resources", {})
            assert not listed.is_error and "demo://readme" in text_of(listed)

    run(main())


def test_a_tool_of_a_server_that_failed_to_start_says_what_happened(
    project_dir: Path, env: dict[str, str]
) -> None:
    configure(project_dir, broken=[sys.executable, str(EXIT_SERVER)])

    ran = run_opencode(project_dir, env, "tools", "run", "broken_ok")

    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert "No tool named" not in ran.stderr
    assert 'MCP server "broken" failed: exited with code 1' in ran.stderr
    assert "exit_server: cannot start: this server always fails" in ran.stderr  # its stderr line
