"""Task-augmented tool calls (issue 34, item 10) with ``@modelcontextprotocol/server-everything``:
``simulate-research-query`` declares ``execution.taskSupport = "required"``; it is created as a task,
polled to the end (its statuses reported as the call's live title), asks for clarification through
``tasks/result`` when ambiguous, and an abort cancels the task on the server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from opencode_cli.context import AbortSignal
from opencode_cli.mcp.asks import ElicitAnswer, Elicitation
from opencode_cli.mcp.tasks import _send
from opencode_cli.session import Decision, ToolCall

pytestmark = pytest.mark.slow
WAIT = 90.0
TOOL = "everything_simulate-research-query"


async def allow(request: Any) -> Decision:
    return Decision("once")


def configure(project_dir: Path, command: list[str]) -> None:
    table = {"type": "local", "command": command}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": {"everything": table}}))


def test_a_task_tool_is_polled_to_its_result(
    make_project: Any, project_dir: Path, everything_command: list[str]
) -> None:
    configure(project_dir, everything_command)
    titles: list[str | None] = []

    async def main() -> Any:
        project = make_project()
        async with project:
            await project.open()
            async with project.session(prompt=allow, on_metadata=lambda t, m: titles.append(t)) as session:
                session.resolve()
                return await session.dispatch(ToolCall(TOOL, json.dumps({"topic": "bees"})))

    part = asyncio.run(asyncio.wait_for(main(), WAIT))

    assert part.status == "completed", part.error
    assert "**Topic**: bees" in part.output and "Stage 4: Generating report" in part.output
    working = [t for t in titles if t and t.startswith("working")]
    assert working and any("Gathering sources" in t for t in working)
    assert titles.index(working[0]) < len(titles) - 1  # reported while it ran, before the end


def test_a_task_asks_for_clarification_through_the_session(
    make_project: Any, project_dir: Path, everything_command: list[str]
) -> None:
    configure(project_dir, everything_command)
    asked: list[Elicitation] = []

    async def elicit(request: Elicitation) -> ElicitAnswer:
        asked.append(request)
        [choice] = request.schema["properties"]["interpretation"]["oneOf"][:1]
        return ElicitAnswer("accept", {"interpretation": choice["const"]})

    async def main() -> Any:
        project = make_project()
        async with project:
            await project.open()
            async with project.session(prompt=allow, extra={"elicit": elicit}) as session:
                session.resolve()
                return await session.dispatch(
                    ToolCall(TOOL, json.dumps({"topic": "python", "ambiguous": True}))
                )

    part = asyncio.run(asyncio.wait_for(main(), WAIT))

    assert part.status == "completed", part.error
    [request] = asked
    assert request.server == "everything" and "multiple interpretations" in request.message
    chosen = request.schema["properties"]["interpretation"]["oneOf"][0]["const"]
    assert chosen in part.output


def test_an_abort_cancels_the_task_on_the_server(
    make_project: Any, project_dir: Path, everything_command: list[str]
) -> None:
    from mcp import types

    configure(project_dir, everything_command)
    abort = AbortSignal()

    def on_metadata(title: str | None, metadata: Any) -> None:
        if title and title.startswith("working"):
            abort.abort("enough")

    async def main() -> Any:
        project = make_project()
        async with project:
            await project.open()
            async with project.session(prompt=allow, on_metadata=on_metadata) as session:
                session.resolve()
                part = await session.dispatch(ToolCall(TOOL, json.dumps({"topic": "bees"})), abort=abort)
                connection = await project.mcp.connection("everything")
                listed = await _send(connection.session, types.ListTasksRequest(), 10)
                return part, listed

    part, listed = asyncio.run(asyncio.wait_for(main(), WAIT))

    assert part.status == "error" and "interrupted" in (part.error or "").lower(), part.error
    statuses = [task["status"] for task in listed["tasks"]]
    assert statuses == ["cancelled"], listed
