"""``execute`` end to end: scripts that call the demo MCP server (a real process) through the session, the
sandbox's refusals and limits, abort, hooks, and no worker left behind."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from _codemode import CODE_MODE, run, write_config
from _processes import wait_gone

from opencode_cli import hookimpl
from opencode_cli.context import AbortSignal
from opencode_cli.permission import Rule
from opencode_cli.session import Decision, ToolCall, ToolPart


async def allow(request: Any) -> Decision:
    return Decision("once")


async def scripts(project: Any, *codes: str, **session_options: Any) -> list[ToolPart]:
    """Run each script as an ``execute`` call in one session; the parts the model would get."""
    await project.open()
    session_options.setdefault("prompt", allow)
    parts = []
    async with project.session(**session_options) as session:
        session.resolve()
        for code in codes:
            parts.append(await session.dispatch(ToolCall("execute", json.dumps({"code": code}))))
    return parts


def test_a_script_fans_out_over_calls_and_returns_a_summary(make_project: Any, demo: Path) -> None:
    project = make_project(extra_env=CODE_MODE)
    seen: list[tuple[str | None, dict[str, Any] | None]] = []
    code = """
counts = await asyncio.gather(*(tools.demo.many_lines(count=n) for n in (1, 2, 3)))
lines = [len(text.splitlines()) for text in counts]
print("counted", lines)
return {"calls": len(lines), "lines": sum(lines), "echo": await tools.demo.echo("done")}
"""
    [part] = run(scripts(project, code, on_metadata=lambda title, metadata: seen.append((title, metadata))))

    assert part.status == "completed", part.error
    assert part.output == '{\n  "calls": 3,\n  "lines": 6,\n  "echo": "done"\n}\n\nLogs:\ncounted [1, 2, 3]'
    calls = part.metadata["toolCalls"]
    assert [(c["tool"], c["status"]) for c in calls] == [("demo_many_lines", "completed")] * 3 + [
        ("demo_echo", "completed")
    ]
    assert calls[0]["input"] == {"count": 1} and part.title == "execute"
    # streamed while it ran: a call was seen running before it was seen completed
    statuses = [m["toolCalls"][0]["status"] for _, m in seen if m and m.get("toolCalls")]
    assert statuses[0] == "running" and statuses[-1] == "completed"


def test_results_strings_none_and_structured(make_project: Any, demo: Path) -> None:
    project = make_project(extra_env=CODE_MODE)
    parts = run(
        scripts(
            project,
            "'plain text'",
            "None",
            "x = 1",
            "return (1, 2.5, {'a': {3}}, b'raw', float('nan'))",
            "await tools.demo.structured()",
            "r = await tools.demo.nested(order={'customer': 'Ann', 'size': 'small', "
            "'items': [{'name': 'pen', 'quantity': 2}]})\nr",
        )
    )

    assert [p.status for p in parts] == ["completed"] * 6
    assert parts[0].output == "plain text"
    assert parts[1].output == "null" and parts[2].output == "null"
    assert json.loads(parts[3].output) == [1, 2.5, {"a": [3]}, "raw", None]
    assert json.loads(parts[4].output) == {"answer": 42}
    assert parts[5].output == "Ann: small: 2 pen"


def test_a_denied_call_is_caught_by_the_script_or_fails_it(make_project: Any, demo: Path) -> None:
    project = make_project(extra_env=CODE_MODE)
    asked: list[Any] = []

    async def reject_echo(request: Any) -> Decision:
        asked.append(request)
        return Decision("reject" if request.permission == "demo_echo" else "once")

    caught = """
try:
    await tools.demo.echo(text="secret")
except PermissionError as error:
    print("denied:", error)
return await tools.demo.many_lines(count=1)
"""
    uncaught = "await tools.demo.echo(text='again')"
    parts = run(
        scripts(
            project,
            caught,
            uncaught,
            prompt=reject_echo,
            rules=[Rule("demo_*", "*", "ask", "test")],
        )
    )

    assert parts[0].status == "completed" and parts[0].output.startswith("line 1\n\nLogs:\ndenied: ")
    assert [c["status"] for c in parts[0].metadata["toolCalls"]] == ["error", "completed"]
    assert parts[1].status == "error"
    assert parts[1].error.startswith("Script failed: PermissionError: ")
    assert "(line 1)" in parts[1].error and "Hints:" in parts[1].error
    # each inner call asked the permission keyed by the flat MCP key, pattern *
    assert [(r.permission, r.patterns) for r in asked][:2] == [
        ("demo_echo", ["*"]),
        ("demo_many_lines", ["*"]),
    ]


def test_a_failing_tool_raises_and_an_image_becomes_an_attachment(make_project: Any, demo: Path) -> None:
    project = make_project(extra_env=CODE_MODE)
    code = """
try:
    await tools.demo.fail()
except RuntimeError as error:
    print("failed:", error)
await tools.demo.image()
"""
    [part] = run(scripts(project, code))

    assert part.status == "completed", part.error
    assert part.output == "an image\n\n[1 image attached to the result]\n\nLogs:\nfailed: it broke"
    [attachment] = part.attachments
    assert attachment.mime == "image/png" and attachment.url.startswith("data:image/png;base64,")


def test_errors_name_the_line_and_give_hints(make_project: Any, demo: Path) -> None:
    project = make_project(extra_env=CODE_MODE)
    parts = run(
        scripts(
            project,
            "print('before')\nx = (",
            "print('first')\ny = undefined_name + 1",
            "await tools.demo.nothere()",
            "await tools.demo.echo(wrong=1)",
        )
    )

    syntax, name, attribute, signature = parts
    assert syntax.status == "error" and syntax.error.startswith("Script failed: SyntaxError: ")
    assert "(line 2)" in syntax.error and "top-level await" in syntax.error
    assert name.error.startswith("Script failed: NameError: name 'undefined_name' is not defined (line 2)")
    assert name.error.endswith("\n\nLogs:\nfirst")
    assert "nothere" in attribute.error and "AttributeError" in attribute.error
    assert "TypeError" in signature.error and "unexpected keyword argument 'wrong'" in signature.error


def test_files_modules_and_sockets_are_refused(make_project: Any, demo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    project = make_project(extra_env=CODE_MODE)
    parts = run(
        scripts(
            project,
            f"open({str(secret)!r}).read()",
            "import os\nos.listdir('/')",
            "import socket",
            "import subprocess",
            "from pathlib import Path\nPath('/etc/passwd').read_text()",
        )
    )

    assert [p.status for p in parts] == ["error"] * 5
    assert "PermissionError" in parts[0].error and "top secret" not in parts[0].error
    assert "PermissionError" in parts[1].error
    assert "ModuleNotFoundError: No module named 'socket'" in parts[2].error
    assert "ModuleNotFoundError" in parts[3].error
    assert "PermissionError" in parts[4].error


def test_limits_each_with_its_message(make_project: Any, project_dir: Path) -> None:
    limits = {"seconds": 1, "memory_mb": 32, "tool_calls": 3, "output_kb": 4}
    write_config(project_dir, experimental={"code_mode_limits": limits})
    project = make_project(extra_env=CODE_MODE)
    parts = run(
        scripts(
            project,
            "while True:\n    pass",
            "await tools.demo.slow(seconds=30)",
            "x = 'a' * (10**9)",
            "for i in range(5):\n    await tools.demo.echo(text=str(i))",
            "for i in range(1000):\n    print('x' * 100)",
            "'y' * 10000",
            "1 + 1",
        )
    )

    loop, slow, memory, calls, printed, result, fine = parts
    assert loop.error.startswith("Execution timed out after 1 s (the time limit).")
    assert slow.error.startswith("Execution timed out after 1 s (the time limit).")
    assert memory.error.startswith("Execution stopped: the script used more than 32 MB of memory")
    assert calls.error.startswith("Execution stopped: the script made more than 3 tool calls")
    assert printed.error.startswith("Execution stopped: the script printed more than 4 KB")
    assert result.error.startswith("Execution stopped: the script's result is larger than 4 KB")
    assert fine.status == "completed" and fine.output == "2"  # the sandbox goes on after each


def test_an_abort_ends_the_script(make_project: Any, demo: Path) -> None:
    project = make_project(extra_env=CODE_MODE)
    abort = AbortSignal()

    async def main() -> tuple[ToolPart, str]:
        await project.open()
        started = asyncio.Event()

        def on_metadata(title: str | None, metadata: dict[str, Any] | None) -> None:
            if metadata and metadata.get("toolCalls"):
                started.set()

        async with project.session(prompt=allow, on_metadata=on_metadata) as session:
            session.resolve()
            call = ToolCall("execute", {"code": "await tools.demo.slow(seconds=30)\n'never'"})
            running = asyncio.ensure_future(session.dispatch(call, abort=abort))
            await started.wait()
            abort.abort()
            part = await running
            after = await session.dispatch(ToolCall("execute", {"code": "await tools.demo.echo(text='ok')"}))
            return part, after.output

    part, after = run(main(), timeout=20)
    assert part.status == "completed" and part.output == "Execution cancelled."
    assert part.metadata["toolCalls"][0]["tool"] == "demo_slow"
    assert after == "ok"


def test_inner_calls_fire_the_hooks_with_parent_call_ids(make_project: Any, demo: Path) -> None:
    seen: list[tuple[str, str, str | None]] = []

    class Watches:
        @hookimpl
        def tool_execute_before(self, tool: str, call_id: str | None, args: dict[str, Any]) -> None:
            seen.append(("before", tool, call_id))
            if tool == "demo_echo":
                args["text"] = args["text"] + "!"

        @hookimpl
        def tool_execute_after(self, tool: str, call_id: str | None, result: Any) -> None:
            seen.append(("after", tool, call_id))

    project = make_project(extra_env=CODE_MODE, plugins=[("watches", Watches())])

    async def main() -> ToolPart:
        await project.open()
        async with project.session(prompt=allow) as session:
            session.resolve()
            code = "a = await tools.demo.echo(text='one')\nb = await tools.demo.echo(text='two')\n[a, b]"
            part = await session.dispatch(ToolCall("execute", {"code": code}, id="call_outer"))
            # the inner calls are not parts of the transcript: only execute is
            assert [p.tool for m in session.messages for p in m.parts if hasattr(p, "tool")] == ["execute"]
            return part

    part = run(main())
    assert json.loads(part.output) == ["one!", "two!"]
    assert seen == [
        ("before", "execute", "call_outer"),
        ("before", "demo_echo", "call_outer/1"),
        ("after", "demo_echo", "call_outer/1"),
        ("before", "demo_echo", "call_outer/2"),
        ("after", "demo_echo", "call_outer/2"),
        ("after", "execute", "call_outer"),
    ]


def test_builtins_are_callable_when_switched_on(make_project: Any, project_dir: Path) -> None:
    (project_dir / "notes.txt").write_text("alpha\nbeta\n")
    write_config(project_dir, experimental={"code_mode_builtins": True})
    project = make_project(extra_env=CODE_MODE)

    async def main() -> tuple[str, ToolPart, ToolPart]:
        await project.open()
        description = next(d for d in project.generation.offer().tools if d.id == "execute").description
        parts = await scripts(
            project,
            "await tools.builtin.read(filePath='notes.txt')",
            "await tools.builtin.read(filePath='.env')",
            rules=[Rule("read", "*.env", "deny", "test")],
        )
        return description, *parts

    description, read, denied = run(main())
    assert "tools.builtin.read(filePath: str" in description and "tools.builtin.grep(" in description
    assert read.status == "completed" and "1: alpha" in read.output
    assert denied.status == "error" and "PermissionError" in denied.error


def test_no_sandbox_worker_outlives_the_project(make_project: Any, demo: Path) -> None:
    project = make_project(extra_env=CODE_MODE)

    async def main() -> list[int]:
        async with project:
            await scripts(project, "1")
            assert project.services.peek("codemode:sandbox") is not None
            return _worker_pids()

    pids = run(main())
    assert pids, "a monty worker runs while the project is open"
    assert all(wait_gone(pid) for pid in pids)


def _worker_pids() -> list[int]:
    """Our child processes running the monty worker binary."""
    import os

    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rpartition(")")[2].split()[1])
        if parent == os.getpid() and b"monty" in cmdline:
            found.append(int(entry))
    return found


def test_gathered_calls_run_at_once(make_project: Any, demo: Path) -> None:
    project = make_project(extra_env=CODE_MODE)
    seen: list[dict[str, Any]] = []
    code = "await asyncio.gather(*(tools.demo.slow(seconds=0.5) for _ in range(3)))"
    [part] = run(scripts(project, code, on_metadata=lambda title, metadata: seen.append(metadata or {})))

    assert part.status == "completed" and json.loads(part.output) == ["done"] * 3
    # all three were running together before the first one ended
    running = [sum(c["status"] == "running" for c in m.get("toolCalls", [])) for m in seen]
    assert max(running) == 3


def test_a_deeply_nested_result_is_a_clear_error(make_project: Any, demo: Path) -> None:
    project = make_project(extra_env=CODE_MODE)
    code = "x = []\nfor _ in range(900):\n    x = [x]\nprint('built')\nx"
    [part] = run(scripts(project, code))

    assert part.status == "error"
    assert part.error == "The script's result is nested too deeply to be shown as JSON.\n\nLogs:\nbuilt"


def test_the_server_timeout_bounds_an_inner_call(
    make_project: Any, project_dir: Path, demo_http: str
) -> None:
    # the server listens already: the timeout (to connect, and for each request) meets only the request,
    # however long a loaded machine takes to start a Python server
    write_config(project_dir, demo={"type": "remote", "url": demo_http, "timeout": 3000})
    project = make_project(extra_env=CODE_MODE)
    code = """
try:
    await tools.demo.slow(seconds=30)
except RuntimeError as error:
    return "caught: " + str(error)
"""
    [part] = run(scripts(project, code))

    assert part.status == "completed", part.error
    assert part.output == 'caught: MCP server "demo" did not answer tools/call within 3 s (mcp.demo.timeout)'
    assert part.metadata["toolCalls"] == [{"tool": "demo_slow", "status": "error", "input": {"seconds": 30}}]
