"""One ``tools/call`` as the server runs it: the client's channel, live progress, unanswered asks.

The call is the current one of the task that runs it (a context variable), so the session-wide hooks
— the metadata sink and the permission prompt — reach the request they belong to, also when several
calls run at once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import warnings
from dataclasses import dataclass, field
from typing import Any

from ...context import AbortSignal
from ...live import added_output
from ...loops import running_loop
from ...permission import Request as PermissionRequest

#: The call running in the current task (``None`` outside a ``tools/call``).
CURRENT: contextvars.ContextVar[Call | None] = contextvars.ContextVar("opencode_mcp_call", default=None)

#: Seconds the progress still queued when a call ends may take to be sent.
FLUSH_TIMEOUT = 5.0


# The SDK marks logging deprecated as of the newest revision (which keeps it as a per-request opt-in), and
# warns at each use: the server keeps serving it to the revisions that have it, without that noise.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")

#: MCP's log levels, least severe first (RFC 5424's, as ``logging/setLevel`` names them).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: The level a client gets log messages from until it sets one with ``logging/setLevel``.
DEFAULT_LOG_LEVEL = "info"
#: The logger name of the messages the server sends about calls.
LOGGER = "opencode"


def at_least(level: str, threshold: str) -> bool:
    """Whether ``level`` is ``threshold`` or more severe."""
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)


@dataclass
class Call:
    """A ``tools/call`` in flight: ``outbound`` is the SDK's channel back to its client."""

    outbound: Any
    request_id: Any
    unanswered: list[PermissionRequest] = field(default_factory=list)
    """Permission asks nobody could answer (the client has no elicitation), in order."""
    log_level: str = DEFAULT_LOG_LEVEL
    """The client's ``logging/setLevel``: log messages below it are not sent."""
    upstream: Any = None
    """An MCP tool's result as its server sent it (the SDK's ``CallToolResult``), passed on unchanged."""
    rounds: bool = False
    """The client speaks the newest protocol revision: asks go out as input-required results answered
    by the client's next ``tools/call`` (no request can be sent to it in the middle of a call)."""
    abort: AbortSignal = field(default_factory=AbortSignal)

    def __post_init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[float | None, float | None, str | None] | None] | None = None
        """Progress to send (made with the first report)."""
        self._pump: asyncio.Task[None] | None = None
        self._shown = ""
        self._asks: collections.deque[Ask] = collections.deque()
        """Asks made and not yet put to the client (newest revision)."""
        self._waiter: asyncio.Future[None] | None = None
        """Set when an ask is made, or the call ends (:meth:`next_turn` waits on it)."""
        self._sent: float = 0

    # -- asking the person behind the client -----------------------------------------------------------

    def can_elicit(self) -> bool:
        """Whether the client can be put a form: it declared elicitation, and can be sent a request in
        the middle of a call or speaks the newest revision (where the ask is an input-required result)."""
        if not declares_elicitation(self.outbound):
            return False
        return self.rounds or getattr(self.outbound, "can_send_request", True)

    async def elicit(self, message: str, requested_schema: dict[str, Any]) -> Any:
        """Put a form to the person behind the client; the SDK's ``ElicitResult`` (``action``, ``content``),
        or ``None`` when it was not answered. On the newest revision the call's request is answered with
        the ask (:meth:`next_ask` gives it to the host) and the answer comes with the client's next call;
        on the others it is an ``elicitation/create`` request within the call's request."""
        if self.rounds:
            return await self._ask(Ask(message, requested_schema, self._loop.create_future()))
        return await self.outbound.elicit_form(message, requested_schema, related_request_id=self.request_id)

    def can_open_urls(self) -> bool:
        """Whether the client can be sent to a URL (URL-mode elicitation): it declared it, and can be asked
        in the middle of a call or speaks the newest revision."""
        if not declares_url_elicitation(self.outbound):
            return False
        return self.rounds or getattr(self.outbound, "can_send_request", True)

    async def elicit_url(self, message: str, url: str, elicitation_id: str) -> Any:
        """Send the person behind the client to ``url`` (URL-mode elicitation): the SDK's ``ElicitResult``,
        or ``None`` when it was not answered; asked as :meth:`elicit` asks a form."""
        if self.rounds:
            answer = self._loop.create_future()
            return await self._ask(Ask(message, {}, answer, url=url, elicitation_id=elicitation_id))
        return await self.outbound.elicit_url(
            message, url, elicitation_id, related_request_id=self.request_id
        )

    async def _ask(self, ask: Ask) -> Any:
        """Hand ``ask`` to the request waiting in :meth:`next_turn`; its answer, once the client's next
        ``tools/call`` brings it."""
        self._asks.append(ask)
        self._wake()
        return await ask.answer

    def _wake(self, *_: Any) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def next_turn(self, running: asyncio.Future[Any]) -> Ask | None:
        """Wait until the call's task ``running`` ends (``None``) or, on the newest revision, the tool
        makes an ask (that ask). Nothing is made to wait but one future."""
        if not running.done() and not self._asks:
            self._waiter = self._loop.create_future()
            running.add_done_callback(self._wake)
            try:
                await self._waiter
            finally:
                running.remove_done_callback(self._wake)
                self._waiter = None
        return None if running.done() or not self._asks else self._asks.popleft()

    # -- log messages -------------------------------------------------------------------------------------

    async def log(self, level: str, message: str, **fields: Any) -> None:
        """Tell the client what happens to this call as ``notifications/message`` at ``level`` (if it
        is at or above the client's level; a client of the newest revision gets it only when its request
        opted in through ``_meta``, which the SDK checks)."""
        if not self.rounds and not at_least(level, self.log_level):  # newest revision: its request's opt-in
            return
        data = {"message": message, **fields}
        with contextlib.suppress(Exception):
            await self.outbound.send_log_message(
                level, data, logger=LOGGER, related_request_id=self.request_id
            )

    # -- live progress -----------------------------------------------------------------------------------

    def metadata(self, title: str | None, metadata: dict[str, Any] | None) -> None:
        """A tool's ``ctx.metadata()``: its new output (bash streams it so) or its title, as a progress
        notification (the SDK sends nothing when the client asked for no progress)."""
        output = (metadata or {}).get("output")
        if isinstance(output, str):
            message, self._shown = added_output(self._shown, output), output
        else:
            message = title or ""
        if not message:
            return
        self._report((None, None, message))

    def progress(self, value: float, total: float | None, message: str | None) -> None:
        """An MCP tool's progress report, passed on as its server sent it."""
        self._report((value, total, message))

    def _report(self, report: tuple[float | None, float | None, str | None]) -> None:
        if running_loop() is self._loop:
            self._put(report)
        else:  # a tool reporting from a thread of its own
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._put, report)

    def _put(self, report: tuple[float | None, float | None, str | None]) -> None:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._pump = asyncio.ensure_future(self._send(self._queue))
        self._queue.put_nowait(report)

    async def _send(self, queue: asyncio.Queue[tuple[float | None, float | None, str | None] | None]) -> None:
        while (report := await queue.get()) is not None:
            value, total, message = report
            self._sent = self._sent + 1 if value is None else value
            with contextlib.suppress(Exception):  # a client gone away: the call still ends normally
                await self.outbound.report_progress(self._sent, total, message)

    async def finish(self) -> None:
        """Send the progress still queued (before the result, so the client sees it in order)."""
        if self._pump is None or self._queue is None:
            return
        self._queue.put_nowait(None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(self._pump), FLUSH_TIMEOUT)
        self.close()

    def close(self) -> None:
        """Stop sending progress (the call ended, or was cancelled)."""
        if self._pump is not None and not self._pump.done():
            self._pump.cancel()


@dataclass
class Ask:
    """A form a call waits on the answer to (newest revision: sent as an input-required result)."""

    message: str
    requested_schema: dict[str, Any]
    answer: asyncio.Future[Any]
    url: str | None = None
    """Where to send the person (a URL-mode ask), with its ``elicitation_id``."""
    elicitation_id: str | None = None


def declares_elicitation(outbound: Any) -> bool:
    """Whether the client behind ``outbound`` said it takes elicitation forms."""
    capabilities = getattr(outbound, "client_capabilities", None)
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None  # `{}` means form mode (the spec)


def declares_url_elicitation(outbound: Any) -> bool:
    """Whether the client behind ``outbound`` said it takes URL-mode elicitation."""
    capabilities = getattr(outbound, "client_capabilities", None)
    elicitation = getattr(capabilities, "elicitation", None)
    return elicitation is not None and elicitation.url is not None


class Elicitor:
    """A call's elicitation, bound to it and callable from any task: a configured server's
    ``elicitation/create`` (a form, or a URL) put to the person behind the serving client."""

    def __init__(self, call: Call) -> None:
        self.call = call

    def takes(self, mode: str) -> bool:
        """Whether the client can be asked a ``mode`` (``"form"`` or ``"url"``) elicitation."""
        return self.call.can_open_urls() if mode == "url" else self.call.can_elicit()

    async def __call__(self, request: Any) -> Any:
        """Put ``request`` (an :class:`~opencode_cli.mcp.asks.Elicitation`) to the client: its answer."""
        if request.mode == "url":
            import secrets

            ident = request.elicitation_id or secrets.token_urlsafe(12)
            return await self.call.elicit_url(request.message, request.url or "", ident)
        return await self.call.elicit(request.message, request.schema)


def current_elicitor() -> Elicitor | None:
    """The elicitation of the call running in this context, or ``None`` when nobody can be asked. The
    hook by which a configured MCP server's own ``elicitation/create`` is forwarded to the serving client:
    sessions of ``mcp serve`` carry this as ``Relay.elicitor`` (``ctx.relay``); call it in the call's
    context, await what it returns elsewhere."""
    call = CURRENT.get()
    if call is None or not (call.can_elicit() or call.can_open_urls()):
        return None
    return Elicitor(call)


def forward_progress(value: float, total: float | None, message: str | None) -> None:
    """The sessions' sink for an MCP tool's progress: to the call running in this context, if any."""
    call = CURRENT.get()
    if call is not None:
        call.progress(value, total, message)


def keep_result(result: Any) -> None:
    """The sessions' sink for an MCP tool's own result: kept by the call running in this task."""
    call = CURRENT.get()
    if call is not None:
        call.upstream = result


def forward_metadata(title: str | None, metadata: dict[str, Any] | None) -> None:
    """The sessions' metadata sink: live progress goes to the call running in this task, if any."""
    call = CURRENT.get()
    if call is not None:
        call.metadata(title, metadata)
