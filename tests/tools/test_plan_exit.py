"""The built-in ``plan_exit`` tool (builtin-tools spec §15.2): gating (core spec §3.1-§3.2), the default
rules (spec §1.6), the question it asks and what each answer does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _harness import Asker

from opencode_cli import Project
from opencode_cli.errors import InvalidArgumentsError, ToolError

PLAN_MODE = {"OPENCODE_EXPERIMENTAL_PLAN_MODE": "1"}


@pytest.fixture
def plan_project(make_project: Any) -> Project:
    return make_project(extra_env=PLAN_MODE)


def run(project: Project, asker: Any, **options: Any) -> tuple[Any, Any]:
    session = project.session("plan", extra={"question": asker, **options.pop("extra", {})}, **options)
    import asyncio

    return asyncio.run(session.execute("plan_exit", {})), session


# -- gating ----------------------------------------------------------------------------------------------


def hidden_reason(project: Project) -> str | None:
    """Why the plan agent is not offered plan_exit (``None``: it is)."""
    return {h.entry.id: h.reason for h in project.generation.offer(agent="plan").hidden}.get("plan_exit")


def test_gated_without_plan_mode(make_project: Any) -> None:
    project = make_project()
    assert hidden_reason(project) == "experimental plan mode is off (OPENCODE_EXPERIMENTAL_PLAN_MODE)"
    assert "plan_exit" not in [d.id for d in project.tools(agent="plan")]


@pytest.mark.parametrize(
    "extra_env", [PLAN_MODE, {"OPENCODE_EXPERIMENTAL": "true"}, {**PLAN_MODE, "OPENCODE_CLIENT": "cli"}]
)
def test_offered_in_plan_mode_to_the_cli_client(make_project: Any, extra_env: dict[str, str]) -> None:
    project = make_project(extra_env=extra_env)
    assert hidden_reason(project) is None
    assert [d.id for d in project.tools(agent="plan")][-1] == "plan_exit"  # last of the built-ins


@pytest.mark.parametrize("client", ["app", "desktop", "acp"])
def test_gated_for_other_clients(make_project: Any, client: str) -> None:
    project = make_project(extra_env={**PLAN_MODE, "OPENCODE_CLIENT": client})
    assert (
        hidden_reason(project)
        == f"offered only to the cli client in plan mode (OPENCODE_CLIENT is {client!r})"
    )


def test_plan_mode_off_explicitly_wins_over_experimental(make_project: Any) -> None:
    env = {"OPENCODE_EXPERIMENTAL": "1", "OPENCODE_EXPERIMENTAL_PLAN_MODE": "0"}
    assert hidden_reason(make_project(extra_env=env)) is not None


@pytest.mark.parametrize(("agent", "offered"), [("plan", True), ("build", False), ("general", False)])
def test_allowed_only_for_the_plan_agent(plan_project: Project, agent: str, offered: bool) -> None:
    assert ("plan_exit" in [d.id for d in plan_project.tools(agent=agent)]) is offered


def test_takes_no_arguments(plan_project: Project) -> None:
    tool = plan_project.registry.get("plan_exit").tool.load()
    tool.validate({})
    tool.validate({"anything": 1})  # unknown keys are dropped
    schema = tool.schema()
    assert schema["properties"] == {} and "required" not in schema
    with pytest.raises(InvalidArgumentsError):
        tool.validate([])


# -- the question ------------------------------------------------------------------------------------------


def test_asks_to_switch_to_the_build_agent(plan_project: Project) -> None:
    asker = Asker([["Yes"]])
    _, session = run(plan_project, asker)
    [[question]] = asker.seen
    assert question == {
        "question": (
            f"Plan at .opencode/plans/{session.id}.md is complete. "
            "Would you like to switch to the build agent and start implementing?"
        ),
        "header": "Build Agent",
        "options": [
            {"label": "Yes", "description": "Switch to build agent and start implementing the plan"},
            {"label": "No", "description": "Stay with plan agent to continue refining the plan"},
        ],
        "multiple": False,
        "custom": False,
    }


def test_yes_switches_to_build(plan_project: Project) -> None:
    result, session = run(plan_project, Asker([["Yes"]]))
    assert result.output == "User approved switching to build agent. Wait for further instructions."
    assert result.title == "Switching to build agent"
    assert result.metadata == {"truncated": False}
    assistant, message = session.messages  # the plan_exit call, then the switch to build
    assert [part.tool for part in assistant.parts] == ["plan_exit"]  # type: ignore[union-attr]
    assert message.role == "user" and message.agent == "build" and message.parts[0].synthetic is True
    assert message.text == (
        f"The plan at .opencode/plans/{session.id}.md has been approved, you can now edit files. "
        "Execute the plan"
    )


@pytest.mark.parametrize("answer", [[["No"]], [[]], None])
def test_no_or_nothing_is_a_dismissal(plan_project: Project, answer: Any) -> None:
    session = plan_project.session("plan", extra={"question": Asker(answer)})
    import asyncio

    with pytest.raises(ToolError) as caught:
        asyncio.run(session.execute("plan_exit", {}))
    assert str(caught.value) == "The user dismissed this question"
    assert [message.role for message in session.messages] == ["assistant"]  # the failed call alone


def test_without_an_asker_it_fails(plan_project: Project) -> None:
    import asyncio

    with pytest.raises(ToolError, match="cannot be asked"):
        asyncio.run(plan_project.session("plan").execute("plan_exit", {}))


def test_outside_git_the_plan_lives_in_the_data_directory(
    make_project: Any, tmp_path: Path, env: dict[str, str]
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    project = make_project(plain, extra_env=PLAN_MODE)
    asker = Asker([["Yes"]])
    _, session = run(project, asker)
    plan = Path(env["XDG_DATA_HOME"]) / "opencode" / "plans" / f"{session.id}.md"
    assert asker.seen[0][0]["question"].startswith(f"Plan at {plan} is complete.")


def test_the_host_may_name_the_plan_file(plan_project: Project, project_dir: Path) -> None:
    asker = Asker([["Yes"]])
    run(plan_project, asker, extra={"plan_path": "docs/plan.md"})
    assert asker.seen[0][0]["question"].startswith("Plan at docs/plan.md is complete.")
