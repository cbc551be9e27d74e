"""How an MCP connection is opened: its transport, its OAuth, the SDK's session, its tools, and why a start
failed.

:func:`connect` runs in the connection's own task (:class:`~.connection.McpConnection` enters and leaves
everything there): stdio for a local server (:mod:`.stdio`: a process group of its own, its pid, exit code
and last stderr lines); for a remote one streamable HTTP, and SSE when that fails (an older server), with
the auth of :mod:`.oauth`. The SDK's ``ClientSession`` is initialized with the connection's handlers of
what the server sends (its tool list changed, elicitation, sampling). :func:`start_failure` words a failed
start from what is known once it is stopped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import TYPE_CHECKING, Any

from .stdio import quote

if TYPE_CHECKING:
    from .connection import McpConnection


class StartError(Exception):
    """A server that could not start, with the reason (no answer in time, its exit code, its garbage)."""


async def connect(connection: McpConnection, stack: contextlib.AsyncExitStack) -> None:
    """Open the transport of ``connection`` and initialize a session on it (entered on ``stack``); the
    connection gets its ``transport``, ``session``, ``capabilities`` (and ``auth``, ``process``)."""
    server = connection.server
    transports = (
        [("stdio", _stdio)]
        if server.type == "local"
        else [
            ("streamable-http", _streamable_http),
            ("sse", _sse),
        ]
    )
    if server.type == "remote":
        from .oauth import auth_for

        connection.auth = auth_for(server, connection.env, connection.directory)
    failure: Exception | None = None
    for name, open_transport in transports:
        attempt = contextlib.AsyncExitStack()
        try:
            read, write = await open_transport(connection, attempt)
            await _initialize(connection, attempt, read, write)
        except BaseException as error:
            with contextlib.suppress(BaseException):
                await attempt.aclose()
            if not isinstance(error, Exception):
                raise
            auth = connection.auth
            if auth is not None and auth.refused:  # no transport helps: sign in first
                raise StartError(auth.take_refusal()) from None
            failure = failure or error
            continue
        connection.transport = name
        stack.push_async_exit(attempt)
        return
    assert failure is not None
    raise failure


async def list_tools(session: Any) -> list[Any]:
    """Every tool the server lists (all pages)."""
    tools: list[Any] = []
    cursor = None
    while True:
        from mcp.types import PaginatedRequestParams

        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def start_failure(connection: McpConnection, error: BaseException, timed_out: bool) -> str:
    """Why the start failed, from what is known of the process once it is stopped (or of the
    authorization: a server may take ``initialize`` without a token and refuse ``tools/list``); ``""``
    when nothing more is known than ``error``."""
    server, auth = connection.server, connection.auth
    if auth is not None and auth.refused:
        return auth.take_refusal() or ""
    oauth = _oauth_failure(error) if server.type == "remote" else None
    if oauth is not None:
        return oauth
    process = connection.process
    if timed_out:
        reason = f"no answer within {server.connect_timeout:g} s"
        if process is not None and process.garbage is not None:
            reason += f" (it {process.speaks_garbage()})"
        return reason + (process.stderr_tail() if process is not None else "")
    if process is not None and process.garbage is not None and not process.spoke:
        return process.speaks_garbage()
    if process is not None and process.exit_seen:
        return process.exited()
    return ""


async def _initialize(
    connection: McpConnection, stack: contextlib.AsyncExitStack, read: Any, write: Any
) -> None:
    from mcp import ClientSession
    from mcp.types import Implementation

    from .. import __version__

    _quiet_sdk_logs()
    session = await stack.enter_async_context(
        ClientSession(
            read,
            write,
            message_handler=connection.on_message,
            client_info=Implementation(name="opencode-tools", version=__version__),
            elicitation_callback=connection.on_elicitation,
            sampling_callback=connection.on_sampling,
        )
    )
    initialized = await session.initialize()
    connection.capabilities = initialized.capabilities
    connection.session = session


async def _stdio(connection: McpConnection, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
    """A local server, in a process group of its own that dies with us."""
    from .stdio import ServerProcess, stdio_transport

    server = connection.server
    command = server.command[0]
    env = {**connection.env, **dict(server.environment)}  # as OpenCode: our environment, then the table's
    if shutil.which(command, path=env.get("PATH")) is None:
        raise FileNotFoundError(f"command not found: {command}")
    argv: list[str] = list(server.command)
    rules = None
    if server.sandbox is not None:  # the same wall as bash's commands (opencode_cli.sandbox)
        from pathlib import Path

        from ..sandbox import confine

        where, what = Path(connection.directory), f"MCP server {connection.name}"
        confined = confine(server.sandbox, directory=where, worktree=None, env=env, what=what)
        rules = None if confined is None else confined[1]

    def on_garbage(line: str) -> None:
        note = f'MCP server "{connection.name}" printed a line that is not JSON-RPC on stdout: {quote(line)}'
        connection.notes.append(note)
        if connection.ready:
            connection.report(note)

    connection.process = ServerProcess()
    return await stack.enter_async_context(
        stdio_transport(
            argv,
            env=env,
            cwd=connection.directory,
            process=connection.process,
            on_garbage=on_garbage,
            echo_stderr=bool(os.environ.get("OPENCODE_DEBUG")),
            rules=rules,
        )
    )


async def _streamable_http(connection: McpConnection, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    server = connection.server
    client = await stack.enter_async_context(
        create_mcp_http_client(headers=dict(server.headers), auth=connection.auth)
    )
    return await stack.enter_async_context(streamable_http_client(server.url, http_client=client))


async def _sse(connection: McpConnection, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
    from mcp.client.sse import sse_client

    server = connection.server
    return await stack.enter_async_context(
        sse_client(server.url, headers=dict(server.headers), auth=connection.auth)
    )


def _oauth_failure(error: BaseException) -> str | None:
    """``OAuth failed: …`` for an error of the SDK's OAuth flow (a token endpoint that refuses the client's
    credentials, an unreadable private key) anywhere in ``error``; ``None`` if there is none."""
    from mcp.client.auth import OAuthFlowError

    from .oauth import MachineAuthFailed

    pending = [error]
    while pending:
        current = pending.pop()
        if isinstance(current, OAuthFlowError | MachineAuthFailed):
            return f"OAuth failed: {current}"
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        elif current.__cause__ is not None:
            pending.append(current.__cause__)
    return None


def _quiet_sdk_logs() -> None:
    """The SDK logs tracebacks for a misbehaving server; those are reported as one line each instead,
    and reach the terminal only with ``OPENCODE_DEBUG``."""
    import logging

    if os.environ.get("OPENCODE_DEBUG"):
        return
    for name in ("mcp.client", "mcp.shared"):  # the client side; mcp serve's server side is left alone
        sdk = logging.getLogger(name)
        if not sdk.handlers:
            sdk.addHandler(logging.NullHandler())
            sdk.propagate = False
