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

Without ``--directory`` a client that has MCP roots is served its first ``file://`` root (asked for at
its first request, again after ``notifications/roots/list_changed``; :mod:`.roots` owns those projects).
Each call runs in a task of its own: a cancelled request is the call's abort, and on the newest revision
an ask answers the request with an input-required result while the call waits for the client's next
``tools/call`` (:meth:`ServeHost._answer`). What happens to a call goes to the client as log messages
(``logging/setLevel``); a configured MCP server's own result and progress are passed on unchanged.
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
from ...session import QUESTION_ASKER, Outcome, ToolCall, ToolPart
from ..source import ELICITOR, PROGRESS_SINK, RESULT_SINK
from .asking import declares_elicitation, hint, make_prompt
from .calls import (
    CURRENT,
    DEFAULT_LOG_LEVEL,
    Ask,
    Call,
    current_elicitor,
    forward_metadata,
    forward_progress,
    keep_result,
)
from .content import passed_on, passes_on, result_for, tool_for
from .questions import ask_questions
from .roots import ROOTS_TIMEOUT, RootProjects, declares_roots, first_directory

if TYPE_CHECKING:
    from ...permission import Rule
    from ...project import Project
    from ...session import Session

#: Seconds the calls in flight get to end after their abort when the server stops.
ABORT_BOUND = 5.0
#: Seconds a cancelled call gets to end after its abort before its task is cancelled.
CANCEL_BOUND = 5.0
#: Seconds a call waits for a client of the newest revision to answer its ask (then it is aborted).
ASK_TIMEOUT = 600.0
#: The key of a call's ask among an input-required result's requests.
ASK_KEY = "ask"

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
    follow_roots: bool = True
    """Serve each client's first ``file://`` root (no ``--directory`` was given)."""


@dataclass
class Client:
    """One connected client: its session and the SDK's channel back to it."""

    key: str
    session: Session
    outbound: Any = None
    once: bool = False
    """A client of one request (no MCP session): its session ends with the request."""
    seen: float = field(default_factory=time.monotonic)
    log_level: str = DEFAULT_LOG_LEVEL
    """The least severe log message the client is sent (``logging/setLevel``)."""
    elicits: bool = False
    roots_stale: bool = True
    """The client's roots are to be asked for (at its next request) before it is served."""
    roots_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def project(self) -> Project:
        """The project the client's session serves."""
        return self.session.project


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
        self._log = log or (lambda text: print(f"opencode mcp serve: {text}", file=sys.stderr, flush=True))
        self._prompt = make_prompt(options.yes)
        self.clients: dict[str, Client] = {}
        self._running: set[AbortSignal] = set()
        self._idle = asyncio.Event()
        self._releasing: set[asyncio.Future[None]] = set()
        self._suspended: dict[str, _Suspended] = {}
        """Calls waiting for a client of the newest revision to answer their ask, by request state."""
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
            "notifications/roots/list_changed", types.NotificationParams, self._roots_changed
        )
        self.roots = RootProjects(project, self._prepare, self.follow, self._log)
        # registered by hand: the constructor's argument for it warns that the newest revision drops it
        self.server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self._set_level)

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
            elicits = declares_elicitation(ctx.session)
            return Client(
                "", self._new_session("single request", elicits), ctx.session, once=True, elicits=elicits
            )
        client = self.clients.get(key)
        if client is None:
            elicits = declares_elicitation(ctx.session)
            client = self.clients[key] = Client(key, self._new_session(key, elicits), elicits=elicits)
        client.outbound, client.seen = ctx.session, time.monotonic()
        return client

    async def _served(self, ctx: Any) -> Client:
        """:meth:`_client`, serving the client's root first if it has roots not yet asked for."""
        client = self._client(ctx)
        if client.roots_stale and not client.once:
            await self._follow_roots(client, ctx)
        return client

    async def _follow_roots(self, client: Client, ctx: Any) -> None:
        """Ask the client for its roots (within the request ``ctx``, so the ask rides that request's
        stream) and serve its first ``file://`` directory; without one, the server's own directory."""
        async with client.roots_lock:
            if not client.roots_stale:
                return
            client.roots_stale = False
            if not self.options.follow_roots or not declares_roots(ctx.session):
                return
            if not getattr(ctx.session, "can_send_request", True):  # the newest revision has no roots
                return
            from mcp.shared.message import ServerMessageMetadata

            try:
                listed = await asyncio.wait_for(
                    ctx.session.send_request(
                        types.ListRootsRequest(),
                        types.ListRootsResult,
                        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
                    ),
                    ROOTS_TIMEOUT,
                )
            except Exception as error:
                self._log(
                    f"roots/list failed ({error or type(error).__name__}): serving {client.project.directory}"
                )
                return
            directory = first_directory(listed.roots) or self.project.directory
            if directory == client.project.directory:
                return
            try:
                project = await self.roots.acquire(directory)
            except Exception as error:
                self._log(f"cannot serve the client's root {directory}: {error}")
                return
            before, client.session = client.session, self._new_session(client.key, client.elicits, project)
            before.close()
            await self.roots.release(before.project)
            self._log(f"client {client.key}: serving its root {directory} (session {client.session.id})")

    async def _roots_changed(self, ctx: Any, params: Any) -> None:
        """``notifications/roots/list_changed``: the roots are asked for again at the client's next
        request, which the client is told to make (``tools/list_changed``: the tools may differ there)."""
        client = self._client(ctx)
        if not self.options.follow_roots:
            return
        client.roots_stale = True
        with contextlib.suppress(Exception):
            await ctx.session.send_tool_list_changed()

    def _prepare(self, project: Project) -> dict[str, Any]:
        """Check that ``project`` can be served with the server's agent and model (an error if not);
        what its watcher is given."""
        model = project.generation.model(self.options.model)
        agent = project.generation.agent(self.options.agent).name
        project.tools(model, agent)
        return {"model": model, "agent": agent}

    def _new_session(self, key: str, elicits: bool, project: Project | None = None) -> Session:
        """A client's session; ``question`` is offered to it only if its user can be asked (elicitation).
        An "always" answer allows what it covers in that client's session only."""
        options: dict[str, Any] = {
            "model": self.model,
            "prompt": self._prompt,
            "on_metadata": forward_metadata,
            "rules": list(self.options.rules),
            "title": f"opencode mcp serve ({key})",
            "extra": {
                PROGRESS_SINK: forward_progress,  # an MCP tool's progress, to the client's token
                RESULT_SINK: keep_result,  # an MCP tool's result, passed on as its server said it
                ELICITOR: current_elicitor,  # a configured server's elicitation, put to this client
                **({QUESTION_ASKER: ask_questions} if elicits else {}),
            },
            "own_approvals": True,
            "lists_invalid": False,  # tools/list never offers it
            "window": SESSION_WINDOW,  # each call is a step: the latest steps are all a call needs
        }
        if self.options.session_id and key == STDIO_CLIENT:
            options.update(id=self.options.session_id, remember=True)
        project = project or self.project
        agent = self.agent
        if project is not self.project:  # a client's root: its own config names the model and agent
            options["model"] = project.generation.model(self.options.model)
            agent = project.generation.agent(self.options.agent).name
        return project.session(agent, **options)

    def forget(self, key: str) -> None:
        """A client went away (an HTTP session was deleted): close its session."""
        client = self.clients.pop(key, None)
        if client is not None:
            client.session.close()
            if client.project is not self.project:  # a root's project: closed when its last client goes
                with contextlib.suppress(RuntimeError):
                    releasing = asyncio.ensure_future(self.roots.release(client.project))
                    self._releasing.add(releasing)
                    releasing.add_done_callback(self._releasing.discard)

    def forget_idle(self, older_than: float) -> None:
        """Close the sessions of clients not heard from for ``older_than`` seconds."""
        now = time.monotonic()
        for key, client in list(self.clients.items()):
            if now - client.seen > older_than:
                self.forget(key)

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
        for key in list(self.clients):
            self.forget(key)
        if self._reference is not None:
            self._reference.close()

    # -- handlers ------------------------------------------------------------------------------------

    async def _initialized(self, ctx: Any, params: Any) -> None:
        client = self._client(ctx)
        name = getattr(getattr(ctx.session.client_params, "client_info", None), "name", None)
        self._log(f"client connected: {name or 'unnamed'} (session {client.session.id})")

    async def _set_level(self, ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        """``logging/setLevel``: the client's log messages from now on are at ``params.level`` or above."""
        self._client(ctx).log_level = params.level
        return types.EmptyResult()

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        """A tool's listed input schema, for the SDK's check of a newest-revision call's ``Mcp-Param-*``
        headers (without it the SDK runs ``tools/list`` before every such call): the schema the server's
        own project offers (``None``: a tool not offered there, whose headers go unchecked)."""
        with self.project.generations.hold() as generation:
            known = self._schemas
            if known is None or known[0] is not generation:
                if self._reference is None:
                    self._reference = self._new_session("input schemas", False)
                self._follow_agent(self._reference)
                schemas = {wire.name: wire.parameters for wire in self._reference.resolve()}
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
        from ...errors import ConfigError

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
        client = await self._served(ctx)
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
            return await self._resume(ctx, params)
        client = await self._served(ctx)
        rounds = asks_in_rounds(ctx.protocol_version)
        call = Call(ctx.session, ctx.request_id, log_level=client.log_level, rounds=rounds)
        return await self._answer(call, asyncio.ensure_future(self._run(client, call, params)))

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

    async def _answer(
        self, call: Call, running: asyncio.Future[types.CallToolResult]
    ) -> types.CallToolResult | types.InputRequiredResult:
        """What the request gets: the call's result, or (newest revision) its next ask as an
        input-required result. A cancellation of the request (the client's ``notifications/cancelled``,
        the connection closing) is the call's abort: the tool sees ``ctx.abort``, stops between two steps
        (bash stops its process group), and the cancellation goes on once it has ended (within
        :data:`CANCEL_BOUND` seconds)."""
        import anyio

        asked = call.next_ask() if call.rounds else None
        try:
            await asyncio.wait(
                {running} if asked is None else {running, asked}, return_when="FIRST_COMPLETED"
            )
        except asyncio.CancelledError:
            if asked is not None:
                asked.cancel()
            call.abort.abort("cancelled")
            with anyio.CancelScope(shield=True), contextlib.suppress(BaseException):
                await asyncio.wait({running}, timeout=CANCEL_BOUND)
            if not running.done():
                running.cancel()
            raise
        if running.done():
            if asked is not None:
                asked.cancel()
            return running.result()
        assert asked is not None
        return self._suspend(call, running, asked.result())

    def _suspend(
        self, call: Call, running: asyncio.Future[types.CallToolResult], ask: Ask
    ) -> types.InputRequiredResult:
        """Answer the request with the call's ask; the call waits (at most :data:`ASK_TIMEOUT` seconds)
        for the client's next ``tools/call``, which carries the answer and the state named here."""
        import secrets

        state = secrets.token_urlsafe(24)
        expiry = asyncio.get_running_loop().call_later(ASK_TIMEOUT, self._expire, state)
        self._suspended[state] = _Suspended(call, running, ask, expiry)
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=ask.message, requested_schema=ask.requested_schema)
        )
        return types.InputRequiredResult(input_requests={ASK_KEY: request}, request_state=state)

    def _expire(self, state: str) -> None:
        """Nobody answered a call's ask in time: the ask is unanswered, and the call aborted."""
        suspended = self._suspended.pop(state, None)
        if suspended is not None:
            suspended.call.abort.abort("unanswered")
            if not suspended.ask.answer.done():
                suspended.ask.answer.set_result(None)

    async def _resume(
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
        return await self._answer(call, suspended.running)

    async def _dispatch(
        self, client: Client, params: types.CallToolRequestParams, abort: AbortSignal
    ) -> ToolPart:
        await self.whole(client.project)
        with client.project.generations.hold():
            self._follow_agent(client.session)
            await client.session.aresolve()  # the offer of the generation this call runs in
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
                self._log(f"reload: {error}")
            if not report.ok or (report.unchanged and not report.config):
                continue
            names = [f"+{t.id}" for t in report.added] + [f"-{t.id}" for t in report.removed]
            names += [f"~{c.after.id}" for c in report.changed]
            served = project or self.project
            clients = [client for client in self.clients.values() if client.project is served]
            self._log(f"tools changed ({' '.join(names) or 'config'}): telling {len(clients)} client(s)")
            await self.broadcast(served)

    async def broadcast(self, project: Project | None = None) -> None:
        """Send ``notifications/tools/list_changed`` to every client (of ``project``, if given; one gone
        away is skipped)."""
        for client in list(self.clients.values()):
            if client.outbound is None or (project is not None and client.project is not project):
                continue
            with contextlib.suppress(Exception):
                await client.outbound.send_tool_list_changed()


#: The log level and event name of a call's outcome (one a client is told of without asking for more).
OUTCOME_LOG = {
    Outcome.REJECTED: ("warning", "denial"),
    Outcome.DENIED: ("warning", "denial"),
    Outcome.FAILED: ("error", "error"),
    Outcome.INVALID_ARGUMENTS: ("warning", "error"),
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


def asks_in_rounds(protocol_version: str | None) -> bool:
    """Whether a client of ``protocol_version`` is asked through input-required results (the newest
    revision, 2026-07-28, sends no request to a client in the middle of a call)."""
    from mcp_types.version import is_version_at_least

    return protocol_version is not None and is_version_at_least(protocol_version, INPUT_REQUIRED_VERSION)


#: The first protocol revision whose asks are input-required results.
INPUT_REQUIRED_VERSION = "2026-07-28"


@dataclass
class _Suspended:
    """A call waiting for its ask to be answered by the client's next ``tools/call``."""

    call: Call
    running: asyncio.Future[types.CallToolResult]
    ask: Ask
    expiry: asyncio.TimerHandle
