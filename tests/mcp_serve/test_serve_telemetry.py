"""A call through ``opencode mcp serve`` joins its client's trace: the client (a project of ours with the
server configured, traced in memory by its host) makes the call's ``execute_tool`` span, under which the
mcp SDK's client span sends the trace context in ``params._meta``; the server (a real process configured
with ``OTEL_EXPORTER_OTLP_ENDPOINT``) continues it (the SDK's ``SERVER`` span, our call path's
``execute_tool`` span under it) and exports over OTLP/HTTP to a receiver on 127.0.0.1: one trace id end to
end, and the server's metrics (requests in flight, clients, durations)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import tomli_w
from _otel import Memory, Receiver, memory, otlp_env, otlp_receiver

__all__ = ["memory", "otlp_receiver"]  # the fixtures, imported for the tests of this module


def test_a_served_call_joins_the_clients_trace(
    memory: Memory, otlp_receiver: Receiver, make_project: Any, project_dir: Path, tmp_path: Path, env: dict
) -> None:
    from opentelemetry import trace

    served = tmp_path / "served"
    (served / ".git").mkdir(parents=True)
    (served / "notes.txt").write_text("served notes\n")
    server_env = {**env, **otlp_env(otlp_receiver, "served"), "OTEL_METRIC_EXPORT_INTERVAL": "100"}
    command = [sys.executable, "-m", "opencode_cli", "mcp", "serve", "--directory", str(served), "--yes"]
    config = {"mcp": {"served": {"type": "local", "command": command, "environment": server_env}}}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps(config))
    session = make_project().session()

    with trace.get_tracer("host").start_as_current_span("the host's turn") as host:
        result = session.run_tool("served_read", {"filePath": "notes.txt"})
    assert "served notes" in result.output

    # the client's side, in memory: its execute_tool span, and under it the SDK's span of the request
    [tool] = memory.named("execute_tool served_read")
    [request] = memory.named("MCP send tools/call read")
    assert tool.parent.span_id == host.get_span_context().span_id
    assert tool.attributes["gen_ai.tool.type"] == "extension"
    assert tool.attributes["gen_ai.tool.description"]  # known once the call connected the server
    assert request.parent.span_id == tool.context.span_id and request.kind is trace.SpanKind.CLIENT
    trace_id = f"{host.get_span_context().trace_id:032x}"

    # the server's side, over OTLP: the SDK's SERVER span is the child of the client's request span, and
    # the call path's execute_tool span is the child of that
    spans = otlp_receiver.wait_for(
        lambda r: (
            len([s for s in r.spans if s.name in ("tools/call read", "execute_tool read")]) == 2
            and list(r.spans)
        ),
        "the server's spans",
    )
    [server] = [span for span in spans if span.name == "tools/call read"]
    [executed] = [span for span in spans if span.name == "execute_tool read"]
    assert {server.trace_id, executed.trace_id} == {trace_id}  # one trace, end to end
    assert server.parent_span_id == f"{request.context.span_id:016x}"
    assert server.kind == 2  # SPAN_KIND_SERVER
    assert server.attributes["mcp.method.name"] == "tools/call"
    assert executed.parent_span_id == server.span_id
    assert executed.attributes["gen_ai.tool.name"] == "read"
    assert "gen_ai.tool.call.arguments" not in executed.attributes
    assert executed.resource["service.name"] == "served"
    otlp_receiver.wait_for(
        lambda r: (
            {
                "mcp.server.operation.duration",
                "opencode.mcp.server.active_requests",
                "opencode.mcp.server.clients",
            }
            <= r.metric_names
        ),
        "the server's metrics",
    )
