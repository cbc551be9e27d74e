"""What a host relays between the MCP servers its calls reach and its own client: the typed wiring a
session carries (``Session.relay``) and every call's context hands on (``ctx.relay``).

``opencode mcp serve`` sets all three, so that a configured server's progress, result and elicitation
reach the client the call is served to; a host that serves no one onwards leaves the relay out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ProgressSink = Callable[[float, float | None, str | None], None]
"""``sink(progress, total, message)``: an MCP tool's progress report."""
ResultSink = Callable[[Any], None]
"""``sink(result)``: an MCP tool's result as its server sent it (the SDK's ``CallToolResult``)."""
Elicitor = Callable[[], Any]
"""Called in the call's context: the bound ask of the host's client (``mcp serve``'s
:class:`~opencode_cli.mcp.serve.calls.Elicitor`), or ``None`` when nobody can be asked. Awaiting the ask
with an :class:`~opencode_cli.mcp.asks.Elicitation` puts it (a form, or a URL) to the person behind the
client and gives the SDK's ``ElicitResult`` (``None``: unanswered); its ``takes(mode)`` says whether the
client takes ``"form"`` or ``"url"`` requests."""


@dataclass(frozen=True)
class Relay:
    """The host's ends of what passes through a call of an MCP server's tool (each optional)."""

    progress: ProgressSink | None = None
    """Where the tool's progress goes (run in the call's context)."""
    result: ResultSink | None = None
    """Where the tool's result goes before it is mapped for the model (a host passing it on as is)."""
    elicitor: Elicitor | None = None
    """How a server's ``elicitation/create`` during the call is put to the host's client."""
