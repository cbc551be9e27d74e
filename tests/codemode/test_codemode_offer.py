"""What a model is offered in code mode (core §3.1 item 15, §3.5 step 2, §6.1): ``execute`` with the catalogue
instead of the MCP tools, only while a script would have an MCP tool to call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _codemode import CODE_MODE, run, write_config

from opencode_cli.permission import Rule
from opencode_cli.policy import CALLED_FROM_CODE


def _offer(project: Any, **options: Any) -> Any:
    async def main() -> Any:
        await project.open()
        return project.generation.offer(**options)

    return run(main())


def test_execute_replaces_the_mcp_tools(make_project: Any, demo: Path) -> None:
    offer = _offer(make_project(extra_env=CODE_MODE))
    ids = offer.ids()
    hidden = {h.entry.id: h.reason for h in offer.hidden}

    assert "execute" in ids and ids.index("execute") == ids.index("apply_patch") + 1
    assert not [i for i in ids if i.startswith("demo_")]
    assert {"list_mcp_resources", "read_mcp_resource"} <= set(ids)
    assert hidden["demo_echo"] == CALLED_FROM_CODE
    description = next(d for d in offer.tools if d.id == "execute").description
    assert description.startswith("Run a confined orchestration script with access to connected MCP tools.")
    assert "\ntools.demo.echo(text: str) -> str\n    Return the text unchanged." in description
    assert (
        'tools.demo.nested(order: {"customer": str, "size": Literal["small", "large"], '
        '"items": list[{"name": str, "quantity": int}]}) -> str'
    ) in description
    assert "tools.demo.slow(seconds: float) -> str" in description


def test_without_code_mode_the_mcp_tools_are_offered(make_project: Any, demo: Path) -> None:
    offer = _offer(make_project())
    hidden = {h.entry.id: h.reason for h in offer.hidden}

    assert "demo_echo" in offer.ids() and "execute" not in offer.ids()
    assert hidden["execute"] == "code mode is off (OPENCODE_EXPERIMENTAL_CODE_MODE)"


def test_no_execute_without_a_visible_mcp_tool(make_project: Any, project_dir: Path, demo: Path) -> None:
    denied = _offer(make_project(extra_env=CODE_MODE), rules=[Rule("demo_*", "*", "deny", "test")])
    assert "execute" not in denied.ids()
    assert {h.entry.id: h.reason for h in denied.hidden}["execute"].startswith("offered only when MCP tools")

    (project_dir / "opencode.toml").unlink()
    none = make_project(extra_env=CODE_MODE).generation.offer()
    assert "execute" not in none.ids()


def test_tools_switched_off_or_denied_leave_the_catalogue(make_project: Any, project_dir: Path) -> None:
    write_config(project_dir, tools={"demo_echo": False})
    offer = _offer(make_project(extra_env=CODE_MODE), rules=[Rule("demo_slow", "*", "deny", "test")])
    description = next(d for d in offer.tools if d.id == "execute").description

    assert "tools.demo.echo(" not in description and "tools.demo.slow(" not in description
    assert "tools.demo.many_lines(count: int) -> str" in description
