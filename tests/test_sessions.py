"""Sessions: context managers, transcripts kept in the store and resumed by id, and child sessions."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from opencode_cli import ToolContext, ToolError, hookimpl, tool
from opencode_cli.errors import NotFoundError
from opencode_cli.permission import Rule, evaluate, merge
from opencode_cli.project import Project
from opencode_cli.session import ToolCall
from opencode_cli.transcript import ToolCallPart

ProjectFactory = Callable[..., Project]


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def test_calls_are_recorded_as_tool_parts_of_the_assistant_message(make_project: ProjectFactory) -> None:
    project = make_project()
    (project.directory / "notes.txt").write_text("one\ntwo\n")

    async def main() -> Any:
        async with project.session(model="anthropic/claude-sonnet-4-5") as session:
            session.user("Read my notes.")
            session.resolve()
            part = await session.dispatch(ToolCall("read", '{"filePath": "notes.txt"}', id="call_1"))
            bad = await session.dispatch(ToolCall("read", '{"filePath": 5}', id="call_2"))
            return session, part, bad

    session, part, bad = run(main())
    user, assistant = session.messages
    assert user.role == "user" and user.text == "Read my notes."
    assert assistant.role == "assistant" and assistant.parent_id == user.id
    first, second = assistant.parts
    assert isinstance(first, ToolCallPart) and isinstance(second, ToolCallPart)
    assert (first.call_id, first.tool, first.status) == ("call_1", "read", "completed")
    assert first.input == {"filePath": "notes.txt"} and first.output == part.output
    assert second.status == "error" and second.error == bad.error
    data = assistant.as_dict()
    assert data["info"]["role"] == "assistant" and data["info"]["sessionID"] == session.id
    assert data["parts"][0]["type"] == "tool" and data["parts"][0]["callID"] == "call_1"
    assert data["parts"][0]["state"]["status"] == "completed"


def test_sync_code_runs_a_call_through_its_session_and_the_project_runs_none(
    make_project: ProjectFactory,
) -> None:
    """The sync façade lives on the session: ``session.run_tool`` runs the call on the project's loop and
    records it in that session; ``Project.run_tool`` only opens a session for it. From a running loop
    both refuse with a clear error rather than block it."""
    project = make_project()
    (project.directory / "notes.txt").write_text("one\ntwo\n")
    with project.session() as session:
        result = session.run_tool("read", {"filePath": "notes.txt"})
        (part,) = session.assistant().parts
    assert "one" in result.output
    assert isinstance(part, ToolCallPart) and (part.tool, part.status) == ("read", "completed")
    assert "one" in project.run_tool("read", {"filePath": "notes.txt"}).output

    async def inside_a_loop() -> list[str]:
        refusals = []
        for call in (
            lambda: project.session().run_tool("read", {"filePath": "notes.txt"}),
            lambda: project.run_tool("read", {"filePath": "notes.txt"}),
        ):
            with pytest.raises(RuntimeError) as caught:
                call()
            refusals.append(str(caught.value))
        return refusals

    from_session, from_project = run(inside_a_loop())
    assert "use `await session.execute(...)` here" in from_session
    assert "use `await project.arun_tool(...)` here" in from_project


def test_the_tool_context_reaches_the_project_session_and_model(make_project: ProjectFactory) -> None:
    seen: dict[str, Any] = {}

    @tool
    def probe(ctx: ToolContext) -> str:
        """Look around."""
        seen.update(project=ctx.project, session=ctx.session, model=ctx.model, message=ctx.message_id)
        return "ok"

    class Plugin:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(probe)

    project = make_project(plugins=[("probe", Plugin())])

    async def main() -> Any:
        async with project.session(model="gpt-5") as session:
            await session.execute("probe", {})
            return session

    session = run(main())
    assert seen["project"] is project and seen["session"] is session
    assert str(seen["model"]) == "openai/gpt-5"
    assert seen["message"] == session.messages[-1].id  # the assistant message the call belongs to


def test_a_transcript_survives_a_process_restart(
    make_project: ProjectFactory, env: dict[str, str], project_dir: Path
) -> None:
    (project_dir / "notes.txt").write_text("kept\n")
    script = """
import asyncio, sys
from opencode_cli.project import Project

async def main():
    async with Project(sys.argv[1]) as project:
        async with project.session(id="ses_restart", remember=True, title="Restart") as session:
            session.user("read it")
            await session.execute("read", {"filePath": "notes.txt"}, call_id="call_r")

asyncio.run(main())
"""
    subprocess.run(
        [sys.executable, "-c", script, str(project_dir)], env=env, check=True, timeout=60, cwd=project_dir
    )
    project = make_project()
    session = project.resume("ses_restart")
    user, assistant = session.messages
    assert user.text == "read it" and session.title == "Restart" and session.agent.name == "build"
    [part] = assistant.parts
    assert isinstance(part, ToolCallPart) and part.status == "completed" and "kept" in (part.output or "")
    assert json.loads(json.dumps(session.transcript.as_dicts())) == session.transcript.as_dicts()
    # and it goes on where it stopped
    run(_read_again(session))
    resumed = project.resume("ses_restart").messages  # a call after resuming is a new assistant turn
    assert [m.role for m in resumed] == ["user", "assistant", "assistant"] and len(resumed[-1].parts) == 1
    with pytest.raises(NotFoundError):
        project.resume("ses_unknown")


async def _read_again(session: Any) -> None:
    async with session:
        await session.execute("read", {"filePath": "notes.txt"})


def test_a_child_session_inherits_denies_and_is_denied_task_and_todowrite(
    make_project: ProjectFactory, project_dir: Path
) -> None:
    (project_dir / "opencode.toml").write_text('[experimental]\nprimary_tools = ["webfetch"]\n')
    project = make_project()
    parent = project.session(rules=[Rule("bash", "rm *", "deny", "test"), Rule("grep", "*", "allow", "test")])
    child = parent.child("general", title="Look around (@general subagent)")
    assert child.parent is parent and child.parent_id == parent.id and child.depth == 1
    assert child.agent.name == "general"
    rules = merge(child.agent.permission, child.rules)
    assert evaluate("bash", "rm -rf /", rules).action == "deny"  # the parent's deny
    assert evaluate("grep", "x", rules).action == "allow"  # the parent's allows are not inherited...
    assert Rule("grep", "*", "allow") not in child.rules  # ...but the subagent's own rules allow it
    assert evaluate("task", "explore", rules).action == "deny"
    assert evaluate("todowrite", "*", rules).action == "deny"
    assert evaluate("webfetch", "*", rules).action == "deny"  # experimental.primary_tools
    assert {"task", "todowrite"}.isdisjoint(
        d.id for d in project.generation.offer(agent=child.agent, rules=child.rules).tools
    )
    external = [rule for rule in child.rules if rule.permission == "external_directory"]
    assert external and all(rule.source.startswith("parent") for rule in external)

    async def main() -> None:
        async with child:
            with pytest.raises(ToolError, match="prevents you from using this specific tool call"):
                await child.execute("todowrite", {"todos": []})

    run(main())
    grandchild = child.child("explore")
    assert (
        grandchild.depth == 2
        and evaluate("bash", "rm x", merge(grandchild.agent.permission, grandchild.rules)).action == "deny"
    )


def test_a_subagent_that_mentions_task_keeps_its_own_rule(
    make_project: ProjectFactory, project_dir: Path
) -> None:
    (project_dir / "opencode.toml").write_text(
        '[agent.lead]\nmode = "subagent"\n[agent.lead.permission]\ntask = "allow"\n'
    )
    project = make_project()
    child = project.session().child("lead")
    assert not any(rule.permission == "task" for rule in child.rules)
    assert evaluate("task", "general", merge(child.agent.permission, child.rules)).action == "allow"
    assert any(rule.permission == "todowrite" and rule.action == "deny" for rule in child.rules)


def test_tools_config_switches_a_tool_off_by_id(make_project: ProjectFactory, project_dir: Path) -> None:
    (project_dir / "opencode.toml").write_text('[tools]\nwebfetch = false\n"todo*" = false\n')
    project = make_project()
    offer = project.generation.offer()
    hidden = {h.entry.id: h.reason for h in offer.hidden}
    assert hidden["webfetch"] == "switched off by [tools] in config"
    assert hidden["todowrite"] == "switched off by [tools] in config"
    assert "read" in offer.ids()


def test_a_closed_session_cancels_its_open_prompts(make_project: ProjectFactory, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x")

    async def main() -> None:
        waiting = asyncio.Event()
        project = make_project()

        async def prompt(request: Any) -> Any:
            waiting.set()
            await asyncio.sleep(3600)

        session = project.session(prompt=prompt)
        task = asyncio.create_task(session.execute("read", {"filePath": str(outside)}))
        await waiting.wait()
        session.close()  # an abort of the running call (issue 25): it ends as interrupted
        with pytest.raises(ToolError, match=r"^\[Tool execution was interrupted\]$"):
            await task
        assert project.permissions.pending() == []  # and its request is not left waiting

    run(main())


def test_sources_can_report_a_change_and_only_that_source_is_rebuilt(make_project: ProjectFactory) -> None:
    from opencode_cli.sources import Contribution, Source

    builds: list[int] = []

    class Counter(Source):
        key = "demo:counter"
        kind = "mcp"

        def __init__(self) -> None:
            self.version = 1

        def build(self, previous: Contribution | None, warn: Callable[[str], None]) -> Contribution:
            builds.append(self.version)
            made = tool(lambda: "ok", id=f"counter_v{self.version}", description="Count.")
            return Contribution(self, [(made, None)])

    project = make_project()
    source = Counter()
    project.sources.add(source)
    assert "counter_v1" in project.registry.entries
    reports: list[Any] = []

    async def main() -> None:
        async with project.watch(on_change=reports.append):
            source.version = 2
            source.report_change()
            for _ in range(500):
                if reports:
                    break
                await asyncio.sleep(0.01)

    run(main())
    [report] = reports
    assert [t.id for t in report.added] == ["counter_v2"] and [t.id for t in report.removed] == ["counter_v1"]
    assert builds == [1, 2]
    assert "counter_v2" in project.registry.entries


def test_the_store_is_untouched_by_sessions_that_are_not_remembered(make_project: ProjectFactory) -> None:
    from opencode_cli import paths

    project = make_project()
    project.run_tool("invalid", {"tool": "x", "error": "y"})
    assert not (paths.data_dir(project.env) / "opencode.db").exists()
    with project.session(remember=True) as session:
        session.user("hello")
    assert (paths.data_dir(project.env) / "opencode.db").exists()


def test_without_a_watcher_the_project_rebuilds_a_source_that_reports_a_change(
    make_project: ProjectFactory,
) -> None:
    from opencode_cli.sources import Contribution, Source

    class Versioned(Source):
        key = "demo:versioned"
        kind = "mcp"
        version = 1

        def build(self, previous: Contribution | None, warn: Callable[[str], None]) -> Contribution:
            return Contribution(self, [(tool(lambda: "ok", id=f"v{self.version}", description="V."), None)])

    project = make_project()
    assert "read" in project.registry.entries  # the registry is built before the source comes
    source = Versioned()
    project.sources.add(source)
    assert "v1" in project.registry.entries and project.generation.number == 2
    source.version = 2
    source.report_change()
    assert "v2" in project.registry.entries and "v1" not in project.registry.entries
    assert project.generation.number == 3


def test_use_agent_switches_the_agent_and_what_is_offered(make_project) -> None:
    project = make_project()
    with project.session("build") as session:
        assert "edit" in {tool.name for tool in session.resolve()}
        agent = session.use_agent("explore")
        assert session.agent is agent and agent.name == "explore"
        assert session.transcript.info.agent == "explore"
        assert "edit" not in {tool.name for tool in session.resolve()}
