"""The plan agent writes plan files and nothing else (core spec §8.6), through the real ``write`` tool.

OpenCode allows ``edit`` for ``.opencode/plans/*.md`` and for the global plans folder ``<data>/plans/*.md``
written relative to the worktree (``path.relative(Instance.worktree, …)``), because the file tools ask
``edit`` with worktree-relative paths. The global folder is outside the project, and the default
``external_directory`` allowlist (§5.3: the truncation glob, tmp, skill folders; §5.4) does not name it,
so writing there first asks ``external_directory`` for ``<data>/plans/*``; once that is granted, ``edit``
is allowed without a second question.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from opencode_cli.agents import build_agents, plan_patterns
from opencode_cli.errors import DeniedError, RejectedError
from opencode_cli.permission import Request, evaluate
from opencode_cli.project import Project
from opencode_cli.session import Decision

DENIED = (
    "The user has specified a rule which prevents you from using this specific tool call. "
    "Here are some of the relevant rules {}"
)


class Recorder:
    """A session prompt that records each request and answers from a script (then rejects)."""

    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.requests: list[Request] = []

    async def __call__(self, request: Request) -> Decision:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else Decision("reject")


@pytest.fixture(params=["git", "plain"])
def git_or_plain_project(request: pytest.FixtureRequest, make_project: Any, tmp_path: Path) -> Project:
    """A project that is a git worktree root, and one outside git (its root is then the directory)."""
    if request.param == "git":
        return make_project()
    plain = tmp_path / "plain"
    plain.mkdir()
    return make_project(plain)


@pytest.fixture
def data(env: dict[str, str]) -> Path:
    """OpenCode's data folder in the test environment: ``$XDG_DATA_HOME/opencode``."""
    return Path(env["XDG_DATA_HOME"]) / "opencode"


def write_as_plan(project: Project, path: str, prompt: Recorder) -> Any:
    return project.run_tool("write", {"filePath": path, "content": "# plan\n"}, agent="plan", prompt=prompt)


def test_plan_rules_are_worktree_relative(git_or_plain_project: Project, data: Path) -> None:
    plans = os.path.relpath(data / "plans" / "*.md", git_or_plain_project.root)
    assert plans.startswith("../") and plans.endswith("/xdg-data/opencode/plans/*.md")
    plan = git_or_plain_project.generation.agents["plan"]
    edit = [r.as_dict() for r in plan.permission if r.permission == "edit"]
    assert edit == [
        {"permission": "edit", "pattern": "*", "action": "deny"},
        {"permission": "edit", "pattern": ".opencode/plans/*.md", "action": "allow"},
        {"permission": "edit", "pattern": plans, "action": "allow"},
    ]


def test_plan_agent_writes_a_project_plan_file_without_asking(git_or_plain_project: Project) -> None:
    prompt = Recorder()
    result = write_as_plan(git_or_plain_project, ".opencode/plans/x.md", prompt)
    assert result.title == ".opencode/plans/x.md"
    assert prompt.requests == []
    assert (git_or_plain_project.root / ".opencode" / "plans" / "x.md").read_text() == "# plan\n"


def test_plan_agent_writes_a_global_plan_file_after_the_external_directory_ask(
    git_or_plain_project: Project, data: Path
) -> None:
    target = data / "plans" / "y.md"
    prompt = Recorder(Decision("once"))
    result = write_as_plan(git_or_plain_project, str(target), prompt)
    assert target.read_text() == "# plan\n"
    assert result.title == os.path.relpath(target, git_or_plain_project.root)
    # the only question is the directory outside the project; edit itself is allowed by the plan rule
    (asked,) = prompt.requests
    assert asked.permission == "external_directory"
    assert asked.patterns == asked.always == [f"{data / 'plans'}/*"]


def test_the_global_plan_folder_is_not_in_the_external_directory_allowlist(
    git_or_plain_project: Project, data: Path
) -> None:
    rules = git_or_plain_project.generation.agents["plan"].permission
    assert evaluate("external_directory", f"{data / 'plans'}/*", rules).action == "ask"
    assert (
        evaluate("edit", os.path.relpath(data / "plans" / "y.md", git_or_plain_project.root), rules).action
        == "allow"
    )


def test_a_refused_external_directory_keeps_the_global_plan_file_unwritten(
    git_or_plain_project: Project, data: Path
) -> None:
    prompt = Recorder()  # rejects
    with pytest.raises(RejectedError):
        write_as_plan(git_or_plain_project, str(data / "plans" / "y.md"), prompt)
    assert not (data / "plans" / "y.md").exists()


@pytest.mark.parametrize(
    "path", ["src/a.py", ".opencode/plans/x.txt", ".opencode/plans/sub/../../a.md", "plans/x.md"]
)
def test_plan_agent_is_denied_any_other_file(git_or_plain_project: Project, path: str) -> None:
    prompt = Recorder()
    with pytest.raises(DeniedError) as caught:
        write_as_plan(git_or_plain_project, path, prompt)
    assert prompt.requests == []
    assert not (git_or_plain_project.root / path).exists()
    # the relevant rules: those whose permission matches edit, each printed as OpenCode's config loader
    # builds it ("*" = "allow" is the short form; the edit table has pattern before action)
    plans = os.path.relpath(
        Path(git_or_plain_project.env["XDG_DATA_HOME"]) / "opencode" / "plans" / "*.md",
        git_or_plain_project.root,
    )
    rules = [
        {"permission": "*", "action": "allow", "pattern": "*"},
        {"permission": "edit", "pattern": "*", "action": "deny"},
        {"permission": "edit", "pattern": ".opencode/plans/*.md", "action": "allow"},
        {"permission": "edit", "pattern": plans, "action": "allow"},
    ]
    assert str(caught.value) == DENIED.format(json.dumps(rules, separators=(",", ":")))


def test_a_nested_project_plan_folder_is_not_a_plan_file(make_project: Any, project_dir: Path) -> None:
    """``.opencode/plans/*.md`` is relative to the worktree root, so a sub-folder's own plans are edits."""
    sub = project_dir / "pkg"
    sub.mkdir()
    project = make_project(sub)
    with pytest.raises(DeniedError):
        write_as_plan(project, ".opencode/plans/x.md", Recorder())
    assert not (sub / ".opencode" / "plans" / "x.md").exists()


def test_a_session_of_the_plan_agent_writes_the_plan_file(git_or_plain_project: Project) -> None:
    async def main() -> Any:
        async with git_or_plain_project.session("plan", prompt=Recorder()) as session:
            return await session.execute("write", {"filePath": ".opencode/plans/z.md", "content": "z\n"})

    result = git_or_plain_project.portal.call(main)
    assert result.title == ".opencode/plans/z.md"
    assert (git_or_plain_project.root / ".opencode" / "plans" / "z.md").read_text() == "z\n"


def test_plan_patterns() -> None:
    data = Path("/home/u/.local/share/opencode")
    assert plan_patterns(data, "/work/repo") == (
        ".opencode/plans/*.md",
        "../../home/u/.local/share/opencode/plans/*.md",
    )
    assert plan_patterns(data, "/home/u/.local/share/opencode") == (".opencode/plans/*.md", "plans/*.md")


def test_build_agents_without_a_root_keeps_working() -> None:
    agents = build_agents({}, home="/home/u", truncate_glob="/t/*", data_dir=Path("/d"))
    assert evaluate("edit", ".opencode/plans/a.md", agents["plan"].permission).action == "allow"
    assert evaluate("edit", "src/a.py", agents["plan"].permission).action == "deny"


def test_other_agents_still_edit_anything(git_or_plain_project: Project) -> None:
    result = git_or_plain_project.run_tool(
        "write", {"filePath": "src/a.py", "content": "x = 1\n"}, prompt=Recorder()
    )
    assert result.title == "src/a.py"
