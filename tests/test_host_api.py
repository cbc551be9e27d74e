"""The obvious calls of a host work (issue 18, item 3): model strings where the CLI takes them, the sync
``run_tool`` refusing to block a running loop, and its async form."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from opencode_cli import Decision, ModelRef, PermissionRequest, Project, Rule


def test_tools_and_session_take_a_model_string(make_project: Callable[..., Project]) -> None:
    project = make_project()
    ids = [definition.id for definition in project.tools(model="gpt-5")]
    assert "apply_patch" in ids and "edit" not in ids  # the per-model filter saw gpt-5
    assert "edit" in [definition.id for definition in project.tools(model="anthropic/claude-sonnet-4-5")]
    with project.session(model="openai/gpt-5") as session:
        assert session.model == ModelRef("openai", "gpt-5")
        assert "apply_patch" in [tool.name for tool in session.resolve()]


def test_run_tool_inside_a_running_loop_points_to_the_async_form(
    make_project: Callable[..., Project], project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("alpha\n")
    project = make_project()

    async def host() -> str:
        with pytest.raises(RuntimeError, match=r"use `await project\.arun_tool\(\.\.\.\)` here"):
            project.run_tool("read", {"filePath": "a.txt"})
        result = await project.arun_tool("read", {"filePath": "a.txt"})
        return result.output

    assert "1: alpha" in asyncio.run(host())


def test_arun_tool_takes_session_options(make_project: Callable[..., Project], project_dir: Path) -> None:
    project = make_project()
    asked: list[PermissionRequest] = []

    async def prompt(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Decision("reject")

    async def host() -> str:
        result = await project.arun_tool(
            "write",
            {"filePath": "b.txt", "content": "x"},
            agent="build",
            prompt=prompt,
            rules=[Rule("edit", "*", "ask")],
        )
        return result.output

    from opencode_cli import RejectedError

    with pytest.raises(RejectedError):
        asyncio.run(host())
    assert [request.permission for request in asked] == ["edit"]
    assert not (project_dir / "b.txt").exists()
