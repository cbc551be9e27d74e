"""The ``config`` permission (issue 35, finding 2): writing the project's own configuration or trusted code
asks ``config`` on top of ``edit``, by default even where ``edit`` is allowed; a rule can allow it; the
``plan`` and ``explore`` agents deny it; ``permissions check config PATH`` explains it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from opencode_cli import Project
from opencode_cli.boundary import config_places
from opencode_cli.context import PermissionRequest
from opencode_cli.errors import DeniedError, RejectedError
from opencode_cli.session import Decision

TOOL_FILE = "from opencode_cli import tool\n\n@tool\ndef sneaky() -> str:\n    '''Hi.'''\n    return 'x'\n"


ADDED = "\n".join("+" + line for line in TOOL_FILE.splitlines())


class Prompt:
    """A user who answers every ask with ``reply`` and remembers what was asked."""

    def __init__(self, reply: str = "once") -> None:
        self.reply = reply
        self.asked: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.asked.append(request)
        return Decision(self.reply)  # type: ignore[arg-type]

    def of(self, permission: str) -> list[list[str]]:
        return [list(r.patterns) for r in self.asked if r.permission == permission]


def _calls(project_dir: Path) -> list[tuple[str, dict[str, Any], str]]:
    """(tool, arguments, the pattern ``config`` is asked with) for each tool and kind of config file."""
    toml = project_dir / "opencode.toml"
    return [
        (
            "write",
            {"filePath": str(toml), "content": '[permission]\nexternal_directory = "allow"\n'},
            "opencode.toml",
        ),
        (
            "edit",
            {"filePath": str(project_dir / "opencode.json"), "oldString": "{}", "newString": '{"a": 1}'},
            "opencode.json",
        ),
        (
            "apply_patch",
            {"patchText": f"*** Begin Patch\n*** Add File: .opencode/tools/x.py\n{ADDED}\n*** End Patch"},
            ".opencode/tools/x.py",
        ),
    ]


@pytest.fixture
def project_with_json(project_dir: Path) -> Path:
    (project_dir / "opencode.json").write_text("{}")
    return project_dir


@pytest.mark.parametrize("index", [0, 1, 2], ids=["write-toml", "edit-json", "patch-tool-file"])
def test_config_is_asked_even_where_edit_is_allowed(
    make_project: Any, project_with_json: Path, index: int
) -> None:
    project: Project = make_project()
    tool, args, pattern = _calls(project_with_json)[index]
    prompt = Prompt("reject")
    with pytest.raises(RejectedError):
        project.run_tool(tool, args, prompt=prompt)
    assert prompt.of("config") == [[pattern]]
    assert prompt.of("edit") == []  # edit is allowed by default: only config reached the user
    if tool == "write":
        assert not (project_with_json / "opencode.toml").exists()
    if tool == "apply_patch":
        assert not (project_with_json / ".opencode").exists()


@pytest.mark.parametrize("index", [0, 1, 2], ids=["write-toml", "edit-json", "patch-tool-file"])
def test_a_rule_allows_config(make_project: Any, project_with_json: Path, index: int) -> None:
    (project_with_json / "opencode.toml").write_text(
        '[permission.config]\n"opencode.*" = "allow"\n".opencode/tools/*" = "allow"\n'
    )
    project: Project = make_project()
    tool, args, _ = _calls(project_with_json)[index]
    if tool == "write":
        args = {**args, "content": '[permission.config]\n"*" = "allow"\n'}
    prompt = Prompt("reject")
    project.run_tool(tool, args, prompt=prompt)
    assert prompt.asked == []


def test_plan_and_explore_deny_config(make_project: Any, project_with_json: Path) -> None:
    project: Project = make_project()
    tool, args, _ = _calls(project_with_json)[1]
    for agent in ("plan", "explore"):
        with pytest.raises(DeniedError):
            project.run_tool(tool, args, agent=agent, prompt=Prompt("once"))
    assert json.loads((project_with_json / "opencode.json").read_text()) == {}


def test_ordinary_files_and_plan_files_do_not_ask_config(make_project: Any, project_dir: Path) -> None:
    project: Project = make_project()
    prompt = Prompt("reject")
    project.run_tool("write", {"filePath": str(project_dir / "src.py"), "content": "x = 1\n"}, prompt=prompt)
    plan = project_dir / ".opencode" / "plans" / "p.md"
    project.run_tool("write", {"filePath": str(plan), "content": "# plan\n"}, prompt=prompt)
    assert prompt.asked == []


def test_a_link_to_the_config_asks_config_by_where_it_leads(make_project: Any, project_dir: Path) -> None:
    (project_dir / "opencode.toml").write_text("")
    (project_dir / "innocent.txt").symlink_to(project_dir / "opencode.toml")
    project: Project = make_project()
    prompt = Prompt("reject")
    with pytest.raises(RejectedError):
        project.run_tool(
            "write", {"filePath": str(project_dir / "innocent.txt"), "content": "x"}, prompt=prompt
        )
    assert prompt.of("config") == [["opencode.toml"]]
    assert (project_dir / "opencode.toml").read_text() == ""


def test_the_global_config_directory_is_config(env: dict[str, str], project_dir: Path) -> None:
    places = config_places(project_dir, None, env)
    global_dir = Path(env["XDG_CONFIG_HOME"]).resolve() / "opencode"
    assert places.covers(str(global_dir / "opencode.toml"))
    assert places.covers(str(global_dir / "tools" / "t.py"))
    assert places.covers(str(project_dir.resolve() / ".opencode" / "agents" / "a.md"))
    assert not places.covers(str(project_dir.resolve() / ".opencode" / "plans" / "a.md"))
    assert not places.covers(str(project_dir.resolve() / "src" / "opencode.toml"))


def test_permissions_check_config_explains_it(tmp_path: Path, cli_env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "opencode_cli", "permissions", "check", "config", "opencode.toml"],
        cwd=tmp_path / "project",
        env=cli_env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "ask"
    assert lines[1].startswith("rule: config * -> ask  (from defaults")
    assert "opencode.toml" in lines[2] and ".opencode/" in lines[2]
    assert "warning" not in done.stderr
