"""Each tool call an OpenTelemetry ``execute_tool`` span under the caller's span, when a library host set up
its own providers (in memory here): what the span says of a call that completed, failed, was refused by the
doom-loop check, cut short by a hook, interrupted, truncated; the duration metric; arguments only when the
user opted in; and nothing at all with the ``telemetry`` plugin switched off."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from _otel import Memory, memory

from opencode_cli import AbortSignal, ToolError, hookimpl, tool
from opencode_cli.project import Project
from opencode_cli.session import Decision, ToolCall

__all__ = ["memory"]  # the fixture, imported for the tests of this module

CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
STARTED = asyncio.Event()


@tool
async def stall() -> str:
    """Wait until interrupted."""
    STARTED.set()
    await asyncio.sleep(60)
    return "never"


@tool
def flood() -> str:
    """Return more than a call may give back."""
    return "\n".join(f"line {n}" for n in range(5000))


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(stall)
        register(flood)


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout=30))


@pytest.fixture
def readme(project_dir: Path) -> Path:
    path = project_dir / "README.md"
    path.write_text("# A readme\n")
    return path


@pytest.fixture
def traced(make_project: Any) -> Project:
    return make_project(plugins=[("tools", Tools())])


def attributes(span: Any) -> dict[str, Any]:
    return dict(span.attributes or {})


def events(span: Any) -> dict[str, dict[str, Any]]:
    return {event.name: dict(event.attributes or {}) for event in span.events}


def test_a_call_is_an_execute_tool_span_under_the_callers_span(
    memory: Memory, traced: Project, readme: Path
) -> None:
    from opentelemetry import trace

    session = traced.session()
    with trace.get_tracer("host").start_as_current_span("host work") as host:
        result = session.run_tool("read", {"filePath": str(readme)})
    assert "A readme" in result.output

    [span] = memory.named("execute_tool read")
    assert span.parent is not None and span.parent.span_id == host.get_span_context().span_id
    assert span.context.trace_id == host.get_span_context().trace_id
    assert span.kind is trace.SpanKind.INTERNAL
    found = attributes(span)
    assert found["gen_ai.operation.name"] == "execute_tool"
    assert found["gen_ai.tool.name"] == "read"
    assert found["gen_ai.tool.type"] == "function"
    assert found["gen_ai.tool.description"] == traced.registry.get("read").description
    assert found["gen_ai.conversation.id"] == session.id
    assert found["opencode.tool.outcome"] == "completed" and found["opencode.tool.truncated"] is False
    assert "error.type" not in found and span.status.is_ok
    # the arguments and the output may hold secrets: not recorded unless the user opts in
    assert "gen_ai.tool.call.arguments" not in found and "gen_ai.tool.call.result" not in found


def test_arguments_and_results_are_recorded_only_when_the_user_opts_in(
    memory: Memory, traced: Project, readme: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = traced.session()
    session.run_tool("read", {"filePath": str(readme)})
    monkeypatch.setenv(CAPTURE, "true")
    session.run_tool("read", {"filePath": str(readme), "limit": 5})

    plain, captured = memory.named("execute_tool read")
    assert not any(key.startswith("gen_ai.tool.call.") for key in attributes(plain))
    assert json.loads(attributes(captured)["gen_ai.tool.call.arguments"]) == {
        "filePath": str(readme),
        "limit": 5,
    }
    assert "A readme" in attributes(captured)["gen_ai.tool.call.result"]


def test_a_failed_call_says_its_error_type_and_outcome_but_not_its_words(
    memory: Memory, traced: Project, project_dir: Path
) -> None:
    session = traced.session()
    with pytest.raises(ToolError, match="not found"):
        session.run_tool("read", {"filePath": str(project_dir / "secret-name.txt")})

    [span] = memory.named("execute_tool read")
    assert attributes(span)["error.type"] == "opencode_cli.errors.ToolError"
    assert attributes(span)["opencode.tool.outcome"] == "failed"
    assert not span.status.is_ok and span.status.description == "failed"  # the message names the file


def test_a_doom_loop_refusal_is_on_the_span_of_the_refused_call(
    memory: Memory, traced: Project, readme: Path
) -> None:
    session = traced.session()  # no prompt: nobody can answer the doom-loop ask
    call = ToolCall("read", json.dumps({"filePath": str(readme)}))

    async def three() -> list[Any]:
        return [await session.dispatch(call) for _ in range(3)]

    parts = run(three())
    assert [part.status for part in parts] == ["completed", "completed", "error"]

    *completed, refused = memory.named("execute_tool read")
    assert not any("opencode.doom_loop.refused" in events(span) for span in completed)
    assert attributes(refused)["opencode.tool.outcome"] == "rejected"
    assert attributes(refused)["opencode.permission"] == "doom_loop"
    assert "opencode.doom_loop.refused" in events(refused)
    assert attributes(refused)["error.type"] == "opencode_cli.errors.RejectedError"


@pytest.mark.parametrize("hook", ["tool_execute_before", "tool_execute_after"])
def test_a_hook_that_raises_is_an_event_naming_the_hook(
    hook: str, memory: Memory, make_project: Any, readme: Path
) -> None:
    class Refuses:
        pass

    def refuse(**kwargs: Any) -> None:
        raise ValueError("not today")

    setattr(Refuses, hook, staticmethod(hookimpl(specname=hook)(refuse)))
    session = make_project(plugins=[("refuses", Refuses())]).session()
    with pytest.raises(ValueError, match="not today"):
        session.run_tool("read", {"filePath": str(readme)})

    [span] = memory.named("execute_tool read")
    assert events(span)["opencode.hook.failed"] == {"opencode.hook.name": hook, "error.type": "ValueError"}
    assert attributes(span)["error.type"] == "ValueError"


def test_an_interrupted_call_is_an_event_and_an_aborted_outcome(memory: Memory, traced: Project) -> None:
    session = traced.session()
    signal = AbortSignal()

    async def interrupted() -> None:
        STARTED.clear()
        running = asyncio.ensure_future(session.execute("stall", {}, abort=signal))
        await STARTED.wait()
        signal.abort("interrupted")
        with pytest.raises(Exception, match="interrupted"):
            await running

    run(interrupted())
    [span] = memory.named("execute_tool stall")
    assert "opencode.tool.interrupted" in events(span)
    assert attributes(span)["opencode.tool.outcome"] == "aborted"


def test_truncation_and_the_spill_file_are_on_the_span(memory: Memory, traced: Project) -> None:
    result = traced.session().run_tool("flood", {})

    [span] = memory.named("execute_tool flood")
    assert attributes(span)["opencode.tool.truncated"] is True
    spilled = events(span)["opencode.tool.output.spilled"]["opencode.tool.output.path"]
    assert spilled == result.metadata["outputPath"] and Path(spilled).exists()


def test_a_permission_ask_is_an_event_with_what_the_plugins_made_of_it(
    memory: Memory, traced: Project, project_dir: Path
) -> None:
    async def yes(request: Any) -> Decision:
        return Decision("once")

    outside = project_dir.parent / "outside.txt"
    outside.write_text("far away\n")
    traced.session(prompt=yes).run_tool("read", {"filePath": str(outside)})

    [span] = memory.named("execute_tool read")
    asked = events(span)["opencode.permission.asked"]
    assert asked == {"opencode.permission": "external_directory", "opencode.permission.hooks": "ask"}


def test_the_duration_metric_counts_calls_by_tool_and_outcome(
    memory: Memory, traced: Project, readme: Path, project_dir: Path
) -> None:
    session = traced.session()
    session.run_tool("read", {"filePath": str(readme)})
    session.run_tool("read", {"filePath": str(readme)})
    with pytest.raises(ToolError):
        session.run_tool("read", {"filePath": str(project_dir / "nothere")})

    points = memory.metrics()["gen_ai.execute_tool.duration"]
    counts = {
        (p.attributes["gen_ai.tool.name"], p.attributes["opencode.tool.outcome"]): p.count for p in points
    }
    assert counts == {("read", "completed"): 2, ("read", "failed"): 1}
    failed = next(p for p in points if p.attributes["opencode.tool.outcome"] == "failed")
    assert failed.attributes["error.type"] == "opencode_cli.errors.ToolError"


def test_switched_off_the_telemetry_plugin_records_nothing(
    memory: Memory, make_project: Any, readme: Path, project_dir: Path
) -> None:
    (project_dir / "opencode.toml").write_text('[plugins]\ndisabled = ["telemetry"]\n')
    make_project().session().run_tool("read", {"filePath": str(readme)})
    assert memory.spans() == []


def test_hook_tool_call(memory: Memory, make_project: Any, readme: Path) -> None:
    """A plugin's ``tool_call`` wrapper sees the whole call: the context it sets reaches the tool's
    execution hooks, and a refusal before the tool ran reaches it as an exception."""
    import contextvars

    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")
    seen: list[Any] = []

    class Wraps:
        @hookimpl(wrapper=True)
        def tool_call(self, tool: str, call_id: Any, args: dict[str, Any], session: Any) -> Any:
            running = yield

            async def marked() -> Any:
                token = marker.set(f"{tool}:{session.id == session_id}")
                try:
                    return await running
                except Exception as error:
                    seen.append(type(error).__name__)
                    raise
                finally:
                    marker.reset(token)

            return marked()

        @hookimpl
        def tool_execute_before(self, tool: str) -> None:
            seen.append(marker.get())

    session = make_project(plugins=[("wraps", Wraps())]).session()
    session_id = session.id
    call = ToolCall("read", json.dumps({"filePath": str(readme)}))

    async def three() -> list[Any]:
        return [await session.dispatch(call) for _ in range(3)]

    run(three())
    assert seen == ["read:True", "read:True", "RejectedError"]  # the third: refused by the doom-loop check


def test_not_configured_the_plugin_has_no_hooks_and_a_call_pays_for_none(
    make_project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chosen when the project loads it: without OpenTelemetry configured the plugin implements nothing,
    so no call runs a hook of it (nor the ``tool_call`` hook, core's alone); configured, it wraps calls."""
    import os

    for name in [name for name in os.environ if name.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    plain = make_project().plugins
    assert plain.record_for("telemetry").hooks == [] and not plain.has_several("tool_call")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    traced = make_project().plugins
    assert {"tool_call", "tool_execute", "tool_execute_before", "permission_ask"} == set(
        traced.record_for("telemetry").hooks
    )
    assert traced.has_several("tool_call")
