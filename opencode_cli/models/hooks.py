"""What the run loop hands the chat hooks (``chat_params``, ``session_compacting``), and the relay that
gives the ``event`` hook every event of a run, in order.

The hook specs themselves are in :mod:`opencode_cli.hookspecs`; the loop calls them
(:mod:`opencode_cli.models.loop`).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..session import Session


@dataclass
class ChatParams:
    """The sampling settings of one request, for ``chat_params`` to change (``None``: not sent)."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    max_output_tokens: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    """Provider options: extra fields of the request body."""


@dataclass
class PreparedRequest:
    """What the run loop would send for a prompt, after the chat hooks (see
    :func:`opencode_cli.models.loop.prepare_request`): ``messages`` (system prompt first), the sampling
    ``params`` and the extra ``headers``."""

    messages: list[Any]
    params: ChatParams
    headers: dict[str, str]

    @property
    def system(self) -> list[str]:
        """The system prompt's parts, as sent."""
        return [message.content or "" for message in self.messages if message.role == "system"]


@dataclass
class CompactingOutput:
    """What ``session_compacting`` may change: strings added to the summary request (``context``), or a
    ``prompt`` that replaces the summary request's instructions altogether."""

    context: list[str] = field(default_factory=list)
    prompt: str | None = None


class EventRelay:
    """Every event of a session's run, in order, to the plugins' ``event`` hook: the transcript's
    ``message.updated`` and ``message.part.updated``, the project's ``permission.asked`` and
    ``permission.replied`` for this session, and ``session.error`` / ``session.idle`` at the end.

    Each event is ``{"type": ..., "properties": {...}}``, as OpenCode's bus carries it. Events are queued
    as they happen and handed over one at a time by a task of the relay; a plugin whose hook raises is
    warned about once and the run goes on. Does nothing when no plugin implements ``event``.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.active = bool(session.project.plugins.implementers("event"))
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._stops: list[Any] = []
        self._task: asyncio.Task[None] | None = None
        self._warned = False

    def publish(self, type: str, properties: dict[str, Any]) -> None:
        """Queue one event."""
        if self.active:
            self._queue.put_nowait({"type": type, "properties": properties})

    def _permission(self, event: str, data: dict[str, Any]) -> None:
        if data.get("sessionID") == self.session.id:
            self.publish(event, dict(data))

    def _transcript(self, event: str, data: dict[str, Any]) -> None:
        self.publish(event, data)

    async def __aenter__(self) -> EventRelay:
        if self.active:
            self._stops.append(self.session.project.permissions.subscribe(self._permission))
            listeners = self.session.transcript.listeners
            listeners.append(self._transcript)
            self._stops.append(lambda: listeners.remove(self._transcript))
            self._task = asyncio.create_task(self._deliver())
        return self

    async def __aexit__(self, kind: Any, error: BaseException | None, traceback: Any) -> None:
        for stop in self._stops:
            stop()
        self._stops.clear()
        if self._task is None:
            return
        if error is not None and isinstance(error, Exception):
            self.publish("session.error", {"sessionID": self.session.id, "error": str(error)})
        self.publish("session.idle", {"sessionID": self.session.id})
        self._queue.put_nowait(None)
        if error is None or isinstance(error, Exception):
            await self._task
        else:  # interrupted: the plugins are not waited for
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    async def _deliver(self) -> None:
        from ..plugins import describe_exception

        plugins = self.session.project.plugins
        while (event := await self._queue.get()) is not None:
            try:
                await plugins.acall("event", event=event)
            except Exception as error:
                if not self._warned:
                    self._warned = True
                    self.session.project.warn(
                        f"a plugin failed in the event hook: {describe_exception(error)}"
                    )
