"""The agent loop (``Session.run``), ``task`` and ``opencode run`` against the scripted OpenAI-compatible
server on 127.0.0.1: what the server receives and what the run does."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _scripted import ScriptedModel, call, configure, local_config, opencode

from opencode_cli import AbortSignal
from opencode_cli.errors import AbortedError
from opencode_cli.models import ModelError
from opencode_cli.models.loop import STEP_LIMIT_NOTE
from opencode_cli.project import Project
from opencode_cli.session import Decision
from opencode_cli.wire import render

ProjectFactory = Callable[..., Project]


def run(coroutine: Any, timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def yes(request: Any) -> Decision:
    return Decision("once")


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["body"]["messages"] if m["role"] == "tool"]


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request["body"].get("tools", [])]


@pytest.fixture
def notes_project(local_project: Callable[..., Project], project_dir: Path) -> Project:
    (project_dir / "notes.txt").write_text("one\ntwo\n")
    return local_project()


def test_read_then_edit_then_answer(
    notes_project: Project, scripted_model: ScriptedModel, project_dir: Path
) -> None:
    scripted_model.script(
        [
            {"text": "Let me look.", "tool_calls": [call("c1", "read", filePath="notes.txt")]},
            {"tool_calls": [call("c2", "edit", filePath="notes.txt", oldString="two", newString="three")]},
            {"text": "Changed two into three."},
        ]
    )

    async def main() -> Any:
        async with notes_project, notes_project.session(prompt=yes) as session:
            result = await session.run("Replace two by three in notes.txt")
            return session, result, render(session.resolve(), "openai")

    session, result, payload = run(main())
    assert (project_dir / "notes.txt").read_text() == "one\nthree\n"
    assert (result.text, result.reason, result.steps) == ("Changed two into three.", "stop", 3)
    first, second, third = scripted_model.requests()
    assert first["body"]["tools"] == payload  # what `opencode tools schema` prints for this model
    assert first["body"]["messages"][0]["role"] == "system"
    assert first["body"]["messages"][-1] == {"role": "user", "content": "Replace two by three in notes.txt"}
    [read_result] = tool_messages(second)
    assert read_result["tool_call_id"] == "c1" and "1: one" in read_result["content"]
    assert [m["tool_call_id"] for m in tool_messages(third)] == ["c1", "c2"]
    roles = [m.role for m in session.messages]
    assert roles == ["user", "assistant", "assistant", "assistant"]


def test_parallel_calls_and_a_malformed_one(notes_project: Project, scripted_model: ScriptedModel) -> None:
    broken = {"id": "c3", "name": "read", "arguments": '{"filePath": '}
    scripted_model.script(
        [
            {
                "tool_calls": [
                    call("c1", "read", filePath="notes.txt"),
                    call("c2", "glob", pattern="*.txt"),
                    broken,
                ],
                "interleave": True,
            },
            {"text": "Done."},
        ]
    )

    async def main() -> Any:
        async with notes_project, notes_project.session(prompt=yes) as session:
            return await session.run("look"), session

    result, session = run(main())
    assert result.text == "Done."
    results = tool_messages(scripted_model.requests()[1])
    assert [m["tool_call_id"] for m in results] == ["c1", "c2", "c3"]
    assert "notes.txt" in results[1]["content"]
    assert "JSON parsing failed" in results[2]["content"]  # repaired into invalid; the run went on
    parts = session.messages[1].parts
    assert [part.tool for part in parts] == ["read", "glob", "invalid"]


def test_the_step_limit_asks_for_an_answer_without_tools(
    make_project: ProjectFactory, scripted_model: ScriptedModel, project_dir: Path
) -> None:
    (project_dir / "notes.txt").write_text("x\n")
    config = local_config(scripted_model.url)
    config["agent"] = {"build": {"steps": 1}}
    configure(project_dir, config)
    project = make_project()
    scripted_model.script(
        [
            {"tool_calls": [call("c1", "read", filePath="notes.txt")]},
            {"text": "Out of steps; read notes.txt."},
        ]
    )

    async def main() -> Any:
        async with project, project.session(prompt=yes) as session:
            return await session.run("go")

    result = run(main())
    assert result.reason == "step-limit" and result.text == "Out of steps; read notes.txt."
    last = scripted_model.requests()[-1]["body"]
    assert "tools" not in last and last["messages"][-1] == {"role": "user", "content": STEP_LIMIT_NOTE}


def test_model_failures_are_one_line(notes_project: Project, scripted_model: ScriptedModel) -> None:
    scripted_model.script([{"status": 401, "body": {"error": {"message": "bad key"}}}])

    async def main() -> None:
        async with notes_project, notes_project.session(prompt=yes) as session:
            await session.run("hi")

    with pytest.raises(ModelError) as failed:
        run(main())
    assert str(failed.value) == "local: 401 Unauthorized: bad key"


def test_an_abort_mid_stream_keeps_the_session(notes_project: Project, scripted_model: ScriptedModel) -> None:
    scripted_model.script([{"text": "a long answer that takes its time", "split": 8, "pause": 2}])

    async def main() -> Any:
        abort = AbortSignal()
        streaming = asyncio.Event()

        def on_event(kind: str, data: Any) -> None:
            if kind == "text":
                streaming.set()

        async with (
            notes_project,
            notes_project.session(prompt=yes, remember=True, id="ses_aborted") as session,
        ):
            task = asyncio.create_task(session.run("hi", abort=abort, on_event=on_event))
            await streaming.wait()  # mid-stream: the first piece is in, the next ones are seconds away
            abort.abort()
            with pytest.raises(AbortedError):
                await task
            return session

    session = run(main())
    resumed = notes_project.resume("ses_aborted")
    assert [m.role for m in resumed.messages] == [m.role for m in session.messages][: len(resumed.messages)]
    assert resumed.messages[0].text == "hi"


def test_task_runs_a_subagent_with_its_own_tools_and_rules(
    notes_project: Project, scripted_model: ScriptedModel
) -> None:
    scripted_model.script(
        [
            {
                "tool_calls": [
                    call(
                        "p1", "task", description="Look around", prompt="Find notes", subagent_type="explore"
                    )
                ]
            },
            {"tool_calls": [call("k1", "edit", filePath="notes.txt", oldString="one", newString="1")]},
            {"text": "notes.txt has two lines; I may not edit."},
            {"text": "The explorer says: two lines."},
        ]
    )
    progress: list[Any] = []

    async def main() -> Any:
        async with (
            notes_project,
            notes_project.session(prompt=yes, on_metadata=lambda t, m: progress.append((t, m))) as session,
        ):
            return await session.run("Ask an explorer"), session

    result, session = run(main())
    assert result.text == "The explorer says: two lines."
    parent_first, child_first, child_second, parent_second = scripted_model.requests()
    assert "task" in tool_names(parent_first)
    assert "edit" not in tool_names(child_first) and "task" not in tool_names(child_first)
    [denied] = tool_messages(child_second)
    # explore denies "*", invalid included: the repaired call fails naming invalid (issue 28 item 6)
    listing = ", ".join(sorted(tool_names(child_first)))
    assert "invalid" not in listing
    assert denied["content"] == f"Model tried to call unavailable tool 'invalid'. Available tools: {listing}."
    [task_result] = tool_messages(parent_second)
    [child] = session.children.values()
    assert task_result["content"] == (
        f'<task id="{child.id}" state="completed">\n<task_result>\n'
        "notes.txt has two lines; I may not edit.\n</task_result>\n</task>"
    )
    assert child.agent.name == "explore" and child.title == "Look around (@explore subagent)"
    assert any(title == "Look around" and meta.get("sessionId") == child.id for title, meta in progress)


def test_task_resumes_by_task_id_and_keeps_the_depth_limit(
    make_project: ProjectFactory, scripted_model: ScriptedModel, project_dir: Path
) -> None:
    config = local_config(scripted_model.url)
    config["agent"] = {"general": {"permission": {"task": "allow"}}}  # so the depth limit is what stops it
    configure(project_dir, config)
    project = make_project()
    first_run = [
        {
            "tool_calls": [
                call("p1", "task", description="First", prompt="Remember 42", subagent_type="general")
            ]
        },
        {"tool_calls": [call("g1", "task", description="Deeper", prompt="x", subagent_type="general")]},
        {"text": "noted 42"},
        {"text": "asked once"},
    ]
    scripted_model.script(first_run)

    async def main() -> Any:
        async with project, project.session(prompt=yes) as session:
            await session.run("start")
            [child] = session.children.values()
            again = {"description": "Again", "prompt": "What was it?", "subagent_type": "general"}
            scripted_model.script(
                [
                    {"tool_calls": [call("p2", "task", **again, task_id=child.id)]},
                    {"text": "it was 42"},
                    {"text": "done"},
                ]
            )
            await session.run("again")
            return session

    session = run(main())
    requests = scripted_model.requests()
    [depth] = tool_messages(requests[2])  # the child's second request carries its task call's result
    assert (
        depth["content"]
        == 'Subagent depth limit reached (1). Increase "subagent_depth" to allow nested subagents.'
    )
    resumed_child = requests[len(first_run) + 1]["body"]["messages"]
    assert any(m["role"] == "user" and m["content"] == "Remember 42" for m in resumed_child)  # its history
    assert resumed_child[-1] == {"role": "user", "content": "What was it?"}
    assert len(session.children) == 1


# -- opencode run, as a real process ----------------------------------------------------------------------


def test_opencode_run_streams_the_answer_and_shows_tool_calls(
    notes_project: Project, scripted_model: ScriptedModel, project_dir: Path, env: dict[str, str]
) -> None:
    scripted_model.script(
        [
            {"text": "Reading.", "tool_calls": [call("c1", "read", filePath="notes.txt")]},
            {"text": "It has two lines."},
        ]
    )
    done = opencode(project_dir, env, "run", "How long is notes.txt?", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Reading.\nIt has two lines.\n"
    assert "→ read" in done.stderr and "✓ read" in done.stderr and "--session ses_" in done.stderr
    schema = opencode(project_dir, env, "tools", "schema", "--model", "local/scripted-model")
    assert json.loads(schema.stdout) == scripted_model.requests()[0]["body"]["tools"]


def test_opencode_run_json_events_and_failures(
    notes_project: Project, scripted_model: ScriptedModel, project_dir: Path, env: dict[str, str]
) -> None:
    scripted_model.script([{"tool_calls": [call("c1", "glob", pattern="*.txt")]}, {"text": "ok"}])
    done = opencode(project_dir, env, "run", "list", "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [event["type"] for event in events]
    assert (
        kinds[0] == "step"
        and "tool-start" in kinds
        and "tool-end" in kinds
        and kinds[-2:] == ["finish", "exit"]
    )
    assert events[-2]["text"] == "ok" and events[-2]["reason"] == "stop"
    assert (events[-1]["code"], events[-1]["reason"]) == (0, "answered")
    for status, line in [(500, "local: 500 Internal Server Error"), (429, "local: 429 Too Many Requests")]:
        scripted_model.script([{"status": status, "body": {"error": {"message": "no"}}}])
        failed = opencode(project_dir, env, "run", "hi")
        assert failed.returncode == 1 and f"error: {line}: no" in failed.stderr
        assert "Traceback" not in failed.stderr
    scripted_model.script([{"text": "half an answer", "cut_after": 2}])
    cut = opencode(project_dir, env, "run", "hi")
    assert cut.returncode == 1 and "the stream from local broke off" in cut.stderr
    usage = opencode(project_dir, env, "run", "hi", "--agent", "nobody")
    assert usage.returncode == 2 and "no agent named 'nobody'" in usage.stderr


def test_task_is_offered_to_every_model_in_opencodes_order_with_the_callers_subagents(
    make_project: ProjectFactory, project_dir: Path
) -> None:
    (project_dir / "opencode.toml").write_text(
        '[agent.reviewer]\nmode = "subagent"\n\n[agent.lead]\nmode = "primary"\n'
        '[agent.lead.permission]\ntask = { "*" = "allow", "general" = "deny" }\n'
    )
    project = make_project()
    for model in ("openai/gpt-5", "anthropic/claude-sonnet-4-5", "google/gemini-2.5-pro", None):
        ids = project.generation.offer(model).ids()
        assert ids.index("grep") < ids.index("task") < ids.index("webfetch")  # core §3.1: after write
    build = next(d for d in project.generation.offer("gpt-5").tools if d.id == "task").description
    assert build.endswith(
        "Available agent types and the tools they have access to:\n"
        "- explore: A fast read-only subagent for finding files, searching code and answering questions "
        "about it.\n"
        "- general: A general-purpose subagent for research and multi-step tasks run in parallel.\n"
        "- reviewer: This subagent should only be called manually by the user."
    )
    lead = next(d for d in project.generation.offer("gpt-5", "lead").tools if d.id == "task").description
    assert "- general:" not in lead and "- explore:" in lead and "- reviewer:" in lead


def test_background_subagents_are_refused_with_a_clear_message(make_project: ProjectFactory) -> None:
    from opencode_cli import ToolError

    plain = make_project()
    assert "background" not in plain.registry.get("task").tool.load().schema()["properties"]
    with pytest.raises(ToolError, match="The task tool was called with invalid arguments"):
        plain.run_tool("task", {"background": True})
    flagged = make_project(extra_env={"OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS": "1"})
    task = next(d for d in flagged.generation.offer().tools if d.id == "task")
    assert "background" in task.parameters["properties"]
    assert "runs every task in the foreground: do not set background=true." in task.description
    arguments = {"description": "d", "prompt": "p", "subagent_type": "general", "background": True}
    with pytest.raises(ToolError, match="Background subagents are not supported by opencode-tools yet"):
        flagged.run_tool("task", arguments)


def test_a_task_resumed_from_the_store_runs_on_the_model_the_parent_runs_with(
    make_project: ProjectFactory, scripted_model: ScriptedModel, project_dir: Path
) -> None:
    config = local_config(scripted_model.url)
    del config["model"]  # the model comes from the host (--model), not from the config
    configure(project_dir, config)
    again = {"description": "Again", "prompt": "What was it?", "subagent_type": "general"}

    async def first() -> tuple[str, str]:
        project = make_project()
        scripted_model.script(
            [
                {
                    "tool_calls": [
                        call("p1", "task", description="First", prompt="Remember 42", subagent_type="general")
                    ]
                },
                {"text": "noted 42"},
                {"text": "done"},
            ]
        )
        async with (
            project,
            project.session(prompt=yes, model="local/scripted-model", remember=True) as session,
        ):
            await session.run("start")
            [child] = session.children.values()
            return session.id, child.id

    async def second(session_id: str, child_id: str) -> Any:
        project = make_project()  # a new process: the child is only in the store
        scripted_model.script(
            [
                {"tool_calls": [call("p2", "task", **again, task_id=child_id)]},
                {"text": "it was 42"},
                {"text": "done"},
            ]
        )
        async with project, project.resume(session_id, prompt=yes, model="local/scripted-model") as session:
            return await session.run("again"), session

    session_id, child_id = run(first())
    _, session = run(second(session_id, child_id))
    [resumed] = session.children.values()
    assert resumed.id == child_id and str(resumed.model) == "local/scripted-model"
    task_parts = [p for m in session.messages for p in m.parts if getattr(p, "tool", "") == "task"]
    assert task_parts[-1].status == "completed", task_parts[-1].error
    assert "it was 42" in task_parts[-1].output
