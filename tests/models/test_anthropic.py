"""The Anthropic provider against a scripted Messages API on 127.0.0.1 speaking the real wire format (SSE
events as the API streams them), through the official ``anthropic`` SDK: a read-it run, a subagent run,
an image result, and the request bodies (tools, cache_control, thinking blocks, tool_result shapes)."""

from __future__ import annotations

import asyncio
import base64
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _scripted import ScriptedModel, call, configure

from opencode_cli.models import ModelError, open_model
from opencode_cli.project import Project
from opencode_cli.session import Decision
from opencode_cli.wire import render

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="
)
EPHEMERAL = {"type": "ephemeral"}


def run(coroutine: Any, timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def yes(request: Any) -> Decision:
    return Decision("once")


def claude_config(url: str, **options: Any) -> dict[str, Any]:
    model = {"limit": {"context": 200000, "output": 4000}, "options": options}
    return {
        "model": "claude/claude-sonnet-4-5",
        "provider": {
            "claude": {
                "npm": "@ai-sdk/anthropic",
                "options": {"baseURL": url, "apiKey": "test-key"},
                "models": {"claude-sonnet-4-5": model},
            }
        },
    }


@pytest.fixture
def claude(make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel) -> Project:
    pytest.importorskip("anthropic")
    (project_dir / "notes.txt").write_text("one\ntwo\n")
    configure(
        project_dir, claude_config(scripted_model.url, thinking={"type": "enabled", "budget_tokens": 1024})
    )
    return make_project()


def results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in request["body"]["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


def test_a_read_it_run_through_anthropic(claude: Project, scripted_model: ScriptedModel) -> None:
    scripted_model.script(
        [
            {
                "thinking": "I should read it.",
                "text": "Reading.",
                "tool_calls": [call("t1", "read", filePath="notes.txt")],
            },
            {"text": "It has two lines."},
        ]
    )

    async def main() -> Any:
        async with claude, claude.session(prompt=yes) as session:
            result = await session.run("How long is notes.txt?")
            return result, render(session.resolve(), "anthropic")

    result, tools = run(main())
    assert (result.text, result.reason, result.steps) == ("It has two lines.", "stop", 2)
    first, second = scripted_model.requests()
    assert first["path"] == "/v1/messages" and "test-key" in first["headers"]["authorization"]
    body = first["body"]
    assert body["tools"] == tools and all(tool["eager_input_streaming"] for tool in tools)
    assert body["model"] == "claude-sonnet-4-5" and body["max_tokens"] == 4000 and body["stream"] is True
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert [block.get("cache_control") for block in body["system"]] == [EPHEMERAL, EPHEMERAL]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "How long is notes.txt?", "cache_control": EPHEMERAL}],
        }
    ]
    assistant = second["body"]["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "I should read it.",
        "signature": "sig-0",
    }
    assert assistant["content"][1] == {"type": "text", "text": "Reading."}
    assert assistant["content"][2]["type"] == "tool_use" and assistant["content"][2]["input"] == {
        "filePath": "notes.txt"
    }
    [result_block] = results(second)
    assert result_block["tool_use_id"] == "t1" and "1: one" in result_block["content"][0]["text"]
    assert result_block["cache_control"] == EPHEMERAL  # one of the last two messages
    assert "cache_control" not in second["body"]["messages"][0]["content"][-1]


def test_an_image_result_is_an_image_block_in_the_tool_result(
    claude: Project, scripted_model: ScriptedModel, project_dir: Path
) -> None:
    (project_dir / "dot.png").write_bytes(PNG)
    scripted_model.script([{"tool_calls": [call("t1", "read", filePath="dot.png")]}, {"text": "A dot."}])

    async def main() -> Any:
        async with claude, claude.session() as session:
            return await session.run("What is in dot.png?")

    assert run(main()).text == "A dot."
    [block] = results(scripted_model.requests()[1])
    assert block["content"][0] == {"type": "text", "text": "Image read successfully"}
    assert block["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()},
    }


def test_a_subagent_run_through_anthropic(claude: Project, scripted_model: ScriptedModel) -> None:
    scripted_model.script(
        [
            {
                "tool_calls": [
                    call("p1", "task", description="Look", prompt="Count lines", subagent_type="explore")
                ]
            },
            {"tool_calls": [call("k1", "read", filePath="notes.txt")]},
            {"text": "two lines"},
            {"text": "The explorer counted two lines."},
        ]
    )

    async def main() -> Any:
        async with claude, claude.session(prompt=yes) as session:
            return await session.run("Ask an explorer")

    assert run(main()).text == "The explorer counted two lines."
    requests = scripted_model.requests()
    child_tools = [tool["name"] for tool in requests[1]["body"]["tools"]]
    assert "task" not in child_tools and "edit" not in child_tools
    [task_result] = results(requests[3])
    assert "<task_result>\ntwo lines\n</task_result>" in task_result["content"][0]["text"]


def test_an_http_error_is_one_line(claude: Project, scripted_model: ScriptedModel) -> None:
    error = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    scripted_model.script([{"status": 401, "body": error}])

    async def main() -> None:
        async with claude, claude.session() as session:
            await session.run("hi")

    with pytest.raises(ModelError, match=r"^claude: 401 Unauthorized: invalid x-api-key$"):
        run(main())


def test_without_the_sdk_the_error_names_the_extra(
    make_project: Callable[..., Project], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(project_dir, claude_config("http://127.0.0.1:9/v1"))
    monkeypatch.setitem(sys.modules, "anthropic", None)  # what an install without the extra sees
    project = make_project()

    async def main() -> None:
        async with project:
            await open_model(project)

    with pytest.raises(ModelError) as failed:
        run(main())
    expected = "provider claude needs the anthropic SDK: pip install 'opencode-tools[anthropic]'"
    assert str(failed.value) == expected
