"""The Google provider against a scripted Gemini API on 127.0.0.1 speaking the real wire format
(``streamGenerateContent?alt=sse``), through the official ``google-genai`` SDK: a read-it run, a subagent
run, an image result, and the request bodies (the Gemini tool declarations, function responses, thought
signatures sent back)."""

from __future__ import annotations

import asyncio
import base64
import json
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


def run(coroutine: Any, timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def yes(request: Any) -> Decision:
    return Decision("once")


def gemini_config(url: str) -> dict[str, Any]:
    base = url.removesuffix("/v1") + "/v1beta"
    model = {"limit": {"context": 1000000, "output": 8000}}
    return {
        "model": "gem/gemini-2.5-pro",
        "provider": {
            "gem": {
                "npm": "@ai-sdk/google",
                "options": {"baseURL": base, "apiKey": "test-key"},
                "models": {"gemini-2.5-pro": model},
            }
        },
    }


@pytest.fixture
def gemini(make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel) -> Project:
    pytest.importorskip("google.genai")
    (project_dir / "notes.txt").write_text("one\ntwo\n")
    configure(project_dir, gemini_config(scripted_model.url))
    return make_project()


def responses(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for content in request["body"]["contents"]
        if content["role"] == "user"
        for part in content["parts"]
        if "functionResponse" in part or "inlineData" in part
    ]


def test_a_read_it_run_through_gemini(gemini: Project, scripted_model: ScriptedModel) -> None:
    scripted_model.script(
        [
            {"text": "Reading.", "tool_calls": [call("g1", "read", filePath="notes.txt")]},
            {"text": "It has two lines."},
        ]
    )

    async def main() -> Any:
        async with gemini, gemini.session(prompt=yes) as session:
            result = await session.run("How long is notes.txt?")
            return result, render(session.resolve(), "gemini")

    result, tools = run(main())
    assert (result.text, result.reason, result.steps) == ("It has two lines.", "stop", 2)
    first, second = scripted_model.requests()
    assert first["path"].startswith("/v1beta/models/gemini-2.5-pro:streamGenerateContent")
    assert first["headers"]["x-goog-api-key"] == "test-key"
    sent = first["body"]["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in sent] == [d["name"] for d in tools[0]["functionDeclarations"]]
    read = next(d for d in sent if d["name"] == "read")
    assert read["parameters"]["properties"]["filePath"]["type"].upper() == "STRING"
    assert "$schema" not in json.dumps(sent)  # the Gemini profile
    assert "systemInstruction" in first["body"]
    model_turn = second["body"]["contents"][1]
    assert model_turn["role"] == "model"
    [function_call] = [p for p in model_turn["parts"] if "functionCall" in p]
    assert function_call["functionCall"] == {"name": "read", "args": {"filePath": "notes.txt"}}
    assert base64.b64decode(function_call["thoughtSignature"]) == b"sig-g1"  # sent back
    [response] = responses(second)
    assert response["functionResponse"]["name"] == "read"
    assert "1: one" in response["functionResponse"]["response"]["output"]


def test_an_image_result_follows_the_function_response(
    gemini: Project, scripted_model: ScriptedModel, project_dir: Path
) -> None:
    (project_dir / "dot.png").write_bytes(PNG)
    scripted_model.script([{"tool_calls": [call("g1", "read", filePath="dot.png")]}, {"text": "A dot."}])

    async def main() -> Any:
        async with gemini, gemini.session() as session:
            return await session.run("What is in dot.png?")

    assert run(main()).text == "A dot."
    result, image = responses(scripted_model.requests()[1])
    assert result["functionResponse"]["response"] == {"output": "Image read successfully"}
    blob = image["inlineData"]  # as the SDK sends it: its own key spelling, URL-safe base64 (both are valid)
    assert (blob.get("mimeType") or blob.get("mime_type")) == "image/png"
    assert base64.urlsafe_b64decode(blob["data"]) == PNG


def test_a_subagent_run_through_gemini(gemini: Project, scripted_model: ScriptedModel) -> None:
    scripted_model.script(
        [
            {"tool_calls": [call("p1", "task", description="Look", prompt="Count", subagent_type="explore")]},
            {"tool_calls": [call("k1", "read", filePath="notes.txt")]},
            {"text": "two lines"},
            {"text": "The explorer counted two lines."},
        ]
    )

    async def main() -> Any:
        async with gemini, gemini.session(prompt=yes) as session:
            return await session.run("Ask an explorer")

    assert run(main()).text == "The explorer counted two lines."
    requests = scripted_model.requests()
    child = [d["name"] for d in requests[1]["body"]["tools"][0]["functionDeclarations"]]
    assert "task" not in child and "edit" not in child
    [task_result] = responses(requests[3])
    assert "<task_result>\ntwo lines\n</task_result>" in task_result["functionResponse"]["response"]["output"]


def test_without_the_sdk_the_error_names_the_extra(
    make_project: Callable[..., Project], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(project_dir, gemini_config("http://127.0.0.1:9/v1"))
    monkeypatch.setitem(sys.modules, "google.genai", None)
    project = make_project()

    async def main() -> None:
        async with project:
            await open_model(project)

    with pytest.raises(ModelError) as failed:
        run(main())
    expected = "provider gem needs the google.genai SDK: pip install 'opencode-tools[google]'"
    assert str(failed.value) == expected
