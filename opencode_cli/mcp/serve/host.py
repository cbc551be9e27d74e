"""The MCP server host: the tools an agent and model are offered, served to every client that connects.

Each client has a :class:`~opencode_cli.session.Session` of its own (:mod:`.clients`: who a request comes
from, the session it is served, a client's MCP roots followed). ``tools/list`` is that session's
``resolve()`` (the per-model filter, tools denied wholly left out, ``invalid`` never listed),
``tools/call`` its ``dispatch()`` as a model step of its own, inside a hold of the project's
generation, so a reload waits for the calls in flight. Both wait first for the configured MCP servers
still connecting (each within its start timeout), so that the first list is whole. After each reload that
changes anything, every client is sent ``notifications/tools/list_changed``.

Each call runs in a task of its own: a cancelled request is the call's abort, and on the newest revision
an ask answers the request with an input-required result while the call waits for the client's next
``tools/call`` (:mod:`.rounds`). What happens to a call goes to the client as log messages
(``logging/setLevel``); a configured MCP server's own result and progress are passed on unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server

from ... import __version__
from ...context import AbortSignal
from ...errors import ConfigError
from ...session import Outcome, ToolCall, ToolPart
from ...telemetry import tracing
from .asking import hint
from .calls import CURRENT, Call
from .clients import Client, Clients
from .content import passed_on, passes_on, result_for, tool_for
from .roots import RootProjects
from .rounds import Rounds, asks_in_rounds

if TYPE_CHECKING:
    from ...permission import Rule
    from ...project import Project
    from ...session import Session

#: Seconds the calls in flight get to end after their abort when the server stops.
ABORT_BOUND = 5.0

INSTRUCTIONS = (
    "OpenCode's tools, with OpenCode's permission rules, project boundary, output truncation and plugin "
    "hooks. Paths are relative to the project the server was started in."
)


#: The input schema the SDK's ``Mcp-Param-*`` check is given for a tool whose schema declares no header.
NO_HEADERS: dict[str, Any] = {}


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
    follow_roots: bool = True
    """Serve each client's first ``file://`` root (no ``--directory`` was given)."""
    roots_within: list[Path] = field(default_factory=list)
    """Directories besides the served one inside which an HTTP client's roots are taken
    (``--roots-within``)."""


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
        self.model = project.generation.model(options.model)
        self.agent = project.generation.agent(options.agent).name  # an unknown agent is an error now
        self.log = log or (lambda text: print(f"opencode mcp serve: {text}", file=sys.stderr, flush=True))
        """Where the server's own log lines go (stderr)."""
        self.clients = Clients(self)
        """The clients and their sessions (:mod:`.clients`)."""
        self.rounds = Rounds()
        """The calls waiting for a client of the newest revision to answer their asks (:mod:`.rounds`)."""
        self._running: set[AbortSignal] = set()
        self._idle = asyncio.Event()
        self.stopped: str | None = None
        """Why the server stopped, if a signal stopped it (``interrupted`` or ``terminated``)."""
        self.opening: asyncio.Future[Any] | None = None
        """The server's own project's MCP servers connecting (set by the transport): a list waits for them."""
        self.server = _Server(
            "opencode",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            get_tool_input_schema=self._input_schema,
        )
        self._reference: Session | None = None
        self._schemas: tuple[Any, dict[str, dict[str, Any]]] | None = None
        self.server.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self._initialized
        )
        self.server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, self.clients.roots_changed
        )
        self.roots = RootProjects(project, self._prepare, self.follow, self.log)
        instruments = tracing(project.plugins)
        if instruments is not None:
            instruments.serving(self)  # its clients counted
        # registered by hand: the constructor's argument for it warns that the newest revision drops it
        self.server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self._set_level)

    # -- clients: see .clients -------------------------------------------------------------------------

    def _prepare(self, project: Project) -> dict[str, Any]:
        """Check that ``project`` can be served with the server's agent and model (an error if not);
        what its watcher is given."""
        model = project.generation.model(self.options.model)
        agent = project.generation.agent(self.options.agent).name
        project.tools(model, agent)
        return {"model": model, "agent": agent}

    def forget(self, key: str) -> None:
        """A client went away (an HTTP session was deleted): close its session."""
        self.clients.forget(key)

    def forget_idle(self, older_than: float) -> None:
        """Close the sessions of clients not heard from for ``older_than`` seconds."""
        self.clients.forget_idle(older_than)

    # -- stopping ------------------------------------------------------------------------------------

    async def abort_calls(self, reason: str = "terminated", bound: float = ABORT_BOUND) -> None:
        """Abort every call in flight (the server is stopping) and wait, at most ``bound`` seconds, for
        them to end: each is answered with the interrupted text, the processes its tool started stopped."""
        for abort in list(self._running):
            abort.abort(reason)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(bound):
                while self._running:
                    self._idle.clear()
                    await self._idle.wait()

    def close(self) -> None:
        """Close every client's session."""
        self.clients.close()
        if self._reference is not None:
            self._reference.close()

    # -- handlers ------------------------------------------------------------------------------------

    async def _initialized(self, ctx: Any, params: Any) -> None:
        client = self.clients.client(ctx)
        name = getattr(getattr(ctx.session.client_params, "client_info", None), "name", None)
        self.log(f"client connected: {name or 'unnamed'} (session {client.session.id})")

    async def _set_level(self, ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        """``logging/setLevel``: the client's log messages from now on are at ``params.level`` or above."""
        self.clients.client(ctx).log_level = params.level
        return types.EmptyResult()

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        """A tool's listed input schema, for the SDK's check of a newest-revision call's ``Mcp-Param-*``
        headers (without it the SDK runs ``tools/list`` before every such call): the schema the server's
        own project offers (``None``: a tool not offered there, whose headers go unchecked). A schema
        that declares no header (no ``x-mcp-header``, as ours never do) is given as an empty one, which
        declares none either: the SDK has nothing to walk on each call."""
        with self.project.generations.hold() as generation:
            known = self._schemas
            if known is None or known[0] is not generation:
                from mcp.shared.inbound import x_mcp_header_map

                if self._reference is None:
                    self._reference = self.clients.new_session("input schemas", False)
                self._follow_agent(self._reference)
                schemas = {
                    wire.name: wire.parameters if x_mcp_header_map(wire.parameters) else NO_HEADERS
                    for wire in self._reference.resolve()
                }
                known = self._schemas = (generation, schemas)
        return known[1].get(name)

    async def tools(self, session: Session) -> list[types.Tool]:
        """What a client is offered: the session's wire tools, sorted by name."""
        with session.project.generations.hold() as generation:
            self._follow_agent(session)
            return [tool_for(wire, _upstream(generation, wire.name)) for wire in await session.aresolve()]

    def _follow_agent(self, session: Session) -> None:
        """After a reload, the session's agent is the new generation's (its permissions come from the
        config); an agent the new config no longer has keeps its last form."""
        with contextlib.suppress(ConfigError):
            session.use_agent(session.agent.name)

    async def whole(self, project: Project) -> None:
        """Wait until what ``project`` offers is whole: the servers still connecting have connected or
        failed (each within its start timeout), and the project's builder installed what they brought."""
        opening = self.opening if project is self.project else self.roots.opening(project)
        if opening is not None and not opening.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(opening)
        builder = project.builder
        if not builder.idle:
            await asyncio.to_thread(builder.wait)

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        client = await self.clients.served(ctx)
        await self.whole(client.project)
        try:
            return types.ListToolsResult(tools=await self.tools(client.session))
        finally:
            if client.once:
                client.session.close()

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.request_state is not None:  # the newest revision: the answer to a call's ask
            return await self.rounds.resume(ctx, params)
        client = await self.clients.served(ctx)
        rounds = asks_in_rounds(ctx.protocol_version)
        call = Call(ctx.session, ctx.request_id, log_level=client.log_level, rounds=rounds)
        running: Any = self._run(client, call, params)
        instruments = tracing(client.project.plugins)
        if instruments is not None:  # counted in flight (the SDK's middleware makes its span)
            running = instruments.served_call(running, "tools/call")
        return await self.rounds.answer(call, asyncio.ensure_future(running))

    async def _run(
        self, client: Client, call: Call, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """A call from its start to its result, in a task of its own (on the newest revision it outlives
        the requests that carry its asks)."""
        CURRENT.set(call)  # this task's own context
        self._running.add(call.abort)
        try:
            await call.log("debug", f"{params.name}: started", event="start", tool=params.name)
            part = await self._dispatch(client, params, call.abort)
            await call.finish()
            await _log_outcome(call, part)
        finally:
            self._running.discard(call.abort)
            if not self._running:
                self._idle.set()
            call.close()
            if client.once:
                client.session.close()
        if call.upstream is not None and passes_on(part, call.upstream):
            return passed_on(call.upstream)
        return result_for(part, hint(call.unanswered) if part.status == "error" else "")

    async def _dispatch(
        self, client: Client, params: types.CallToolRequestParams, abort: AbortSignal
    ) -> ToolPart:
        await self.whole(client.project)
        with client.project.generations.hold():
            self._follow_agent(client.session)  # the call is repaired against its generation's offer
            client.session.step()  # each tools/call is a model step of its own (the doom-loop window)
            return await client.session.dispatch(
                ToolCall(params.name, dict(params.arguments or {})), abort=abort
            )

    # -- hot reload ----------------------------------------------------------------------------------

    async def follow(self, watcher: Any, project: Project | None = None) -> None:
        """Tell the clients of ``project`` (the server's own by default) when a reload changes what is
        served (until the watcher stops)."""
        async for report in watcher:
            for error in report.errors:
                self.log(f"reload: {error}")
            if not report.ok or (report.unchanged and not report.config):
                continue
            names = [f"+{t.id}" for t in report.added] + [f"-{t.id}" for t in report.removed]
            names += [f"~{c.after.id}" for c in report.changed]
            served = project or self.project
            clients = self.clients.of(served)
            self.log(f"tools changed ({' '.join(names) or 'config'}): telling {len(clients)} client(s)")
            await self.broadcast(served)

    async def broadcast(self, project: Project | None = None) -> None:
        """Send ``notifications/tools/list_changed`` to every client (of ``project``, if given; one gone
        away is skipped)."""
        for client in self.clients.of(project):
            if client.outbound is None:
                continue
            with contextlib.suppress(Exception):
                await client.outbound.send_tool_list_changed()


#: The log level and event name of a call's outcome (one a client is told of without asking for more).
#: MCP's levels are RFC 5424's: a call that failed, its arguments refused included (OpenCode marks such a
#: part ``error`` too), is an error condition; a denial or an interrupt is a warning (the call did not run).
OUTCOME_LOG = {
    Outcome.REJECTED: ("warning", "denial"),
    Outcome.DENIED: ("warning", "denial"),
    Outcome.FAILED: ("error", "error"),
    Outcome.INVALID_ARGUMENTS: ("error", "error"),
    Outcome.ABORTED: ("warning", "interrupt"),
}


async def _log_outcome(call: Call, part: ToolPart) -> None:
    """Tell the client how a call ended when it did not complete (a denial, an error, an interrupt)."""
    found = OUTCOME_LOG.get(part.outcome)
    if found is None:
        return
    level, event = found
    first = (part.text or "").strip().splitlines()
    reason = first[0] if first else str(part.outcome)
    await call.log(level, f"{part.tool}: {reason}", event=event, tool=part.tool, outcome=str(part.outcome))


def _upstream(generation: Any, tool_id: str) -> Any:
    """The MCP server's own definition of a proxied tool (``None`` for any other tool)."""
    try:
        entry = generation.registry.get(tool_id)
        if entry.source.kind != "mcp":
            return None
        return getattr(entry.tool, "definition", None)  # an MCP tool is built as listed: nothing to load
    except Exception:
        return None
