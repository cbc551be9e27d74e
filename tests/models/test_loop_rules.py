"""The loop as OpenCode runs it, against the scripted OpenAI-compatible server: a rejected ask ends the
run (unless ``experimental.continue_loop_on_deny``), feedback goes back to the model, and the images of
tool results reach the model in a user message after the tool messages."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _scripted import ScriptedModel, call, configure, local_config

from opencode_cli.errors import RejectedError
from opencode_cli.models.openai_format import TOOL_MEDIA_NOTE
from opencode_cli.permission import Rule
from opencode_cli.project import Project
from opencode_cli.session import Decision

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="
)
ASK_READ = [Rule("read", "*", "ask", "test")]


def run(coroutine: Any, timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


def answering(decision: Decision) -> Callable[[Any], Any]:
    async def prompt(request: Any) -> Decision:
        return decision

    return prompt


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["body"]["messages"] if m["role"] == "tool"]


def make(make_project: Callable[..., Project], project_dir: Path, url: str, **config: Any) -> Project:
    (project_dir / "notes.txt").write_text("one\n")
    configure(project_dir, {**local_config(url), **config})
    return make_project()


READ_THEN_ANSWER = [
    {"tool_calls": [call("c1", "read", filePath="notes.txt")]},
    {"text": "I could not read it."},
]


@pytest.mark.parametrize("prompt", [answering(Decision("reject")), None], ids=["rejected", "nobody-to-ask"])
def test_a_rejected_ask_ends_the_run(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel, prompt: Any
) -> None:
    project = make(make_project, project_dir, scripted_model.url)
    scripted_model.script(READ_THEN_ANSWER)
    events: list[tuple[str, dict[str, Any]]] = []

    async def main() -> Any:
        async with project, project.session(prompt=prompt, rules=ASK_READ) as session:
            result = await session.run("read notes", on_event=lambda kind, data: events.append((kind, data)))
            return result, session

    result, session = run(main())
    assert result.reason == "rejected" and len(scripted_model.requests()) == 1
    [(_, ended)] = [event for event in events if event[0] == "tool-end"]
    assert ended["rejected"] is True and ended["error"] == RejectedError.MESSAGE
    assert events[-1] == ("finish", {"reason": "rejected", "text": ""})
    [part] = [p for m in session.messages for p in m.parts if getattr(p, "tool", None) == "read"]
    assert part.status == "error" and part.error == RejectedError.MESSAGE


def test_a_rejection_with_feedback_goes_back_to_the_model(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    project = make(make_project, project_dir, scripted_model.url)
    scripted_model.script(READ_THEN_ANSWER)

    async def main() -> Any:
        prompt = answering(Decision("reject", "use glob instead"))
        async with project, project.session(prompt=prompt, rules=ASK_READ) as session:
            return await session.run("read notes")

    result = run(main())
    assert (result.reason, result.text) == ("stop", "I could not read it.")
    [feedback] = tool_messages(scripted_model.requests()[1])
    assert feedback["content"].endswith("with the following feedback: use glob instead")


def test_continue_loop_on_deny_sends_the_rejection_back(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    project = make(
        make_project, project_dir, scripted_model.url, experimental={"continue_loop_on_deny": True}
    )
    scripted_model.script(READ_THEN_ANSWER)

    async def main() -> Any:
        async with project, project.session(rules=ASK_READ) as session:
            return await session.run("read notes")

    result = run(main())
    assert result.reason == "stop" and len(scripted_model.requests()) == 2
    [rejection] = tool_messages(scripted_model.requests()[1])
    assert rejection["content"] == RejectedError.MESSAGE


def test_an_image_read_by_a_tool_follows_the_tool_messages_as_a_user_message(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    project = make(make_project, project_dir, scripted_model.url)
    (project_dir / "dot.png").write_bytes(PNG)
    scripted_model.script(
        [
            {
                "tool_calls": [
                    call("c1", "read", filePath="dot.png"),
                    call("c2", "read", filePath="notes.txt"),
                ]
            },
            {"text": "A single dot."},
        ]
    )

    async def main() -> Any:
        async with project, project.session() as session:
            return await session.run("what is in dot.png?")

    assert run(main()).text == "A single dot."
    messages = scripted_model.requests()[1]["body"]["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "system", "user", "assistant", "tool", "tool", "user"]
    assert messages[4]["content"] == "Image read successfully"
    assert messages[-1]["content"] == [
        {"type": "text", "text": TOOL_MEDIA_NOTE},
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
        },
    ]
