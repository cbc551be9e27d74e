"""Running the host: over stdio (one client), or streamable HTTP (many, each with its own session).

:func:`run` owns everything it starts: the project's MCP servers, the watcher that rebuilds the tools,
the transport. Each is stopped on the way out (the client closing stdin, SIGINT or SIGTERM on HTTP).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from collections.abc import Callable
from typing import Any

from .host import ServeHost

#: Hosts that are this machine only.
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: Seconds an HTTP client may stay silent before its session is closed (the SDK's idle timeout too).
IDLE_TIMEOUT = 30 * 60.0
#: Seconds open HTTP streams get to finish when the server stops.
GRACEFUL_SHUTDOWN = 2


async def run(
    host: ServeHost,
    transport: str,
    *,
    bind: str = "127.0.0.1",
    port: int = 0,
    announce: Callable[[str], None],
) -> None:
    """Serve until the client goes (stdio) or a signal stops the server (HTTP)."""
    project = host.project
    watcher = project.watch(model=host.model, agent=host.agent)
    await watcher.start()
    follower = asyncio.ensure_future(host.follow(watcher))
    # the project's own MCP servers connect meanwhile: their tools join as each one is ready, and the
    # client is answered at once (a slow server delays nothing)
    opening = asyncio.ensure_future(project.open())
    try:
        if transport == "stdio":
            await _stdio(host, announce)
        else:
            await _http(host, bind, port, announce)
    finally:
        opening.cancel()
        with contextlib.suppress(BaseException):
            await opening
        await watcher.stop()
        follower.cancel()
        with contextlib.suppress(BaseException):
            await follower
        host.close()


async def _stdio(host: ServeHost, announce: Callable[[str], None]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        announce("serving over stdio")
        await host.server.run(read, write, host.server.create_initialization_options())


async def _http(host: ServeHost, bind: str, port: int, announce: Callable[[str], None]) -> None:
    import uvicorn

    app = host.server.streamable_http_app(host=bind, session_idle_timeout=IDLE_TIMEOUT)
    listener = _listen(bind, port)
    config = uvicorn.Config(
        _Sessions(app, host),
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
    )
    server = _Uvicorn(config)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, server.stop)
    bound = listener.getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    announce(f"serving over streamable HTTP at http://{shown}:{bound[1]}/mcp")
    try:
        await server.serve(sockets=[listener])
    finally:
        listener.close()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)


class ListenError(Exception):
    """The HTTP server cannot listen where it was asked to (the message says why)."""


def _listen(bind: str, port: int) -> socket.socket:
    """A listening socket on ``bind:port`` (port 0: a free one); :class:`ListenError` if it cannot be."""
    try:
        infos = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as error:
        raise ListenError(f"cannot listen on {bind}:{port}: {error.strerror or error}") from None
    family, kind, proto, _, address = infos[0]
    listener = socket.socket(family, kind, proto)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(address)
        listener.listen(128)
    except OSError as error:
        listener.close()
        raise ListenError(f"cannot listen on {bind}:{port}: {error.strerror or error}") from None
    listener.set_inheritable(False)
    return listener


class _Uvicorn:
    """uvicorn's server without its own signal handling (ours stops it gracefully, then the project)."""

    def __init__(self, config: Any) -> None:
        import uvicorn

        class Quiet(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Any:
                yield

        self._server = Quiet(config)

    def stop(self) -> None:
        self._server.should_exit = True

    async def serve(self, sockets: list[socket.socket]) -> None:
        await self._server.serve(sockets=sockets)


class _Sessions:
    """ASGI middleware: a client's ``DELETE`` of its MCP session closes our session for it too, and
    sessions idle longer than :data:`IDLE_TIMEOUT` are closed as new requests come."""

    def __init__(self, app: Any, host: ServeHost) -> None:
        self.app = app
        self.host = host

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)
        if scope.get("type") != "http":
            return
        self.host.forget_idle(IDLE_TIMEOUT)
        if scope.get("method") == "DELETE":
            headers = dict(scope.get("headers") or [])
            session_id = headers.get(b"mcp-session-id")
            if session_id:
                self.host.forget(session_id.decode("latin-1"))
