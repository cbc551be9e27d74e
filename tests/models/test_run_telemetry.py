"""A run traced: an ``invoke_agent`` span, a ``chat`` span per request (model, token usage, finish reason)
and an ``execute_tool`` span per call, against the scripted OpenAI-compatible server; in process under a
library host's span, and as a real ``opencode run`` exporting over OTLP/HTTP (one trace)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _otel import Memory, Receiver, memory, otlp_env, otlp_receiver
from _scripted import ScriptedModel, call, opencode

from opencode_cli.project import Project

__all__ = ["memory", "otlp_receiver"]  # the fixtures, imported for the tests of this module

TWO_CALLS = [
    {
        "text": "Let me look.",
        "tool_calls": [call("c1", "read", filePath="notes.txt"), call("c2", "glob", pattern="*.txt")],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
    },
    {
        "text": "Two lines, one file.",
        "usage": {"prompt_tokens": 200, "completion_tokens": 9, "total_tokens": 209},
    },
]


def test_a_run_with_two_calls_is_an_agent_span_with_two_chats_and_two_tool_spans(
    memory: Memory, local_project: Callable[..., Project], scripted_model: ScriptedModel, project_dir: Path
) -> None:
    from opentelemetry import trace

    (project_dir / "notes.txt").write_text("one\ntwo\n")
    project = local_project()
    scripted_model.script(TWO_CALLS)

    async def main() -> Any:
        async with project, project.session() as session:
            with trace.get_tracer("host").start_as_current_span("the host's turn") as host:
                return session, await session.run("What is in notes.txt?"), host

    session, result, host = asyncio.run(asyncio.wait_for(main(), 60))
    assert result.reason == "stop"

    [agent] = memory.named(f"invoke_agent {session.agent.name}")
    assert agent.parent.span_id == host.get_span_context().span_id
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.request.model"] == "scripted-model"
    assert agent.attributes["gen_ai.provider.name"] == "local"
    assert agent.attributes["gen_ai.conversation.id"] == session.id
    assert agent.attributes["gen_ai.response.finish_reasons"] == ("stop",)

    chats = memory.named("chat scripted-model")
    tools = [span for span in memory.spans() if span.name.startswith("execute_tool")]
    assert len(chats) == 2 and sorted(span.name for span in tools) == [
        "execute_tool glob",
        "execute_tool read",
    ]
    for span in [*chats, *tools]:  # siblings under the run's span
        assert span.parent.span_id == agent.context.span_id
        assert span.context.trace_id == host.get_span_context().trace_id
    first, second = chats
    assert first.kind is trace.SpanKind.CLIENT
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert (
        first.attributes["gen_ai.usage.input_tokens"],
        first.attributes["gen_ai.usage.output_tokens"],
    ) == (
        120,
        30,
    )
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert second.attributes["gen_ai.usage.input_tokens"] == 200
    assert {span.attributes["gen_ai.tool.call.id"] for span in tools} == {"c1", "c2"}
    assert first.end_time <= min(span.start_time for span in tools)  # the calls follow the reply
    assert max(span.end_time for span in tools) <= second.start_time

    tokens = memory.metrics()["gen_ai.client.token.usage"]
    assert sorted((p.attributes["gen_ai.token.type"], p.sum) for p in tokens) == [
        ("input", 320),
        ("output", 39),
    ]


def test_a_real_opencode_run_sends_one_trace(
    otlp_receiver: Receiver,
    local_project: Callable[..., Project],
    scripted_model: ScriptedModel,
    project_dir: Path,
    env: dict[str, str],
) -> None:
    (project_dir / "notes.txt").write_text("one\ntwo\n")
    local_project()  # writes the config
    scripted_model.script(TWO_CALLS)

    done = opencode(
        project_dir, {**env, **otlp_env(otlp_receiver, "run-tests")}, "run", "What is in notes.txt?"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("Two lines, one file.")

    spans = otlp_receiver.wait_for(lambda r: len(r.spans) >= 5 and list(r.spans), "five spans")
    names = sorted(span.name for span in spans)
    assert names == ["chat scripted-model"] * 2 + [
        "execute_tool glob",
        "execute_tool read",
        "invoke_agent build",
    ]
    assert len({span.trace_id for span in spans}) == 1
    [agent] = [span for span in spans if span.name.startswith("invoke_agent")]
    assert agent.parent_span_id == "" and agent.resource["service.name"] == "run-tests"
    assert all(span.parent_span_id == agent.span_id for span in spans if span is not agent)
