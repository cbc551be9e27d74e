"""The clients of ``opencode mcp serve``: who a request comes from, and the session each client is served.

Over stdio there is one client; over HTTP each MCP session id is one, and a request without one (a client
of the newest protocol revision) is a client of its own whose session ends with the request.
:class:`Clients` (``host.clients``) keeps them by key, makes each its :class:`~opencode_cli.session.Session`
(``question`` offered only to a client that can be asked, an "always" answer kept to that session), and,
without ``--directory``, serves a client with MCP roots its first ``file://`` root (asked for at its first
request, again after ``notifications/roots/list_changed``; over HTTP only inside the served directory or a
``--roots-within`` one; :mod:`.roots` chooses and owns those projects).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types

from ...errors import message_of
from ...session import QUESTION_ASKER
from ..relay import Relay
from .asking import declares_elicitation, make_prompt
from .calls import (
    DEFAULT_LOG_LEVEL,
    LOGGER,
    at_least,
    current_elicitor,
    forward_metadata,
    forward_progress,
    keep_result,
)
from .questions import ask_questions
from .roots import ROOTS_TIMEOUT, ListedRoots, choose, declares_roots

if TYPE_CHECKING:
    from ...project import Project
    from ...session import Session
    from .host import ServeHost

#: Messages (steps, one per call) a client's session holds in memory; a remembered one keeps all in the
#: store.
SESSION_WINDOW = 64

#: The key of the one client of a stdio server.
STDIO_CLIENT = "stdio"


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


class Clients:
    """The clients of ``host``, by key (a stdio server's one client, or HTTP's MCP session ids)."""

    def __init__(self, host: ServeHost) -> None:
        self.host = host
        self.by_key: dict[str, Client] = {}
        self._prompt = make_prompt(host.options.yes)
        self._releasing: set[asyncio.Future[None]] = set()

    def of(self, project: Project | None = None) -> list[Client]:
        """The clients (of ``project``, if given)."""
        return [client for client in self.by_key.values() if project is None or client.project is project]

    def _key(self, ctx: Any) -> str | None:
        """The client a request comes from: its MCP session id over HTTP (``None`` for a request that
        carries none, a single-exchange client of the newest protocol revision), the one stdio client."""
        headers = getattr(ctx.request, "headers", None)
        if headers is None:
            return STDIO_CLIENT
        return headers.get("mcp-session-id") or None

    def client(self, ctx: Any) -> Client:
        """The client of a request; a request without an MCP session is a client of its own (its session
        is closed when the request ends: no state passes from one such request to another)."""
        key = self._key(ctx)
        if key is None:
            elicits = declares_elicitation(ctx.session)
            return Client(
                "", self.new_session("single request", elicits), ctx.session, once=True, elicits=elicits
            )
        client = self.by_key.get(key)
        if client is None:
            elicits = declares_elicitation(ctx.session)
            client = self.by_key[key] = Client(key, self.new_session(key, elicits), elicits=elicits)
        client.outbound, client.seen = ctx.session, time.monotonic()
        return client

    async def served(self, ctx: Any) -> Client:
        """:meth:`client`, serving the client's root first if it has roots not yet asked for."""
        client = self.client(ctx)
        if client.roots_stale and not client.once:
            await self._follow_roots(client, ctx)
        return client

    async def _follow_roots(self, client: Client, ctx: Any) -> None:
        """Ask the client for its roots (within the request ``ctx``, so the ask rides that request's
        stream) and serve its first ``file://`` directory; without one, the server's own directory."""
        host = self.host
        async with client.roots_lock:
            if not client.roots_stale:
                return
            client.roots_stale = False
            if not host.options.follow_roots or not declares_roots(ctx.session):
                return
            if not getattr(ctx.session, "can_send_request", True):  # the newest revision has no roots
                return
            from mcp.shared.message import ServerMessageMetadata

            try:
                listed = await asyncio.wait_for(
                    ctx.session.send_request(
                        types.ListRootsRequest(),
                        ListedRoots,
                        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
                    ),
                    ROOTS_TIMEOUT,
                )
            except Exception as error:
                host.log(f"roots/list failed ({message_of(error)}): serving {client.project.directory}")
                return
            within = self.roots_within(client)
            choice = choose(listed.roots, within)
            for refused in choice.refused:
                await self._refuse_root(client, ctx, refused, within or [])
            directory = choice.directory or host.project.directory
            if directory == client.project.directory:
                return
            try:
                project = await host.roots.acquire(directory)
            except Exception as error:
                host.log(f"cannot serve the client's root {directory}: {error}")
                return
            before, client.session = client.session, self.new_session(client.key, client.elicits, project)
            before.close()
            await host.roots.release(before.project)
            host.log(f"client {client.key}: serving its root {directory} (session {client.session.id})")

    def roots_within(self, client: Client) -> list[Path] | None:
        """The directories a client's roots must lie in: over HTTP the served one and ``--roots-within``
        (anyone holding the token is a client); ``None`` for the stdio client, the user's own application."""
        if client.key == STDIO_CLIENT:
            return None
        return [self.host.project.directory, *self.host.options.roots_within]

    async def _refuse_root(self, client: Client, ctx: Any, root: Path, within: list[Path]) -> None:
        """Say on stderr, and to the client at ``warning``, that its root ``root`` is not served."""
        places = ", ".join(str(place) for place in within)
        message = f"root {root} refused: a client's root is served only inside {places} (see --roots-within)"
        self.host.log(f"client {client.key}: {message}")
        if not at_least("warning", client.log_level):
            return
        with contextlib.suppress(Exception):
            await ctx.session.send_log_message(
                "warning",
                {"message": message, "event": "root", "root": root.as_uri()},
                logger=LOGGER,
                related_request_id=ctx.request_id,
            )

    async def roots_changed(self, ctx: Any, params: Any) -> None:
        """``notifications/roots/list_changed``: the roots are asked for again at the client's next
        request, which the client is told to make (``tools/list_changed``: the tools may differ there)."""
        client = self.client(ctx)
        if not self.host.options.follow_roots:
            return
        client.roots_stale = True
        with contextlib.suppress(Exception):
            await ctx.session.send_tool_list_changed()

    def new_session(self, key: str, elicits: bool, project: Project | None = None) -> Session:
        """A client's session; ``question`` is offered to it only if its user can be asked (elicitation).
        An "always" answer allows what it covers in that client's session only."""
        host = self.host
        options: dict[str, Any] = {
            "model": host.model,
            "prompt": self._prompt,
            "on_metadata": forward_metadata,
            "rules": list(host.options.rules),
            "title": f"opencode mcp serve ({key})",
            "relay": Relay(
                progress=forward_progress,  # an MCP tool's progress, to the client's token
                result=keep_result,  # an MCP tool's result, passed on as its server said it
                elicitor=current_elicitor,  # a configured server's elicitation, put to this client
            ),
            "extra": {QUESTION_ASKER: ask_questions} if elicits else {},
            "own_approvals": True,
            "lists_invalid": False,  # tools/list never offers it
            "window": SESSION_WINDOW,  # each call is a step: the latest steps are all a call needs
        }
        if host.options.session_id and key == STDIO_CLIENT:
            options.update(id=host.options.session_id, remember=True)
        project = project or host.project
        agent = host.agent
        if project is not host.project:  # a client's root: its own config names the model and agent
            options["model"] = project.generation.model(host.options.model)
            agent = project.generation.agent(host.options.agent).name
        return project.session(agent, **options)

    def forget(self, key: str) -> None:
        """A client went away (an HTTP session was deleted): close its session."""
        client = self.by_key.pop(key, None)
        if client is not None:
            client.session.close()
            if client.project is not self.host.project:  # a root's project: closed when its last client goes
                with contextlib.suppress(RuntimeError):
                    releasing = asyncio.ensure_future(self.host.roots.release(client.project))
                    self._releasing.add(releasing)
                    releasing.add_done_callback(self._releasing.discard)

    def forget_idle(self, older_than: float) -> None:
        """Close the sessions of clients not heard from for ``older_than`` seconds."""
        now = time.monotonic()
        for key, client in list(self.by_key.items()):
            if now - client.seen > older_than:
                self.forget(key)

    def close(self) -> None:
        """Close every client's session."""
        for key in list(self.by_key):
            self.forget(key)
