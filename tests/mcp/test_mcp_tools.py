"""MCP servers as tool sources, end to end: real servers (the demo MCPServer over stdio and streamable
HTTP, broken ones, and @modelcontextprotocol/server-everything), through Project, Session and the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from _mcp_servers import alive, wait_gone
from _processes import run_opencode

from opencode_cli import ToolError, hookimpl
from opencode_cli.project import Project
from opencode_cli.session import Decision, ToolCall

ProjectFactory = Callable[..., Project]


def configure(project_dir: Path, **servers: dict[str, Any]) -> None:
    """Write ``[mcp.NAME]`` tables into the project's opencode.toml."""
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": servers}))


def local(command: list[str], **extra: Any) -> dict[str, Any]:
    return {"type": "local", "command": command, **extra}


def run(coroutine: Any, timeout: float = 90) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def allow(request: Any) -> Decision:
    return Decision("once")


@pytest.fixture
def demo(project_dir: Path, demo_server_command: list[str]) -> Path:
    configure(project_dir, demo=local(demo_server_command))
    return project_dir


def test_tools_are_listed_with_ids_sources_and_converted_schemas(
    make_project: ProjectFactory, demo: Path
) -> None:
    project = make_project()

    async def main() -> Any:
        async with project:
            await project.open()
            return project.generation.offer(), project.mcp.statuses()

    offer, [status] = run(main())
    ids = offer.ids()
    assert {"demo_echo", "demo_nested", "demo_image", "demo_fail"} <= set(ids)
    assert {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"} <= set(ids)
    echo = next(d for d in offer.tools if d.id == "demo_echo")
    assert echo.entry.source.as_dict() == {"kind": "mcp", "name": "demo"}
    assert echo.parameters["type"] == "object" and echo.parameters["additionalProperties"] is False
    nested = next(d for d in offer.tools if d.id == "demo_nested").parameters
    assert "$defs" in nested or "definitions" in nested  # passed through, not normalised (core §6.1)
    assert "enum" in json.dumps(nested)
    assert (status.status, status.tools > 5, status.resources >= 3) == ("connected", True, True)


def test_calls_map_results_as_the_spec_says(make_project: ProjectFactory, demo: Path) -> None:
    project = make_project()
    asked: list[Any] = []

    async def prompt(request: Any) -> Decision:
        asked.append(request)
        return Decision("once")

    async def main() -> dict[str, Any]:
        async with project:
            await project.open()
            async with project.session(prompt=prompt, rules=_ask_all()) as session:
                session.resolve()
                parts = {}
                for name, args in [
                    ("demo_echo", {"text": "hi"}),
                    ("demo_image", {}),
                    ("demo_embedded", {}),
                    ("demo_fail", {}),
                    ("demo_fail_silently", {}),
                    ("demo_structured", {}),
                ]:
                    parts[name] = await session.dispatch(ToolCall(name, json.dumps(args)))
                return parts

    parts = run(main())
    assert parts["demo_echo"].status == "completed" and parts["demo_echo"].output == "hi"
    image = parts["demo_image"]
    assert image.output == "an image" and image.attachments[0].mime == "image/png"
    assert image.attachments[0].url.startswith("data:image/png;base64,")
    embedded = parts["demo_embedded"]
    assert embedded.output == (
        "a note\n\n[Binary MCP resource omitted: demo://data.bin (application/octet-stream, 4 B) "
        "is not a supported attachment type]"
    )
    assert [(a.mime, a.filename) for a in embedded.attachments] == [("image/png", "demo://pixel.png")]
    assert parts["demo_fail"].status == "error" and parts["demo_fail"].error == "it broke"
    assert parts["demo_fail_silently"].error == "MCP tool returned an error"
    assert json.loads(parts["demo_structured"].output) == {"answer": 42}
    # each call asked its own permission: the tool id, pattern *
    assert [(r.permission, r.patterns, r.always) for r in asked][:1] == [("demo_echo", ["*"], ["*"])]


def _ask_all() -> list[Any]:
    from opencode_cli.permission import Rule

    return [Rule("demo_*", "*", "ask", "test")]


def test_hooks_wrap_an_mcp_call(make_project: ProjectFactory, demo: Path) -> None:
    seen: list[tuple[str, Any]] = []

    class Watches:
        @hookimpl
        def tool_execute_before(self, tool: str, args: dict) -> None:
            seen.append(("before", tool))
            if tool == "demo_echo":
                args["text"] = args["text"] + "!"

        @hookimpl
        def tool_execute_after(self, tool: str, result: Any) -> None:
            seen.append(("after", result.output))

    project = make_project(plugins=[("watches", Watches())])

    async def main() -> str:
        async with project:
            await project.open(["demo"])
            async with project.session(prompt=allow) as session:
                return (await session.execute("demo_echo", {"text": "hey"})).output

    assert run(main()) == "hey!"
    assert seen == [("before", "demo_echo"), ("after", "hey!")]


@pytest.mark.slow
def test_a_timeout_a_crash_and_reconnecting(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str]
) -> None:
    configure(project_dir, demo=local(demo_server_command, timeout=8000))
    project = make_project()

    async def main() -> None:
        async with project:
            await project.open()
            async with project.session(prompt=allow) as session:
                with pytest.raises(ToolError) as timed_out:
                    await session.execute("demo_slow", {"seconds": 30})
                assert str(timed_out.value) == (
                    'MCP server "demo" did not answer tools/call within 8 s (mcp.demo.timeout)'
                )
                first = project.mcp.peek("demo")
                assert first is not None
                with pytest.raises(ToolError, match='MCP server "demo" went away during the call'):
                    await session.execute("demo_die", {})
                assert project.mcp.peek("demo") is None
                # the next call connects again
                assert (await session.execute("demo_echo", {"text": "back"})).output == "back"
                assert project.mcp.peek("demo") is not first

    run(main())


@pytest.mark.slow
def test_broken_servers_are_failed_and_the_others_go_on(
    make_project: ProjectFactory,
    project_dir: Path,
    demo_server_command: list[str],
    garbage_server_command: list[str],
    exit_server_command: list[str],
) -> None:
    configure(
        project_dir,
        demo=local(demo_server_command),
        missing=local(["no-such-command-for-opencode"]),
        garbage=local(garbage_server_command, timeout=2000),
        exits=local(exit_server_command),
        off=local(demo_server_command, enabled=False),
    )
    project = make_project()

    async def main() -> Any:
        async with project:
            await project.open()
            return {s.name: s for s in project.mcp.statuses()}, project.generation.offer().ids()

    statuses, ids = run(main())
    assert statuses["demo"].status == "connected" and "demo_echo" in ids and "read" in ids
    assert statuses["missing"].status == "failed"
    assert statuses["missing"].error == "command not found: no-such-command-for-opencode"
    assert statuses["garbage"].status == "failed"
    assert (
        statuses["garbage"].error
        == "printed 'garbage line 1: this is not JSON {' on stdout, which is not JSON-RPC"
    )
    assert statuses["exits"].status == "failed" and statuses["exits"].error
    assert statuses["off"].status == "disabled"
    assert not any(name.startswith(("garbage_", "exits_", "off_")) for name in ids)


def test_streamable_http(make_project: ProjectFactory, project_dir: Path, demo_http_server: str) -> None:
    configure(project_dir, web={"type": "remote", "url": str(demo_http_server), "headers": {"X-Test": "1"}})
    project = make_project()

    async def main() -> Any:
        async with project:
            await project.open()
            async with project.session(prompt=allow) as session:
                return (await session.execute("web_echo", {"text": "over http"})).output, project.mcp.peek(
                    "web"
                )

    output, connection = run(main())
    assert output == "over http" and connection.transport == "streamable-http"


def test_the_resource_tools(make_project: ProjectFactory, demo: Path) -> None:
    project = make_project()
    asked: list[Any] = []

    async def prompt(request: Any) -> Decision:
        asked.append(request)
        return Decision("once")

    async def main() -> Any:
        async with project:
            await project.open()
            async with project.session(prompt=prompt) as session:
                listed = await session.execute("list_mcp_resources", {"server": "demo"})
                readme = await session.execute(
                    "read_mcp_resource", {"server": "demo", "uri": "demo://readme"}
                )
                huge = await session.execute(
                    "read_mcp_resource", {"server": "demo", "uri": "demo://huge.bin"}
                )
                with pytest.raises(ToolError) as unknown:
                    await session.execute("list_mcp_resources", {"server": "nope"})
                return listed, readme, huge, str(unknown.value)

    listed, readme, huge, unknown = run(main())
    resources = json.loads(listed.output)["resources"]
    assert [r["uri"] for r in resources][:1] and all(r["server"] == "demo" for r in resources)
    assert list(resources[0])[-1] == "server" and listed.title == "MCP resources: demo"
    assert (
        readme.output == "Resource: demo://readme\nMIME: text/markdown\n# Demo"
        and readme.title == "MCP resource: demo://readme"
    )
    assert (
        huge.output == "[Binary MCP resource omitted: demo://huge.bin (application/pdf, 11 MB) exceeds 10 MB]"
    )
    assert unknown == 'MCP server "nope" does not support resources. Available resource servers: demo'


def test_a_tools_list_changed_notification_rebuilds_the_registry(
    make_project: ProjectFactory, demo: Path
) -> None:
    project = make_project()

    async def main() -> None:
        async with project:
            await project.open()
            async with project.session(prompt=allow) as session:
                assert "demo_fresh" not in project.registry.entries
                await session.execute("demo_add_tool", {"name": "fresh"})
                for _ in range(200):
                    if "demo_fresh" in project.registry.entries:
                        break
                    await asyncio.sleep(0.02)
                assert (await session.execute("demo_fresh", {})).output == "fresh called"

    run(main())


def test_servers_are_stopped_when_the_project_closes(make_project: ProjectFactory, demo: Path) -> None:
    project = make_project()

    async def main() -> int:
        async with project:
            await project.open()
            connection = project.mcp.peek("demo")
            assert connection is not None
            return _server_pid(connection)

    pid = run(main())
    assert wait_gone(pid)


def _server_pid(connection: Any) -> int:
    """The server process of a stdio connection (our launcher execs into it: the child of us with our
    project's command line)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                status = Path(f"/proc/{entry}/status").read_text()
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            ppid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
            if ppid == os.getpid() and any(b"demo_server.py" in part for part in cmdline):
                return int(entry)
    raise AssertionError("no demo server found among our children")


@pytest.mark.slow
def test_the_everything_server(
    make_project: ProjectFactory, project_dir: Path, everything_command: list[str]
) -> None:
    configure(project_dir, everything=local(everything_command))
    project = make_project()

    async def main() -> Any:
        async with project:
            await project.open()
            async with project.session(prompt=allow) as session:
                echo = await session.execute("everything_echo", {"message": "hello"})
                return echo.output, project.generation.offer().ids(), project.mcp.statuses()

    output, ids, [status] = run(main())
    assert "hello" in output
    assert status.status == "connected" and status.tools >= 5
    assert "list_mcp_resources" in ids


@pytest.mark.slow
def test_the_everything_server_over_http(
    make_project: ProjectFactory, project_dir: Path, everything_http_server: str
) -> None:
    configure(project_dir, everything={"type": "remote", "url": str(everything_http_server)})
    project = make_project()

    async def main() -> Any:
        async with project:
            await project.open()
            async with project.session(prompt=allow) as session:
                return (await session.execute("everything_echo", {"message": "via http"})).output

    assert "via http" in run(main())


# -- the CLI ----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_mcp_list_tools_run_and_no_orphans(
    project_dir: Path, env: dict[str, str], demo_server_command: list[str]
) -> None:
    configure(
        project_dir,
        demo=local(demo_server_command),
        other=local(demo_server_command),
        missing=local(["no-such-command-for-opencode"]),
    )
    env = {**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    listed = json.loads(run_opencode(project_dir, env, "mcp", "list", "--json").stdout)["servers"]
    assert [(s["name"], s["status"]) for s in listed] == [
        ("demo", "connected"),
        ("other", "connected"),
        ("missing", "failed"),
    ]
    tools = json.loads(run_opencode(project_dir, env, "tools", "list", "--json").stdout)["tools"]
    assert {"kind": "mcp", "name": "demo"} in [t["source"] for t in tools]
    ran = run_opencode(
        project_dir, env, "tools", "run", "demo_echo", "text=from the shell", "--yes", "--json"
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["output"] == "from the shell"
    inspected = json.loads(
        run_opencode(project_dir, env, "tools", "inspect", "other_nested", "--json").stdout
    )
    assert inspected["source"] == {"kind": "mcp", "name": "other"}
    failed = run_opencode(project_dir, env, "tools", "run", "demo_fail", "--yes")
    assert failed.returncode == 1 and failed.stderr.strip().endswith("it broke")
    assert not [p for p in _children_named("demo_server.py", project_dir) if alive(p)]


def _children_named(name: str, cwd: Path | None = None) -> list[int]:
    """Processes whose command line has ``name`` (and, given ``cwd``, that run in it: a server of this
    test's project, not of another test run on the machine)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if name.encode() not in Path(f"/proc/{entry}/cmdline").read_bytes():
                    continue
                if cwd is not None and Path(os.readlink(f"/proc/{entry}/cwd")) != cwd:
                    continue
            except OSError:
                continue
            found.append(int(entry))
    return found


def test_cli_tools_run_starts_only_that_tools_server(
    project_dir: Path, env: dict[str, str], demo_server_command: list[str], tmp_path: Path
) -> None:
    marker = tmp_path / "second-started"
    second = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    configure(project_dir, demo=local(demo_server_command), second=local(second))
    ran = run_opencode(
        project_dir,
        {**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"},
        "tools",
        "run",
        "demo_echo",
        "text=x",
        "--yes",
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "x\n" and not marker.exists()


def test_cli_mcp_add_writes_the_table(project_dir: Path, env: dict[str, str]) -> None:
    (project_dir / "opencode.toml").write_text('model = "openai/gpt-5"\n')
    added = run_opencode(project_dir, env, "mcp", "add", "files", "--", "npx", "-y", "server", "--flag")
    remote = run_opencode(
        project_dir, env, "mcp", "add", "docs", "--url", "https://example.com/mcp", "--header", "A=b"
    )
    assert added.returncode == 0 and remote.returncode == 0, (added.stderr, remote.stderr)
    import tomllib

    data = tomllib.loads((project_dir / "opencode.toml").read_text())
    assert data["model"] == "openai/gpt-5"
    assert data["mcp"]["files"] == {"type": "local", "command": ["npx", "-y", "server", "--flag"]}
    assert data["mcp"]["docs"] == {"type": "remote", "url": "https://example.com/mcp", "headers": {"A": "b"}}
    both = run_opencode(project_dir, env, "mcp", "add", "x", "--url", "https://a.b/c", "--", "cmd")
    assert both.returncode == 2 and "either" in both.stderr


def test_config_errors_name_the_key(project_dir: Path, env: dict[str, str]) -> None:
    (project_dir / "opencode.toml").write_text('[mcp.a]\ntype = "local"\ncommand = "not a list"\n')
    listed = run_opencode(project_dir, env, "tools", "list")
    assert listed.returncode == 2 and "mcp.a.command must be a non-empty list of strings" in listed.stderr
    (project_dir / "opencode.toml").write_text(
        '[mcp.a]\ntype = "local"\ncomand = ["x"]\ncommand = ["true"]\n'
    )
    listed = run_opencode(project_dir, env, "mcp", "list")
    assert "unknown config key 'mcp.a.comand' (did you mean 'mcp.a.command'?)" in listed.stderr


def test_a_remote_server_without_streamable_http_is_reached_over_sse(
    make_project: ProjectFactory, project_dir: Path, demo_sse_server: str
) -> None:
    configure(project_dir, old={"type": "remote", "url": str(demo_sse_server)})
    project = make_project()

    async def main() -> Any:
        async with project:
            await project.open()
            async with project.session(prompt=allow) as session:
                return (await session.execute("old_echo", {"text": "over sse"})).output, project.mcp.peek(
                    "old"
                )

    output, connection = run(main())
    assert output == "over sse" and connection.transport == "sse"


def test_long_output_is_truncated_and_an_abort_cancels_the_request(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str]
) -> None:
    from opencode_cli import AbortSignal
    from opencode_cli.errors import INTERRUPTED

    (project_dir / "opencode.toml").write_text(
        tomli_w.dumps({"mcp": {"demo": local(demo_server_command)}, "tool_output": {"max_lines": 10}})
    )
    project = make_project()

    async def main() -> Any:
        async with project:
            await project.open()
            async with project.session(prompt=allow) as session:
                long = await session.execute("demo_many_lines", {"count": 50})
                abort = AbortSignal()
                slow = asyncio.create_task(session.execute("demo_slow", {"seconds": 60}, abort=abort))
                await asyncio.sleep(0.5)
                abort.abort()
                with pytest.raises(ToolError) as stopped:
                    await asyncio.wait_for(slow, 10)
                after = await session.execute("demo_echo", {"text": "still here"})
                return long, str(stopped.value), after.output

    long, stopped, after = run(main())
    assert long.metadata["truncated"] is True and "outputPath" in long.metadata
    assert stopped == INTERRUPTED and after == "still here"


def test_no_resource_tools_without_a_server_that_has_resources(
    make_project: ProjectFactory, project_dir: Path, tmp_path: Path
) -> None:
    plain = tmp_path / "plain_server.py"
    plain.write_text(
        "from mcp.server.mcpserver import MCPServer\n"
        "app = MCPServer('plain')\n"
        "@app.tool()\n"
        "def ping() -> str:\n"
        "    '''Answer pong.'''\n"
        "    return 'pong'\n"
        "# MCPServer serves resources/* even with none registered: take those handlers away, so that the\n"
        "# server does not advertise the resources capability\n"
        "handlers = app._lowlevel_server._request_handlers\n"
        "for method in [m for m in handlers if m.startswith('resources/')]:\n"
        "    del handlers[method]\n"
        "app.run('stdio')\n"
    )
    configure(project_dir, plain=local([sys.executable, str(plain)]))
    project = make_project()

    async def main() -> list[str]:
        async with project:
            await project.open()
            return project.generation.offer().ids()

    ids = run(main())
    assert "plain_ping" in ids and "list_mcp_resources" not in ids


def test_hot_reload_reconnects_a_server_whose_config_changed(
    make_project: ProjectFactory, project_dir: Path, demo_server_command: list[str], tmp_path: Path
) -> None:
    configure(project_dir, demo=local(demo_server_command))
    project = make_project()
    reports: list[Any] = []

    async def main() -> None:
        async with project:
            await project.open()
            first = project.mcp.peek("demo")
            assert first is not None and "demo_echo" in project.registry.entries
            async with project.watch(on_change=reports.append):
                configure(project_dir, renamed=local(demo_server_command))
                for _ in range(500):
                    if "renamed_echo" in project.registry.entries:
                        break
                    await asyncio.sleep(0.02)
            assert "renamed_echo" in project.registry.entries and "demo_echo" not in project.registry.entries
            assert project.mcp.peek("demo") is None and project.mcp.peek("renamed") is not None

    run(main())
    added = [tool.id for report in reports for tool in report.added]
    removed = [tool.id for report in reports for tool in report.removed]
    assert "renamed_echo" in added and "demo_echo" in removed


@pytest.mark.slow
def test_a_server_dies_with_us_when_we_are_killed(
    project_dir: Path, env: dict[str, str], demo_server_command: list[str]
) -> None:
    import signal
    import time

    configure(project_dir, demo=local(demo_server_command))
    script = (
        "import asyncio, os, sys\n"
        "from opencode_cli.project import Project\n"
        "async def main():\n"
        "    project = Project(sys.argv[1])\n"
        "    await project.open()\n"
        "    print('ready', flush=True)\n"
        "    await asyncio.sleep(3600)\n"
        "asyncio.run(main())\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(project_dir)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        servers = [pid for pid in _children_named("demo_server.py") if _parent(pid) == process.pid]
        assert servers and all(alive(pid) for pid in servers)
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        deadline = time.monotonic() + 60
        while any(alive(pid) for pid in servers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(pid) for pid in servers)
    finally:
        if process.poll() is None:
            process.kill()


def _parent(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))


@pytest.mark.slow
def test_cli_schema_call_and_plugins_list_include_mcp_tools(
    project_dir: Path, env: dict[str, str], demo_server_command: list[str]
) -> None:
    configure(project_dir, demo=local(demo_server_command))
    env = {**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    schema = json.loads(run_opencode(project_dir, env, "tools", "schema", "--model", "gpt-5").stdout)
    names = [tool.get("name") or tool.get("function", {}).get("name") for tool in schema]
    assert "demo_echo" in names
    call = {"name": "demo_echo", "arguments": json.dumps({"text": "called"})}
    called = run_opencode(project_dir, env, "tools", "call", json.dumps(call), "--yes", "--json")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["parts"][0]["output"] == "called"
    plugins = json.loads(run_opencode(project_dir, env, "plugins", "list", "--json").stdout)["plugins"]
    [record] = [p for p in plugins if p["kind"] == "mcp"]
    assert record["name"] == "demo" and record["status"] == "loaded" and "demo_echo" in record["tools"]
