"""What is recorded, and how it is named: spans and metrics after OpenTelemetry's GenAI and MCP conventions.

Imported only when OpenTelemetry is configured (:func:`opencode_cli.telemetry.tracing`). The names follow
the GenAI semantic conventions as semantic-conventions 1.38 gave them and their continuation in the
``semantic-conventions-genai`` repository (``execute_tool``, ``invoke_agent`` and ``chat`` spans,
``gen_ai.execute_tool.duration``, ``gen_ai.client.operation.duration`` and ``gen_ai.client.token.usage``),
and its MCP conventions (``mcp.server.operation.duration``; the MCP spans themselves, with the trace
context in ``params._meta``, are the mcp SDK's). What the conventions do not name is under ``opencode.``
(see docs/telemetry.md for the list).

This instrumentation is new: it emits the latest experimental conventions and has no older version to keep
for ``OTEL_SEMCONV_STABILITY_OPT_IN`` (the conventions ask that switch of instrumentations that emitted
1.36 or earlier).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import time
import weakref
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opentelemetry import metrics, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from .. import __version__
from ..errors import DeniedError, PermissionFailure, message_of
from ..parts import Outcome
from ..telemetry_environment import capture_content, host_provider

if TYPE_CHECKING:
    from ..results import ToolResult

#: The instrumentation scope of every span and metric.
SCOPE = "opencode_cli"

#: OpenCode's (the AI SDK's) finish reasons as the conventions name them.
FINISH_REASONS = {"tool-calls": "tool_call", "content-filter": "content_filter"}

_current: Instruments | None = None


def current() -> Instruments:
    """The instruments of the process's providers now (set from the environment first, if nobody did)."""
    global _current
    if not host_provider():
        from .setup import install

        install()
    tracer_provider, meter_provider = trace.get_tracer_provider(), metrics.get_meter_provider()
    if _current is None or _current.providers != (tracer_provider, meter_provider):
        _current = Instruments(tracer_provider, meter_provider)
    return _current


def made() -> Instruments | None:
    """The instruments :func:`current` made last (``None``: none yet), without making any."""
    return _current


@dataclass
class _Call:
    """One tool call being traced: its span, how far it got, and the permission asked last."""

    span: Any
    stage: str = "start"
    """``start`` (the doom-loop check), ``before`` (``tool_execute_before``), ``tool`` (``tool_execute``),
    ``after`` (``tool_execute_after``)."""
    asked: list[str] = field(default_factory=list)


#: The tool call traced in this task.
_CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("opencode_traced_call", default=None)


class Instruments:
    """The tracer, the meter and the instruments of one pair of providers."""

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        self.providers = (tracer_provider, meter_provider)
        self.tracer = tracer_provider.get_tracer(SCOPE, __version__)
        meter = meter_provider.get_meter(SCOPE, __version__)
        self.tool_duration = meter.create_histogram(
            "gen_ai.execute_tool.duration", unit="s", description="Duration of tool executions."
        )
        self.chat_duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="GenAI operation duration."
        )
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Number of input and output tokens used."
        )
        self.mcp_server_duration = meter.create_histogram(
            "mcp.server.operation.duration",
            unit="s",
            description="Duration of MCP requests, as the server saw it.",
        )
        self.served_requests = meter.create_up_down_counter(
            "opencode.mcp.server.active_requests",
            unit="{request}",
            description="tools/call requests that opencode mcp serve is running now.",
        )
        self._hosts: weakref.WeakSet[Any] = weakref.WeakSet()
        meter.create_observable_up_down_counter(
            "opencode.mcp.server.clients",
            callbacks=[self._count_clients],
            unit="{client}",
            description="Clients opencode mcp serve knows now (its stdio client, or its HTTP sessions).",
        )

    # -- tool calls: the telemetry plugin's hooks ------------------------------------------------------

    async def tool_call(
        self, tool: str, call_id: str | None, args: Any, session: Any, running: Awaitable[ToolResult]
    ) -> ToolResult:
        """Await ``running`` (the whole call) inside its ``execute_tool`` span, and record its duration."""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function",
            "gen_ai.conversation.id": session.id,
        }
        if call_id is not None:
            attributes["gen_ai.tool.call.id"] = call_id
        described = _describe(attributes, session, tool)
        captured = capture_content()
        if captured:
            attributes["gen_ai.tool.call.arguments"] = _json(args)
        started = time.perf_counter()
        span = self.tracer.start_span(
            f"execute_tool {tool}", kind=SpanKind.INTERNAL, attributes=attributes, record_exception=False
        )
        call = _Call(span)
        token = _CALL.set(call)
        outcome, error_type = Outcome.COMPLETED, None
        try:
            with trace.use_span(
                span, end_on_exit=True, record_exception=False, set_status_on_exception=False
            ):
                try:
                    result = await running
                except BaseException as error:
                    outcome, error_type = _called_off(call, error), _error_type(error)
                    raise
                finally:
                    if not described and _describe(attributes, session, tool):
                        span.set_attributes(attributes)
                _completed(span, result, captured)
                return result
        finally:
            _CALL.reset(token)
            self._tool_done(attributes, started, outcome, error_type)

    def _tool_done(
        self, attributes: dict[str, Any], started: float, outcome: Outcome, error: str | None
    ) -> None:
        labels = {
            key: attributes[key] for key in ("gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.type")
        }
        labels["opencode.tool.outcome"] = str(outcome)
        if error is not None:
            labels["error.type"] = error
        self.tool_duration.record(time.perf_counter() - started, labels)

    def stage(self, stage: str) -> bool:
        """The traced call in this task got to ``stage`` (``before``, ``tool``, ``after``); ``False`` when
        no call is traced in this task."""
        call = _CALL.get()
        if call is None:
            return False
        call.stage = stage
        return True

    def permission_asked(self, permission: str, status: str) -> None:
        """A permission ask of the traced call in this task (what the hooks made of it: ``status``)."""
        call = _CALL.get()
        if call is None:
            return
        call.asked.append(permission)
        call.span.add_event(
            "opencode.permission.asked",
            {"opencode.permission": permission, "opencode.permission.hooks": status},
        )

    # -- opencode run ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def agent(self, session: Any, model: Any) -> Iterator[_Run]:
        """The ``invoke_agent`` span of a run (current while it runs: its chats and calls are children)."""
        agent = session.agent.name
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": session.id,
            "gen_ai.provider.name": model.provider.name,
            "gen_ai.request.model": model.id,
        }
        with self._span(f"invoke_agent {agent}", SpanKind.INTERNAL, attributes) as span:
            yield _Run(span)

    @contextlib.contextmanager
    def chat(self, model: Any) -> Iterator[_Chat]:
        """The ``chat`` span of one request to the model, and its duration and token metrics."""
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": model.provider.name,
            "gen_ai.request.model": model.id,
        }
        started = time.perf_counter()
        chat = _Chat(self, attributes)
        error: str | None = None
        try:
            with self._span(f"chat {model.id}", SpanKind.CLIENT, attributes) as span:
                chat.span = span
                yield chat
        except BaseException as failure:
            error = _error_type(failure)
            raise
        finally:
            labels = dict(attributes) | ({"error.type": error} if error else {})
            self.chat_duration.record(time.perf_counter() - started, labels)

    # -- mcp serve -------------------------------------------------------------------------------------
    # The mcp SDK (2.x) traces MCP itself: its client sends each request in a CLIENT span and injects the
    # trace context into params._meta; its server's OpenTelemetryMiddleware opens a SERVER span per request
    # with the extracted context as parent. Both use the global providers, which :func:`current` sets from
    # the environment when nobody did, so no MCP span is made here (the conventions ask not to make two).

    def served_call(self, running: Awaitable[Any], method: str) -> Awaitable[Any]:
        """Count a served request among those in flight while ``running`` runs, and record its duration
        (``mcp.server.operation.duration``, with ``error.type`` if it failed or its tool did)."""

        async def counted() -> Any:
            labels = {"mcp.method.name": method}
            started = time.perf_counter()
            error: str | None = None
            self.served_requests.add(1, labels)
            try:
                result = await running
                if getattr(result, "is_error", False):
                    error = "tool_error"
                return result
            except BaseException as failure:
                error = _error_type(failure)
                raise
            finally:
                self.served_requests.add(-1, labels)
                self.mcp_server_duration.record(time.perf_counter() - started, labels | _maybe(error))

        return counted()

    def serving(self, host: Any) -> None:
        """Count the clients of ``host`` (an ``mcp serve`` host) while it lives."""
        self._hosts.add(host)

    def _count_clients(self, options: Any) -> list[Any]:
        from opentelemetry.metrics import Observation

        return [Observation(len(host.clients.by_key)) for host in list(self._hosts)]

    # -- spans -----------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _span(self, name: str, kind: SpanKind, attributes: dict[str, Any]) -> Iterator[Any]:
        """A current span that says how it failed (``error.type``, the status) when the block raises."""
        with self.tracer.start_as_current_span(
            name, kind=kind, attributes=attributes, record_exception=False, set_status_on_exception=False
        ) as span:
            try:
                yield span
            except BaseException as error:
                _mark_error(span, _error_type(error), error)
                raise


class _Run:
    """A run's span: what it ended with."""

    def __init__(self, span: Any) -> None:
        self.span = span

    def finished(self, reason: str, steps: int) -> None:
        self.span.set_attribute("gen_ai.response.finish_reasons", [FINISH_REASONS.get(reason, reason)])
        self.span.set_attribute("opencode.run.steps", steps)


class _Chat:
    """A chat span: the model's finish reason and token usage."""

    def __init__(self, instruments: Instruments, attributes: dict[str, Any]) -> None:
        self.instruments = instruments
        self.attributes = attributes
        self.span: Any = None

    def finished(self, finish: Any) -> None:
        """Record the reply's :class:`~opencode_cli.models.base.Finish` (``None``: the stream had none)."""
        if finish is None:
            return
        self.span.set_attribute(
            "gen_ai.response.finish_reasons", [FINISH_REASONS.get(finish.reason, finish.reason)]
        )
        usage = finish.usage or {}
        counts = {
            "input": _tokens(usage, "prompt_tokens", "input_tokens"),
            "output": _tokens(usage, "completion_tokens", "output_tokens"),
        }
        cached = _tokens(usage, "cache_read_input_tokens")
        for kind, count in counts.items():
            if count is None:
                continue
            self.span.set_attribute(f"gen_ai.usage.{kind}_tokens", count)
            self.instruments.tokens.record(count, {**self.attributes, "gen_ai.token.type": kind})
        if cached is not None:
            self.span.set_attribute("gen_ai.usage.cache_read.input_tokens", cached)


def _describe(attributes: dict[str, Any], session: Any, tool: str) -> bool:
    """Add the tool's description and type to ``attributes``; ``False`` when the registry does not have
    it yet (an MCP server's tool before the server connected: the call connects it, and it is asked
    again once the call ended) or at all (the call fails for that)."""
    try:
        entry = session.project.registry.get(tool)
        attributes["gen_ai.tool.description"] = entry.description
        attributes["gen_ai.tool.type"] = "extension" if entry.source.kind == "mcp" else "function"
    except Exception:
        return False
    return True


def _completed(span: Any, result: ToolResult, captured: bool) -> None:
    """Mark a completed call's span: its outcome, whether its output was cut and where it spilled, and
    the output itself when the user opted in."""
    span.set_attribute("opencode.tool.outcome", str(Outcome.COMPLETED))
    truncated = result.metadata.get("truncated")
    if isinstance(truncated, bool):
        span.set_attribute("opencode.tool.truncated", truncated)
    spilled = result.metadata.get("outputPath")
    if isinstance(spilled, str):
        span.add_event("opencode.tool.output.spilled", {"opencode.tool.output.path": spilled})
    if captured:
        span.set_attribute("gen_ai.tool.call.result", result.output)


# -- how a call ended ------------------------------------------------------------------------------------


def _called_off(call: _Call, error: BaseException) -> Outcome:
    """Mark a failed call's span: its outcome, the error's type, and what cut it short (a doom-loop
    refusal, a hook that raised, an interrupt)."""
    span = call.span
    outcome = Outcome.of(error)
    span.set_attribute("opencode.tool.outcome", str(outcome))
    permission = _permission_of(call, error)
    if permission is not None:
        span.set_attribute("opencode.permission", permission)
        if permission == "doom_loop":
            span.add_event("opencode.doom_loop.refused")
    elif outcome is Outcome.ABORTED:
        span.add_event("opencode.tool.interrupted")
    elif call.stage in ("before", "after"):
        span.add_event(
            "opencode.hook.failed",
            {"opencode.hook.name": f"tool_execute_{call.stage}", "error.type": _error_type(error)},
        )
    _mark_error(span, _error_type(error), error, str(outcome))
    return outcome


def _permission_of(call: _Call, error: BaseException) -> str | None:
    """The permission a refused call was refused: the doom-loop ask's, when the call had not got past its
    doom-loop check (the one ask made there), else a deny rule's, or the one asked last."""
    if not isinstance(error, PermissionFailure):
        return None
    if call.stage == "start":
        return "doom_loop"
    if isinstance(error, DeniedError):
        names = [rule.get("permission") for rule in error.rules if isinstance(rule, dict)]
        found = next((name for name in names if isinstance(name, str) and name != "*"), None)
        if found is not None:
            return found
    return call.asked[-1] if call.asked else None


def _mark_error(
    span: Any, error_type: str, error: BaseException | None, description: str | None = None
) -> None:
    """``error.type`` and an error status, described by the error's first line when the user opted in to
    content (an error's words may quote a call's arguments or output), else by ``description``."""
    span.set_attribute("error.type", error_type)
    words = message_of(error).splitlines() if error is not None and capture_content() else []
    span.set_status(Status(StatusCode.ERROR, words[0] if words else description))


def _error_type(error: BaseException) -> str:
    """``error.type``: a JSON-RPC error's code, a timeout, or the exception's qualified type name."""
    code = getattr(getattr(error, "error", None), "code", None)
    if isinstance(code, int):
        return str(code)
    if isinstance(error, TimeoutError):
        return "timeout"
    kind = type(error)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _maybe(error: str | None) -> dict[str, str]:
    return {"error.type": error} if error else {}


def _tokens(usage: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, int):
            return value
    return None


def _json(value: Any) -> str:
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return str(value)
