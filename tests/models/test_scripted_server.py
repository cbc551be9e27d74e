"""The scripted server itself, spoken to over plain HTTP: non-streamed replies, the model list, the
request log, and a script that runs out."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from _scripted import ScriptedModel, pieces, shorthand_chunks


def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json", "Authorization": "Bearer t"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_non_streamed_replies_models_and_the_log(scripted_model: ScriptedModel) -> None:
    call = {"id": "c1", "name": "read", "arguments": '{"filePath": "a"}'}
    scripted_model.script([{"text": "hi"}, {"tool_calls": [call]}], models=["m1", "m2"])
    url = f"{scripted_model.url}/chat/completions"
    status, first = post(url, {"model": "m1", "messages": []})
    assert status == 200 and first["object"] == "chat.completion"
    assert first["choices"][0]["message"] == {"role": "assistant", "content": "hi"}
    assert first["choices"][0]["finish_reason"] == "stop" and first["model"] == "m1"
    _, second = post(url, {"model": "m1", "stream": False})
    assert second["choices"][0]["message"]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"filePath": "a"}'}}
    ]
    assert second["choices"][0]["finish_reason"] == "tool_calls"
    status, third = post(url, {"model": "m1"})
    assert status == 500 and third["error"]["message"] == "the script has no response #3"
    with urllib.request.urlopen(f"{scripted_model.url}/models", timeout=10) as response:
        assert [m["id"] for m in json.loads(response.read())["data"]] == ["m1", "m2"]
    log = scripted_model.requests()
    assert [(r["method"], r["path"]) for r in log] == [("POST", "/v1/chat/completions")] * 3 + [
        ("GET", "/v1/models")
    ]
    assert log[0]["authorization"] == "Bearer t" and log[0]["body"] == {"model": "m1", "messages": []}
    scripted_model.script([{"text": "again"}])  # a new script starts over
    assert post(url, {"model": "m1"})[1]["choices"][0]["message"]["content"] == "again"


@pytest.mark.parametrize(
    ("text", "count", "expected"), [("abcdefg", 3, ["abc", "de", "fg"]), ("ab", 5, ["a", "b"]), ("", 3, [])]
)
def test_pieces(text: str, count: int, expected: list[str]) -> None:
    assert pieces(text, count) == expected


def test_shorthand_chunks_look_like_a_real_stream() -> None:
    calls = [{"id": "a", "name": "x", "arguments": "{}"}]
    chunks = shorthand_chunks({"text": "hey", "tool_calls": calls, "split": 2}, include_usage=False)
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
    assert deltas[0] == {"role": "assistant", "content": ""}
    assert deltas[1:3] == [{"content": "he"}, {"content": "y"}]
    assert deltas[3] == {
        "tool_calls": [
            {"index": 0, "id": "a", "type": "function", "function": {"name": "x", "arguments": ""}}
        ]
    }
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls" and "usage" not in chunks[-1]
