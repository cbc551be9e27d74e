"""Sessions that last: compaction sees the whole session (read from the store, not only what memory holds),
and a resumed session goes on with the model and agent it recorded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _scripted import ScriptedModel, configure, local_config, opencode
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.models.compaction import SUMMARY_PROMPT
from opencode_cli.project import Project

FULL = {"prompt_tokens": 950, "completion_tokens": 20, "total_tokens": 970}


def read(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": "read", "arguments": json.dumps({"filePath": "notes.txt"})}


def compacting(call_id: str, summary: str, answer: str) -> list[dict[str, Any]]:
    """A run that calls a tool with a full context (so it is compacted), is summarised, then answers."""
    return [{"tool_calls": [read(call_id)], "usage": FULL}, {"text": summary}, {"text": answer}]


def summary_requests(model: ScriptedModel) -> list[list[dict[str, Any]]]:
    """The messages of each request that asked for a summary, in order."""
    found = []
    for request in model.requests():
        messages = request["body"]["messages"]
        if messages and str(messages[-1].get("content", "")).startswith(SUMMARY_PROMPT):
            found.append(messages)
    return found


def small_config(url: str, **extra: Any) -> dict[str, Any]:
    config = local_config(url)
    config["provider"]["local"]["models"] = {"scripted-model": {"limit": {"context": 1000, "output": 100}}}
    return {**config, **extra}


def test_a_summary_that_left_memory_is_still_summarised(
    make_project: Callable[..., Project],
    project_dir: Path,
    scripted_model: ScriptedModel,
    env: dict[str, str],
) -> None:
    """Compacted twice in one process whose transcript holds little (a small byte bound), then resumed by
    a new process and compacted again: the third summary request still carries the second summary (and
    the first one's facts it kept), though neither was held in memory any more."""
    (project_dir / "notes.txt").write_text("one\n" * 200)  # each read's output pushes older parts out
    configure(project_dir, small_config(scripted_model.url, transcript={"max_bytes": 3000}))
    project = make_project()
    scripted_model.script(
        [
            *compacting("c1", "FACT-ONE: the notes say one.", "first done"),
            *compacting("c2", "FACT-TWO, and FACT-ONE: the notes say one.", "second done"),
        ]
    )

    async def twice() -> str:
        async with project, project.session(remember=True) as session:
            await session.run("first")
            await session.run("second")
            return session.id

    session_id = asyncio.run(asyncio.wait_for(twice(), 120))
    assert len(summary_requests(scripted_model)) == 2
    scripted_model.script(compacting("c3", "FACT-THREE", "third done"))
    done = opencode(project_dir, env, "run", "third", "--session", session_id)
    assert done.returncode == 0, done.stderr
    third = summary_requests(scripted_model)[-1]
    texts = [str(message.get("content") or "") for message in third]
    assert any("FACT-TWO, and FACT-ONE" in text for text in texts), texts
    assert third[0]["role"] == "system"


def test_a_resumed_session_keeps_the_model_and_agent_it_recorded(
    project_dir: Path, scripted_model: ScriptedModel, env: dict[str, str]
) -> None:
    """A session begun with one model and agent continues with them when --session or --continue name it
    without --model/--agent; with --model the switch is used and recorded."""
    config = local_config(scripted_model.url)
    config["provider"]["local"]["models"] = {"scripted-model": {}, "other-model": {}}
    config["model"] = "local/scripted-model"  # the configured default
    configure(project_dir, config)
    scripted_model.script([{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}])
    first = opencode(project_dir, env, "run", "hi", "--model", "local/other-model", "--agent", "plan")
    assert first.returncode == 0, first.stderr
    listed = json.loads(opencode(project_dir, env, "session", "list", "--json").stdout)
    [session] = listed["sessions"]
    assert opencode(project_dir, env, "run", "again", "--session", session["id"]).returncode == 0
    assert opencode(project_dir, env, "run", "more", "--continue").returncode == 0
    models = [request["body"]["model"] for request in scripted_model.requests()]
    assert models == ["other-model", "other-model", "other-model"]
    exported = json.loads(opencode(project_dir, env, "session", "export", session["id"]).stdout)
    users = [m["info"] for m in exported["messages"] if m["info"]["role"] == "user"]
    assert [u["agent"] for u in users] == ["plan", "plan", "plan"]
    switched = opencode(project_dir, env, "run", "last", "--continue", "--model", "local/scripted-model")
    assert switched.returncode == 0, switched.stderr
    assert scripted_model.requests()[-1]["body"]["model"] == "scripted-model"
    after = json.loads(opencode(project_dir, env, "session", "list", "--json").stdout)["sessions"]
    assert after[0]["model"] == "local/scripted-model"  # the switch is recorded


def test_a_model_repeating_one_call_is_stopped_by_the_doom_loop_guard(
    project_dir: Path, scripted_model: ScriptedModel, env: dict[str, str]
) -> None:
    """The held-out reproduction: a model that reads the same PNG step after step ran 709 steps. The run's
    steps are one doom-loop window, so the third identical call is asked about; with nobody to ask it is
    refused and the run ends there (exit 3). The session is titled from its first prompt."""
    import base64

    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    )
    (project_dir / "pixel.png").write_bytes(png)
    configure(project_dir, local_config(scripted_model.url))
    again = {"id": "c", "name": "read", "arguments": json.dumps({"filePath": "pixel.png"})}
    scripted_model.script([{"tool_calls": [{**again, "id": f"c{n}"}]} for n in range(20)])
    prompt = "Look at pixel.png and tell me   what colour it is, then describe every pixel in great detail"
    done = opencode(project_dir, env, "run", prompt, "--format", "json")
    assert done.returncode == 3, done.stderr
    assert len(scripted_model.requests()) == 3
    ends = [json.loads(line) for line in done.stdout.splitlines()][-2:]
    assert [end["type"] for end in ends] == ["finish", "exit"] and ends[0]["reason"] == "rejected"
    [session] = json.loads(opencode(project_dir, env, "session", "list", "--json").stdout)["sessions"]
    assert session["title"] == "Look at pixel.png and tell me what colour it is,…"


def test_titles_are_the_first_line_cut_at_a_word() -> None:
    from opencode_cli.models.loop import TITLE_LENGTH, title_of

    assert title_of("\n\n  fix   the tests \nand more") == "fix the tests"
    long = title_of("word " * 40)
    assert len(long) <= TITLE_LENGTH and long.endswith("…") and not long.endswith(" …")
    assert title_of("x" * 80) == "x" * (TITLE_LENGTH - 1) + "…"


@given(st.text())
def test_any_prompt_gives_a_short_one_line_title(prompt: str) -> None:
    from opencode_cli.models.loop import TITLE_LENGTH, title_of

    title = title_of(prompt)
    assert len(title) <= TITLE_LENGTH and "\n" not in title and title == title.strip()
