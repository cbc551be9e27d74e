"""What a ``tools/call`` request gets: the call's result or, for a client of the newest protocol revision,
the call's next ask as an input-required result.

A call runs in a task of its own (it outlives the requests that carry its asks). :meth:`Rounds.answer`
waits for the first of its result and its next ask: an ask answers the request with an input-required
result and suspends the call until the client's next ``tools/call`` brings the answer and the state named
there (:meth:`Rounds.resume`), for at most :data:`ASK_TIMEOUT` seconds. A cancelled request (the client's
``notifications/cancelled``, the connection closing) is the call's abort.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from .calls import Ask, Call

#: Seconds a cancelled call gets to end after its abort before its task is cancelled.
CANCEL_BOUND = 5.0
#: Seconds a call waits for a client of the newest revision to answer its ask (then it is aborted).
ASK_TIMEOUT = 600.0
#: The key of a call's ask among an input-required result's requests.
ASK_KEY = "ask"
#: The first protocol revision whose asks are input-required results.
INPUT_REQUIRED_VERSION = "2026-07-28"


@functools.lru_cache(maxsize=16)
def asks_in_rounds(protocol_version: str | None) -> bool:
    """Whether a client of ``protocol_version`` is asked through input-required results (the newest
    revision, 2026-07-28, sends no request to a client in the middle of a call)."""
    from mcp_types.version import is_version_at_least

    return protocol_version is not None and is_version_at_least(protocol_version, INPUT_REQUIRED_VERSION)


@dataclass
class _Suspended:
    """A call waiting for its ask to be answered by the client's next ``tools/call``."""

    call: Call
    running: asyncio.Future[types.CallToolResult]
    ask: Ask
    expiry: asyncio.TimerHandle


class Rounds:
    """The calls of a host waiting for a client of the newest revision to answer their asks."""

    def __init__(self) -> None:
        self._suspended: dict[str, _Suspended] = {}
        """The waiting calls, by request state."""

    async def answer(
        self, call: Call, running: asyncio.Future[types.CallToolResult]
    ) -> types.CallToolResult | types.InputRequiredResult:
        """What the request gets: the call's result, or (newest revision) its next ask as an
        input-required result. A cancellation of the request (the client's ``notifications/cancelled``,
        the connection closing) is the call's abort: the tool sees ``ctx.abort``, stops between two steps
        (bash stops its process group), and the cancellation goes on once it has ended (within
        :data:`CANCEL_BOUND` seconds)."""
        import anyio

        try:
            ask = await call.next_turn(running)
        except asyncio.CancelledError:
            call.abort.abort("cancelled")
            with anyio.CancelScope(shield=True), contextlib.suppress(BaseException):
                await asyncio.wait({running}, timeout=CANCEL_BOUND)
            if not running.done():
                running.cancel()
            raise
        if ask is None:
            return running.result()
        return self._suspend(call, running, ask)

    def _suspend(
        self, call: Call, running: asyncio.Future[types.CallToolResult], ask: Ask
    ) -> types.InputRequiredResult:
        """Answer the request with the call's ask; the call waits (at most :data:`ASK_TIMEOUT` seconds)
        for the client's next ``tools/call``, which carries the answer and the state named here."""
        import secrets

        state = secrets.token_urlsafe(24)
        expiry = asyncio.get_running_loop().call_later(ASK_TIMEOUT, self._expire, state)
        self._suspended[state] = _Suspended(call, running, ask, expiry)
        params: types.ElicitRequestFormParams | types.ElicitRequestURLParams = (
            types.ElicitRequestURLParams(
                message=ask.message, url=ask.url, elicitation_id=ask.elicitation_id or ""
            )
            if ask.url is not None
            else types.ElicitRequestFormParams(message=ask.message, requested_schema=ask.requested_schema)
        )
        request = types.ElicitRequest(params=params)
        return types.InputRequiredResult(input_requests={ASK_KEY: request}, request_state=state)

    def _expire(self, state: str) -> None:
        """Nobody answered a call's ask in time: the ask is unanswered, and the call aborted."""
        suspended = self._suspended.pop(state, None)
        if suspended is not None:
            suspended.call.abort.abort("unanswered")
            if not suspended.ask.answer.done():
                suspended.ask.answer.set_result(None)

    async def resume(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The client's answer to a call's ask: the call goes on, and this request gets what comes next."""
        from mcp.shared.exceptions import MCPError

        suspended = self._suspended.pop(str(params.request_state), None)
        if suspended is None:
            raise MCPError(types.INVALID_PARAMS, "Unknown or expired requestState: call the tool again")
        suspended.expiry.cancel()
        call, answer = suspended.call, suspended.ask.answer
        call.outbound, call.request_id = ctx.session, ctx.request_id  # progress goes to this request now
        if not answer.done():
            answer.set_result((params.input_responses or {}).get(ASK_KEY))
        return await self.answer(call, suspended.running)
