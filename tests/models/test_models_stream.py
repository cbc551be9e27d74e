"""Streaming through ``open_model`` against the scripted server: text, tool calls assembled from their
pieces, and the request the endpoint receives."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from _scripted import ScriptedModel, configure, local_config

from opencode_cli.models import (
    Finish,
    Message,
    TextDelta,
    ToolCallRequest,
    ToolCalls,
    ToolCallStarted,
    open_model,
)
from opencode_cli.project import Project
from opencode_cli.wire import render

ProjectFactory = Callable[..., Project]
HELLO = [Message("user", "hello")]


def run(coroutine: Any, timeout: float = 30) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def collect(project: Project, messages: list[Message] = HELLO, tools: Any = (), **options: Any) -> list:
    model = await open_model(project, None)
    return [event async for event in model.stream(messages, list(tools), **options)]


def test_text_arrives_in_pieces_then_finish_with_usage(
    local_project: ProjectFactory, scripted_model: ScriptedModel
) -> None:
    scripted_model.script([{"text": "Hello, world!", "split": 4}])
    project = local_project()

    async def main() -> list:
        async with project:
            return await collect(project)

    events = run(main())
    texts = [event.text for event in events if isinstance(event, TextDelta)]
    assert len(texts) == 4 and "".join(texts) == "Hello, world!"
    assert events[-1] == Finish("stop", {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18})
    assert not any(isinstance(event, ToolCalls | ToolCallStarted) for event in events)


def test_two_parallel_calls_split_across_chunks_are_assembled_in_index_order(
    local_project: ProjectFactory, scripted_model: ScriptedModel
) -> None:
    read = {
        "id": "call_read",
        "name": "read",
        "arguments": json.dumps({"filePath": "src/main.py", "limit": 20}),
    }
    grep = {"id": "call_grep", "name": "grep", "arguments": json.dumps({"pattern": "def \\w+", "path": "."})}
    scripted_model.script([{"text": "Looking.", "tool_calls": [read, grep], "split": 5, "interleave": True}])
    project = local_project()

    async def main() -> list:
        async with project:
            return await collect(project)

    events = run(main())
    kinds = [type(event).__name__ for event in events]
    assert kinds[-2:] == ["ToolCalls", "Finish"] and kinds.count("ToolCalls") == 1
    assert [e for e in events if isinstance(e, ToolCallStarted)] == [
        ToolCallStarted(0, "call_read", "read"),
        ToolCallStarted(1, "call_grep", "grep"),
    ]
    assert events[-2] == ToolCalls(
        [
            ToolCallRequest("call_read", "read", read["arguments"]),
            ToolCallRequest("call_grep", "grep", grep["arguments"]),
        ]
    )
    assert events[-1].reason == "tool-calls"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Looking."


def test_calls_come_in_index_order_whatever_order_their_pieces_came_in(
    local_project: ProjectFactory, scripted_model: ScriptedModel
) -> None:
    def piece(index: int, **fields: Any) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, **fields}]}}]}

    scripted_model.script(
        [
            {
                "stream": [
                    piece(1, id="b", type="function", function={"name": "glob", "arguments": '{"pat'}),
                    piece(0, id="a", type="function", function={"name": "read", "arguments": ""}),
                    piece(1, function={"arguments": 'tern": "*"}'}),
                    piece(0, function={"arguments": "not json, kept as sent"}),
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
                ]
            }
        ]
    )
    project = local_project()

    async def main() -> list:
        async with project:
            return await collect(project)

    events = run(main())
    assert events[-2] == ToolCalls(
        [
            ToolCallRequest("a", "read", "not json, kept as sent"),
            ToolCallRequest("b", "glob", '{"pattern": "*"}'),
        ]
    )
    assert events[-1] == Finish("tool-calls", None)  # this stream sent no usage


def test_the_request_carries_the_model_the_messages_and_the_tools_unchanged(
    local_project: ProjectFactory, scripted_model: ScriptedModel
) -> None:
    scripted_model.script([{"text": "ok"}, {"text": "again"}])
    project = local_project()
    conversation = [
        Message("system", "You are terse."),
        Message("user", "what is in a.txt?"),
        Message("assistant", None, tool_calls=[ToolCallRequest("c1", "read", '{"filePath": "a.txt"}')]),
        Message("tool", "hello from a", tool_call_id="c1"),
        Message("assistant", "It says hello."),
        Message("user", "thanks"),
    ]

    async def main() -> list[dict[str, Any]]:
        async with project:
            with project.session(model="local/scripted-model") as session:
                tools = render(session.resolve(), "openai")
            await collect(project, conversation, tools, temperature=0.2, top_p=0.9, max_tokens=256)
            await collect(project, HELLO)  # no tools: no "tools" key
            return tools

    tools = run(main())
    assert tools and all(tool["type"] == "function" for tool in tools)
    first, second = (request["body"] for request in scripted_model.requests())
    assert first["model"] == "scripted-model" and first["stream"] is True
    assert first["stream_options"] == {"include_usage": True}
    assert first["tools"] == tools
    assert first["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "what is in a.txt?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"filePath": "a.txt"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "hello from a"},
        {"role": "assistant", "content": "It says hello."},
        {"role": "user", "content": "thanks"},
    ]
    assert (first["temperature"], first["top_p"], first["max_tokens"]) == (0.2, 0.9, 256)
    assert "tools" not in second and "temperature" not in second


def test_a_model_table_gives_the_api_id_limits_options_and_headers(
    make_project: ProjectFactory, project_dir: Any, scripted_model: ScriptedModel
) -> None:

    config = local_config(scripted_model.url, includeUsage=False)
    config["model"] = "local/fast"
    config["provider"]["local"]["models"] = {
        "fast": {
            "id": "qwen3-8b-q4",
            "name": "Fast",
            "limit": {"context": 32768, "output": 4096},
            "options": {"top_k": 20, "temperature": 0.7},
            "headers": {"X-Model": "fast"},
        }
    }
    configure(project_dir, config)
    scripted_model.script([{"text": "ok"}])
    project = make_project()

    async def main() -> Any:
        async with project:
            model = await open_model(project, None)
            [event async for event in model.stream(HELLO, temperature=0.1)]
            return model

    model = run(main())
    assert (model.id, str(model.ref), model.info.name) == ("fast", "local/fast", "Fast")
    assert (model.limits.context, model.limits.output, model.limits.input) == (32768, 4096, None)
    [request] = scripted_model.requests()
    body = request["body"]
    assert body["model"] == "qwen3-8b-q4" and "stream_options" not in body
    assert (body["top_k"], body["temperature"]) == (20, 0.1)  # the caller's value wins over the table's
    assert request["headers"]["x-model"] == "fast"
