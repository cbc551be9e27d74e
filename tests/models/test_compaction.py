"""Compaction as OpenCode does it, against the scripted server: a run whose history exceeds a small
``limit.context`` is summarised by the model and goes on from the summary; the transcript marks it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _scripted import ScriptedModel, configure, local_config

from opencode_cli import hookimpl
from opencode_cli.models.compaction import CONTINUE, SUMMARY_PROMPT
from opencode_cli.models.conversation import COMPACTION_QUESTION
from opencode_cli.project import Project
from opencode_cli.transcript import CompactionPart

FULL = {"prompt_tokens": 950, "completion_tokens": 20, "total_tokens": 970}


def run(coroutine: Any, timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


def read(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": "read", "arguments": json.dumps({"filePath": "notes.txt"})}


def small_context(project_dir: Path, url: str, **compaction: Any) -> None:
    config = local_config(url)
    limit = {"context": 1000, "output": 100}
    config["provider"]["local"]["models"] = {"scripted-model": {"limit": limit}}
    if compaction:
        config["compaction"] = compaction
    configure(project_dir, config)


class Compacting:
    @hookimpl
    def session_compacting(self, output: Any) -> None:
        output.context.append("Mention notes.txt by name.")


def test_hook_session_compacting(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    """The history outgrows limit.context: the model summarises, the run goes on from the summary."""
    (project_dir / "notes.txt").write_text("one\n")
    small_context(project_dir, scripted_model.url)
    project = make_project(plugins=[("compacting", Compacting())])
    scripted_model.script(
        [
            {"tool_calls": [read("c1")], "usage": FULL},
            {"text": "We read notes.txt: it says one."},
            {"text": "notes.txt says one."},
        ]
    )
    events: list[str] = []

    async def main() -> Any:
        async with project, project.session(remember=True) as session:
            result = await session.run("What is in notes.txt?", on_event=lambda kind, _: events.append(kind))
            return result, session

    result, session = run(main())
    assert result.text == "notes.txt says one." and "compaction" in events
    _, summary_request, after = (request["body"] for request in scripted_model.requests())
    assert "tools" not in summary_request
    assert summary_request["messages"][-1]["content"] == f"{SUMMARY_PROMPT}\n\nMention notes.txt by name."
    assert any(m["role"] == "tool" for m in summary_request["messages"])  # the whole history is summarised
    continued = [(m["role"], m.get("content")) for m in after["messages"] if m["role"] != "system"]
    assert continued == [
        ("user", COMPACTION_QUESTION),
        ("assistant", "We read notes.txt: it says one."),
        ("user", CONTINUE),
    ]
    kept = project.resume(session.id).messages
    [marked] = [m for m in kept if any(isinstance(p, CompactionPart) for p in m.parts)]
    summary = kept[kept.index(marked) + 1]
    assert summary.summary and summary.text == "We read notes.txt: it says one."
    assert kept[0].text == "What is in notes.txt?"  # the transcript keeps everything


def test_compaction_auto_false_keeps_the_history(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    (project_dir / "notes.txt").write_text("one\n")
    small_context(project_dir, scripted_model.url, auto=False)
    project = make_project()
    scripted_model.script([{"tool_calls": [read("c1")], "usage": FULL}, {"text": "one"}])

    async def main() -> Any:
        async with project, project.session() as session:
            return await session.run("What is in notes.txt?")

    assert run(main()).text == "one"
    assert len(scripted_model.requests()) == 2


def test_old_tool_outputs_are_pruned_first(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    from opencode_cli.models.conversation import CLEARED

    for number in range(1, 6):  # five reads of 50 KB (the read tool's cap): about 64k tokens
        (project_dir / f"big{number}.txt").write_text(("x" * 99 + "\n") * 1000)
    small_context(project_dir, scripted_model.url)
    project = make_project()
    reads = [
        {"id": f"c{n}", "name": "read", "arguments": json.dumps({"filePath": f"big{n}.txt"})}
        for n in range(1, 6)
    ]

    async def main() -> Any:
        async with project, project.session() as session:
            scripted_model.script([{"tool_calls": reads}, {"text": "read them"}])
            await session.run("first")
            scripted_model.script([{"text": "fine"}])
            await session.run("second")
            scripted_model.script(
                [{"tool_calls": [read("c9")], "usage": FULL}, {"text": "summary"}, {"text": "done"}]
            )
            return await session.run("third")

    assert run(main()).text == "done"
    summary_request = scripted_model.requests()[-2]["body"]
    tools = {m["tool_call_id"]: m["content"] for m in summary_request["messages"] if m["role"] == "tool"}
    cleared = [tools[f"c{n}"] == CLEARED for n in range(1, 6)]
    assert cleared[0] and not cleared[-1] and cleared == sorted(cleared, reverse=True), (
        cleared
    )  # oldest first
    assert tools["c9"] != CLEARED


def test_agents_md_is_shown_again_after_a_compaction(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    sub = project_dir / "sub"
    sub.mkdir()
    (sub / "AGENTS.md").write_text("Use tabs in sub/.\n")
    (sub / "a.txt").write_text("a\n")
    (sub / "b.txt").write_text("b\n")
    (sub / "c.txt").write_text("c\n")
    small_context(project_dir, scripted_model.url)
    project = make_project()

    def reading(call_id: str, name: str) -> dict[str, Any]:
        return {"id": call_id, "name": "read", "arguments": json.dumps({"filePath": f"sub/{name}"})}

    scripted_model.script(
        [
            {"tool_calls": [reading("c1", "a.txt")]},
            {"tool_calls": [reading("c2", "b.txt")], "usage": FULL},  # full: compacted after this step
            {"text": "summary"},
            {"tool_calls": [reading("c3", "c.txt")]},
            {"text": "done"},
        ]
    )

    async def main() -> Any:
        async with project, project.session(remember=True) as session:
            return await session.run("read the files in sub/")

    assert run(main()).text == "done"
    requests = scripted_model.requests()

    def result(request: dict[str, Any], call_id: str) -> str:
        [found] = [m["content"] for m in request["body"]["messages"] if m.get("tool_call_id") == call_id]
        return found

    assert "Use tabs in sub/." in result(requests[1], "c1")
    assert "Use tabs in sub/." not in result(requests[2], "c2")  # shown once before the compaction
    assert "Use tabs in sub/." in result(requests[4], "c3")  # and again after it


def test_well_known_models_have_limits_and_a_table_wins(
    make_project: Callable[..., Project], project_dir: Path
) -> None:
    from opencode_cli.models.chat import resolve_model

    config = {
        "provider": {
            "anthropic": {"options": {"apiKey": "k"}},
            "google": {"models": {"gemini-2.5-pro": {"limit": {"context": 5000}}}},
        }
    }
    configure(project_dir, config)
    project = make_project()

    async def limits(model: str) -> Any:
        async with project:
            return (await resolve_model(project, model)).limits

    sonnet = run(limits("anthropic/claude-sonnet-4-5"))
    assert (sonnet.context, sonnet.output) == (200_000, 64_000)
    gemini = run(limits("google/gemini-2.5-pro"))
    assert (gemini.context, gemini.output) == (5000, 65_536)  # the table's context, the known output
    assert run(limits("anthropic/claude-future-9")).context is None
