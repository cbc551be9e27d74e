"""The hooks of the ``telemetry`` built-in plugin when OpenTelemetry is configured (:class:`Tracing`).

Imported by :mod:`opencode_cli.builtin.telemetry` only when a project loads that plugin with OpenTelemetry
configured: otherwise the plugin is an object without hooks, and neither this module nor its package is
imported.
"""

from __future__ import annotations

from collections.abc import Awaitable, Generator
from typing import TYPE_CHECKING, Any

from ..hookspecs import hookimpl
from . import instruments_now, tracing

if TYPE_CHECKING:
    from ..permission import AskOutput, Request
    from ..results import ToolResult
    from ..session import Session


class Tracing:
    """The hooks that trace each call. The whole call is wrapped (``tool_call``), so that a refused
    doom-loop ask and a ``tool_execute_before`` hook that raised are on its span too;
    ``tool_execute_before`` (first) and ``tool_execute`` (a wrapper) tell how far the call got, and
    ``permission_ask`` (last, once the other plugins had their say) adds each ask as an event."""

    @hookimpl(wrapper=True, tryfirst=True)
    def tool_call(
        self, tool: str, call_id: str | None, args: dict[str, Any], session: Session
    ) -> Generator[None, Awaitable[ToolResult], Awaitable[ToolResult]]:
        """The call's ``execute_tool`` span, from the doom-loop check to the last hook."""
        running = yield
        instruments = tracing(session.project.plugins)
        if instruments is None:  # switched off since (OTEL_SDK_DISABLED, the host's provider gone)
            return running
        return instruments.tool_call(tool, call_id, args, session, running)

    @hookimpl(tryfirst=True)
    def tool_execute_before(self) -> None:
        """The call got past its doom-loop check: what fails from here on is a ``tool_execute_before``
        hook."""
        instruments = instruments_now()
        if instruments is not None:
            instruments.stage("before")

    @hookimpl(wrapper=True, tryfirst=True)
    def tool_execute(self) -> Generator[None, Awaitable[ToolResult], Awaitable[ToolResult]]:
        """The call got to its tool; once the tool returned, what fails is a ``tool_execute_after`` hook."""
        running = yield
        instruments = instruments_now()
        if instruments is None or not instruments.stage("tool"):
            return running

        async def executed() -> ToolResult:
            result = await running
            instruments.stage("after")
            return result

        return executed()

    @hookimpl(trylast=True)
    def permission_ask(self, request: Request, output: AskOutput) -> None:
        """Each permission ask of a traced call, with what the plugins before this one made of it."""
        instruments = instruments_now()
        if instruments is not None:
            instruments.permission_asked(request.permission, str(output.status))
