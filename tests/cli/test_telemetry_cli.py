"""``opencode tools run`` traced: the span tree in process (CliRunner, a host's in-memory providers), and a
real process configured the standard way (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_SERVICE_NAME``) sending
its spans and metrics over OTLP/HTTP to a real receiver on 127.0.0.1; stdout keeps only the tool's output."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from _otel import Memory, Receiver, memory, otlp_env, otlp_receiver

__all__ = ["memory", "otlp_receiver"]  # the fixtures, imported for the tests of this module


def test_tools_run_in_process_is_one_execute_tool_span_under_the_callers_span(
    memory: Memory, run_cli: Callable[..., Any]
) -> None:
    from opentelemetry import trace

    with trace.get_tracer("host").start_as_current_span("a script") as outer:
        result = run_cli("tools", "run", "read", "filePath=README.md")
    assert result.exit_code == 0, result.output

    spans = memory.spans()
    assert [span.name for span in spans] == ["execute_tool read", "a script"]
    tool = spans[0]
    assert tool.parent.span_id == outer.get_span_context().span_id
    assert tool.attributes["gen_ai.tool.name"] == "read" and "gen_ai.tool.call.id" not in tool.attributes
    assert "gen_ai.tool.call.arguments" not in tool.attributes


def test_tools_run_records_its_arguments_when_the_user_opts_in(
    memory: Memory, run_cli: Callable[..., Any]
) -> None:
    extra = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}
    result = run_cli("tools", "run", "read", "filePath=README.md", extra_env=extra)
    assert result.exit_code == 0, result.output

    [span] = memory.spans()
    assert json.loads(span.attributes["gen_ai.tool.call.arguments"]) == {"filePath": "README.md"}
    assert "A small project." in span.attributes["gen_ai.tool.call.result"]


def test_a_real_process_sends_its_spans_and_metrics_over_otlp_http(
    otlp_receiver: Receiver, run_process: Callable[..., Any]
) -> None:
    done = run_process(
        "tools", "run", "read", "filePath=README.md", "--json", extra_env=otlp_env(otlp_receiver, "tests")
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"].count("A small project.") == 1  # stdout: the result alone

    [span] = otlp_receiver.wait_for(
        lambda r: [s for s in r.spans if s.name == "execute_tool read"], "the span"
    )
    assert span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert span.attributes["opencode.tool.outcome"] == "completed"
    assert "gen_ai.tool.call.arguments" not in span.attributes
    assert span.resource["service.name"] == "tests" and span.parent_span_id == ""
    otlp_receiver.wait_for(lambda r: "gen_ai.execute_tool.duration" in r.metric_names, "the duration metric")


def test_a_process_without_an_exporter_configured_sends_nothing(
    otlp_receiver: Receiver, run_process: Callable[..., Any]
) -> None:
    """The receiver's address is there, but nothing says to export (``OTEL_TRACES_EXPORTER=none``, the
    metrics too): no request reaches it."""
    env = {
        **otlp_env(otlp_receiver, "tests"),
        "OTEL_TRACES_EXPORTER": "none",
        "OTEL_METRICS_EXPORTER": "none",
    }
    done = run_process("tools", "run", "read", "filePath=README.md", extra_env=env)
    assert done.returncode == 0, done.stderr
    assert otlp_receiver.paths == []


WITHOUT_THE_EXTRA = """
import sys


class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "opentelemetry":
            raise ImportError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, Missing())
from opencode_cli.cli import main

sys.argv = ["opencode", "tools", "run", "read", "filePath=README.md"]
main()
"""


def test_configured_without_the_extra_says_so_once_and_the_call_goes_on(
    cli_env: dict[str, str], otlp_receiver: Receiver
) -> None:
    import subprocess
    import sys

    env = {k: v for k, v in cli_env.items() if k != "project"}
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_THE_EXTRA],
        cwd=cli_env["project"],
        env={**env, **otlp_env(otlp_receiver, "tests")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "A small project." in done.stdout
    assert done.stderr.count("pip install 'opencode-tools[otel]'") == 1
    assert "Traceback" not in done.stderr and otlp_receiver.paths == []
