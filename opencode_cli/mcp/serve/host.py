"""The MCP server host: the tools an agent and model are offered, served to every client that connects.

Each client has a :class:`~opencode_cli.session.Session` of its own (over stdio there is one client;
over HTTP each MCP session id is one, and a request without one, from a client of the newest protocol
revision, is a client of its own whose session ends with the request). ``tools/list`` is that session's
``resolve()`` (the per-model filter, tools denied wholly left out, ``invalid`` never listed),
``tools/call`` its ``dispatch()`` as a model step of its own, inside a hold of the project's
generation, so a reload waits for the calls in flight. Both wait first for the configured MCP servers
still connecting (each within its start timeout), so that the first list is whole. An "always" answer
allows what it covers in that client's session only. After each reload that changes anything, every
client is sent ``notifications/tools/list_changed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server

from ... import __version__
from ...context import AbortSignal
from ...session import QUESTION_ASKER, ToolCall
from .asking import declares_elicitation, hint, make_prompt
from .calls import CURRENT, Call, forward_metadata
from .content import result_for, tool_for
from .questions import ask_questions

if TYPE_CHECKING:
    from ...permission import Rule
    from ...project import Project
    from ...session import Session

#: Seconds the calls in flight get to end after their abort when the server stops.
ABORT_BOUND = 0.5

#: Messages (steps, one per call) a client's session holds in memory; a remembered one keeps all in the
#: store.
SESSION_WINDOW = 64

#: The key of the one client of a stdio server.
STDIO_CLIENT = "stdio"

INSTRUCTIONS = (
    "OpenCode's tools, with OpenCode's permission rules, project boundary, output truncation and plugin "
    "hooks. Paths are relative to the project the server was started in."
)


@dataclass
class ServeOptions:
    """What ``opencode mcp serve`` was asked for."""

    model: str | None = None
    agent: str | None = None
    rules: list[Rule] = field(default_factory=list)
    """``--allow`` / ``--deny`` as session rules."""
    yes: bool = False
    session_id: str | None = None
    """A remembered session for the (one) stdio client."""


@dataclass
class Client:
    """One connected client: its session and the SDK's channel back to it."""

    key: str
    session: Session
    outbound: Any = None
    once: bool = False
    """A client of one request (no MCP session): its session ends with the request."""
    seen: float = field(default_factory=time.monotonic)


class _Server(Server):
    """The SDK's low-level server, advertising ``tools.listChanged`` on every transport."""

    def create_initialization_options(
        self, notification_options: Any = None, *args: Any, **kwargs: Any
    ) -> Any:
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, *args, **kwargs)


class ServeHost:
    """The server for ``project``; :attr:`server` is the SDK's server the transports run."""

    def __init__(
        self, project: Project, options: ServeOptions, log: Callable[[str], None] | None = None
    ) -> None:
        self.project = project
        self.options = options
        self.model = project.model(options.model)
        self.agent = project.agent(options.agent).name  # an unknown agent is an error now
        self._log = log or (lambda text: print(f"opencode mcp serve: {text}", file=sys.stderr, flush=True))
        self._prompt = make_prompt(options.yes)
        self.clients: dict[str, Client] = {}
        self._running: set[AbortSignal] = set()
        self._idle = asyncio.Event()
        self.opening: asyncio.Future[Any] | None = None
        """The project's MCP servers connecting (set by the transport): a list waits for them."""
        self.server = _Server(
            "opencode",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self.server.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self._initialized
        )

    # -- clients -------------------------------------------------------------------------------------

    def _key(self, ctx: Any) -> str | None:
        """The client a request comes from: its MCP session id over HTTP (``None`` for a request that
        carries none, a single-exchange client of the newest protocol revision), the one stdio client."""
        headers = getattr(ctx.request, "headers", None)
        if headers is None:
            return STDIO_CLIENT
        return headers.get("mcp-session-id") or None

    def _client(self, ctx: Any) -> Client:
        """The client of a request; a request without an MCP session is a client of its own (its session
        is closed when the request ends: no state passes from one such request to another)."""
        key = self._key(ctx)
        if key is None:
            return Client("", self._new_session("single request", False), ctx.session, once=True)
        client = self.clients.get(key)
        if client is None:
            client = self.clients[key] = Client(
                key, self._new_session(key, declares_elicitation(ctx.session))
            )
        client.outbound, client.seen = ctx.session, time.monotonic()
        return client

    def _new_session(self, key: str, elicits: bool) -> Session:
        """A client's session; ``question`` is offered to it only if its user can be asked (elicitation).
        An "always" answer allows what it covers in that client's session only."""
        options: dict[str, Any] = {
            "model": self.model,
            "prompt": self._prompt,
            "on_metadata": forward_metadata,
            "rules": list(self.options.rules),
            "title": f"opencode mcp serve ({key})",
            "extra": {QUESTION_ASKER: ask_questions} if elicits else {},
            "own_approvals": True,
            "window": SESSION_WINDOW,  # each call is a step: the latest steps are all a call needs
        }
        if self.options.session_id and key == STDIO_CLIENT:
            options.update(id=self.options.session_id, remember=True)
        return self.project.session(self.agent, **options)

    def forget(self, key: str) -> None:
        """A client went away (an HTTP session was deleted): close its session."""
        client = self.clients.pop(key, None)
        if client is not None:
            client.session.close()

    def forget_idle(self, older_than: float) -> None:
        """Close the sessions of clients not heard from for ``older_than`` seconds."""
        now = time.monotonic()
        for key, client in list(self.clients.items()):
            if now - client.seen > older_than:
                self.forget(key)

    async def abort_calls(self, reason: str = "terminated", bound: float = ABORT_BOUND) -> None:
        """Abort every call in flight (the server is stopping) and wait, at most ``bound`` seconds, for
        them to end: each is answered with the interrupted text, the processes its tool started stopped."""
        import asyncio

        for abort in list(self._running):
            abort.abort(reason)
        if self._running:
            self._idle.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), bound)

    def close(self) -> None:
        """Close every client's session."""
        for key in list(self.clients):
            self.forget(key)

    # -- handlers ------------------------------------------------------------------------------------

    async def _initialized(self, ctx: Any, params: Any) -> None:
        client = self._client(ctx)
        name = getattr(getattr(ctx.session.client_params, "client_info", None), "name", None)
        self._log(f"client connected: {name or 'unnamed'} (session {client.session.id})")

    async def tools(self, session: Session) -> list[types.Tool]:
        """What a client is offered: the session's wire tools, sorted by name."""
        with self.project.hold():
            self._follow_agent(session)
            return [tool_for(wire) for wire in await session.aresolve()]

    def _follow_agent(self, session: Session) -> None:
        """After a reload, the session's agent is the new generation's (its permissions come from the
        config); an agent the new config no longer has keeps its last form."""
        from ...errors import ConfigError

        with contextlib.suppress(ConfigError):
            session.use_agent(self.agent)

    async def whole(self) -> None:
        """Wait until what is offered is whole: the servers still connecting have connected or failed
        (each within its start timeout), and the project's builder installed what they brought."""
        opening = self.opening
        if opening is not None and not opening.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(opening)
        builder = self.project.builder
        if not builder.idle:
            await asyncio.to_thread(builder.wait)

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        client = self._client(ctx)
        await self.whole()
        try:
            return types.ListToolsResult(tools=await self.tools(client.session))
        finally:
            if client.once:
                client.session.close()

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        client = self._client(ctx)
        await self.whole()
        call = Call(ctx.session, ctx.request_id)
        token = CURRENT.set(call)
        abort = AbortSignal()
        self._running.add(abort)
        try:
            with self.project.hold():
                self._follow_agent(client.session)
                await client.session.aresolve()  # the offer of the generation this call runs in
                client.session.step()  # each tools/call is a model step of its own (the doom-loop window)
                # a client's cancellation cancels this task: the tool stops (bash kills its process group)
                part = await client.session.dispatch(
                    ToolCall(params.name, dict(params.arguments or {})), abort=abort
                )
            await call.finish()
        finally:
            self._running.discard(abort)
            if not self._running:
                self._idle.set()
            call.close()
            CURRENT.reset(token)
            if client.once:
                client.session.close()
        return result_for(part, hint(call.unanswered) if part.status == "error" else "")

    # -- hot reload ----------------------------------------------------------------------------------

    async def follow(self, watcher: Any) -> None:
        """Tell every client when a reload changes what is served (until the watcher stops)."""
        async for report in watcher:
            for error in report.errors:
                self._log(f"reload: {error}")
            if not report.ok or (report.unchanged and not report.config):
                continue
            names = [f"+{t.id}" for t in report.added] + [f"-{t.id}" for t in report.removed]
            names += [f"~{c.after.id}" for c in report.changed]
            self._log(f"tools changed ({' '.join(names) or 'config'}): telling {len(self.clients)} client(s)")
            await self.broadcast()

    async def broadcast(self) -> None:
        """Send ``notifications/tools/list_changed`` to every client (one gone away is skipped)."""
        for client in list(self.clients.values()):
            if client.outbound is None:
                continue
            with contextlib.suppress(Exception):
                await client.outbound.send_tool_list_changed()
