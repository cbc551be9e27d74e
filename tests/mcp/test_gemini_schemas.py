"""Gemini schemas of an MCP tool, as OpenCode sends them (issue 26, item 7; issue 36, finding 9): for the
``google`` provider (the ``gemini`` wire) and for a Gemini model behind an OpenAI-compatible provider (the
``gemini`` profile on the ``openai`` wire). The tool comes from a real server."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomli_w
from _mcp_servers import SERVERS
from _processes import run_opencode

from opencode_cli import render_tools
from opencode_cli.project import Project

ProjectFactory = Callable[..., Project]


def _parameters(make_project: ProjectFactory, project_dir: Path, model: str, wire: str) -> dict[str, Any]:
    command = [sys.executable, str(SERVERS / "shapes_server.py")]
    (project_dir / "opencode.toml").write_text(
        tomli_w.dumps({"mcp": {"shapes": {"type": "local", "command": command}}})
    )
    project = make_project()

    async def main() -> Any:
        async with project, project.session(model=model) as session:
            return render_tools([t for t in session.resolve() if t.name == "shapes_shapes"], wire)

    [tool] = asyncio.run(asyncio.wait_for(main(), 90))
    if wire == "openai":
        return tool["function"]["parameters"]
    return tool["parameters"] if "parameters" in tool else tool["functionDeclarations"][0]["parameters"]


def test_the_google_provider(make_project: ProjectFactory, project_dir: Path) -> None:
    rendered = _parameters(make_project, project_dir, "google/gemini-2.5-pro", "gemini")
    properties = rendered["properties"]
    note = properties["note"]
    # pydantic's anyOf [string, null] is the string, nullable (an array-form type would not be: test_profiles)
    assert (note["type"], note["nullable"], "anyOf" in note) == ("string", True, False)
    order = properties["order"]
    assert "$ref" not in json.dumps(rendered)
    assert order == {"description": "the order to place"}  # the $ref's siblings alone: nothing inlined
    assert properties["tags"]["items"] == {"type": "string"}
    assert properties["values"]["items"] == {"type": "string"}


def test_a_gemini_model_behind_an_openai_compatible_provider(
    make_project: ProjectFactory, project_dir: Path
) -> None:
    rendered = _parameters(make_project, project_dir, "openrouter/google/gemini-2.5-pro", "openai")
    properties = rendered["properties"]
    assert properties["tags"]["items"] == {"type": "string"}
    assert properties["values"]["items"] == {"type": "string"}  # on main: {} (no type)


def test_an_array_form_nullable_type_is_sent_as_opencode_sends_it(
    make_project: ProjectFactory, project_dir: Path, env: dict[str, str]
) -> None:
    # the session's gemini profile marks it nullable; Google's conversion leaves that out (OpenCode 1.18.33)
    expected = {"anyOf": [{"type": "string"}], "description": "a label, or null"}
    rendered = _parameters(make_project, project_dir, "google/gemini-2.5-pro", "gemini")
    assert rendered["properties"]["label"] == expected
    done = run_opencode(project_dir, env, "tools", "schema", "--model", "google/gemini-2.5-pro")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    [declaration] = [
        d for tool in payload for d in tool["functionDeclarations"] if d["name"] == "shapes_shapes"
    ]
    assert declaration["parameters"]["properties"]["label"] == expected
