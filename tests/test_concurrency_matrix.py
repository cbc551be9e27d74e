"""The concurrency matrix of issue 25: 1, 8 and 64 concurrent dispatches in one session × a sync tool, an
async tool, an async hook awaiting ``to_thread``, a sync hook, an MCP tool (the demo server of
``tests/mcp/servers``, a real ``mcp`` SDK server) × completing, aborted mid-call.

Invariants: every call ends within a bound (no deadlock), the transcript has exactly one part per call,
each in a final state (completed, or error for an aborted call), no child process is left once the
project is closed, and no file is torn (each written file is whole or absent). The CLI under SIGTERM at
seeded random moments is ``tests/cli/test_interrupted_patch.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from _processes import alive

from opencode_cli import ToolContext, hookimpl, tool
from opencode_cli.context import AbortSignal
from opencode_cli.files import atomic_write
from opencode_cli.project import Project
from opencode_cli.session import ToolCall
from opencode_cli.transcript import ToolCallPart

DEMO_SERVER = Path(__file__).parent / "mcp" / "servers" / "demo_server.py"
KINDS = ["sync tool", "async tool", "async hook", "sync hook", "mcp tool"]
#: What each file a tool writes holds when whole.
CONTENT = "x" * 200_000
#: Seconds within which every cell must end.
BOUND = 90


@tool
def sync_work(n: int, wait: bool, ctx: ToolContext) -> str:
    """Write a file, then return (or wait for the abort)."""
    atomic_write(ctx.resolve(f"out/sync{n}.txt"), CONTENT)
    if wait:
        ctx.abort.wait(BOUND)
    return f"sync {n}"


@tool
async def async_work(n: int, wait: bool, ctx: ToolContext) -> str:
    """Write a file, then return (or wait until cancelled by the abort)."""
    await asyncio.to_thread(atomic_write, ctx.resolve(f"out/async{n}.txt"), CONTENT)
    if wait:
        await asyncio.Event().wait()
    return f"async {n}"


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(sync_work)
        register(async_work)


class AsyncHook:
    """Logs each call through ``asyncio.to_thread`` (the deadlock of issue 25, item 1)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    @hookimpl
    async def tool_execute_before(self, tool: str, args: dict) -> None:
        await asyncio.to_thread(self.lines.append, f"{tool} {args.get('n')}")


class SyncHook:
    def __init__(self) -> None:
        self.lines: list[str] = []

    @hookimpl
    def tool_execute_before(self, tool: str, args: dict) -> None:
        self.lines.append(f"{tool} {args.get('n')}")


def children() -> set[int]:
    """The live child processes of this process."""
    import os

    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if int(fields[1]) == os.getpid() and fields[0] not in ("Z", "X"):
            found.add(int(entry.name))
    return found


def calls_for(kind: str, count: int, aborted: bool) -> list[ToolCall]:
    """One call per ``n``, each with its own arguments (identical calls would trip the doom loop)."""
    calls = []
    for n in range(count):
        if kind == "mcp tool":
            name, args = ("demo_slow", {"seconds": 60 + n}) if aborted else ("demo_echo", {"text": f"{n}"})
        else:
            name, args = ("sync_work" if kind == "sync tool" else "async_work"), {"n": n, "wait": aborted}
        calls.append(ToolCall(name, json.dumps(args), id=f"call_{n:03}"))
    return calls


def run_cell(make_project: Any, project_dir: Path, kind: str, count: int, aborted: bool) -> None:
    hook: AsyncHook | SyncHook | None = None
    plugins: list[tuple[str, object]] = [("tools", Tools())]
    if kind == "async hook":
        hook = AsyncHook()
    elif kind == "sync hook":
        hook = SyncHook()
    if hook is not None:
        plugins.append(("hook", hook))
    if kind == "mcp tool":
        config = {"mcp": {"demo": {"type": "local", "command": [sys.executable, str(DEMO_SERVER), "stdio"]}}}
        (project_dir / "opencode.toml").write_text(tomli_w.dumps(config))
    project: Project = make_project(plugins=plugins)
    before = children()
    calls = calls_for(kind, count, aborted)
    abort = AbortSignal()

    async def main() -> tuple[list[Any], list[ToolCallPart]]:
        async with project:
            await project.open()
            async with project.session() as session:
                session.resolve()
                running = [asyncio.ensure_future(session.dispatch(call, abort=abort)) for call in calls]
                if aborted:  # every call is mid-way (its part running) before the abort
                    message = session.assistant()
                    while (
                        sum(isinstance(p, ToolCallPart) and p.status == "running" for p in message.parts)
                        < count
                    ):
                        await asyncio.sleep(0.01)
                    abort.abort("cancelled")
                results = await asyncio.gather(*running)
                parts = [p for p in session.assistant().parts if isinstance(p, ToolCallPart)]
                return results, parts

    results, parts = asyncio.run(asyncio.wait_for(main(), BOUND))
    assert len(results) == count
    assert sorted(part.call_id for part in parts) == [call.id for call in calls]  # one part per call
    assert all(part.status in ("completed", "error") for part in parts)
    if aborted:
        assert all(result.status == "error" for result in results)
        assert all(result.error.startswith("[Tool execution was interrupted]") for result in results)
    else:
        assert all(result.status == "completed" for result in results), [r.error for r in results]
    if hook is not None:
        assert len(hook.lines) == count
    assert not any(alive(pid) for pid in children() - before)  # the MCP server is gone with the project
    written = list((project_dir / "out").iterdir()) if (project_dir / "out").exists() else []
    assert all(path.read_text() == CONTENT for path in written)  # whole: no torn or staged file left


CELLS = [
    pytest.param(kind, count, aborted, marks=[pytest.mark.slow] if count == 64 else [])
    for kind in KINDS
    for count in (1, 8, 64)
    for aborted in (False, True)
]


@pytest.mark.parametrize(("kind", "count", "aborted"), CELLS)
def test_concurrent_dispatches(
    make_project: Any, project_dir: Path, kind: str, count: int, aborted: bool
) -> None:
    run_cell(make_project, project_dir, kind, count, aborted)
