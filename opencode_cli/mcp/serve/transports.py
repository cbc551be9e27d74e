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
from dataclasses import dataclass, field
from typing import Any

from .host import ServeHost
from .limits import MAX_REQUEST_BYTES

#: Hosts that are this machine only.
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: Addresses that listen on every interface.
WILDCARDS = ("0.0.0.0", "::", "")
#: Seconds an HTTP client may stay silent before its session is closed (the SDK's idle timeout too).
IDLE_TIMEOUT = 30 * 60.0
#: Seconds open HTTP streams get to finish when the server stops.
GRACEFUL_SHUTDOWN = 2
#: Seconds the answers of aborted calls get to reach their clients' streams before those close.
ANSWER_GRACE = 0.2


@dataclass
class HttpAccess:
    """Who may reach the HTTP server: the Host names it answers to besides its bound address
    (``--allow-host``), and the bearer token every request must carry (``--token``), if any."""

    allow_hosts: list[str] = field(default_factory=list)
    token: str | None = None


def needs_token(bind: str) -> bool:
    """Whether serving on ``bind`` needs a bearer token: any address that is not this machine only."""
    return bind not in LOOPBACK


def security(bind: str, allow_hosts: list[str]) -> Any:
    """The SDK's Host/Origin checks (DNS rebinding protection), on for every bind: the bound address
    (and the loopback names for a wildcard bind, which listens there too) and the ``allow_hosts``, each
    with any port."""
    from mcp.server.transport_security import TransportSecuritySettings

    names = list(LOOPBACK) if bind in LOOPBACK or bind in WILDCARDS else []
    names += [bind] if bind not in WILDCARDS else []
    names += allow_hosts
    hosts = list(dict.fromkeys(f"[{n}]" if ":" in n and not n.startswith("[") else n for n in names))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[form for name in hosts for form in (name, f"{name}:*")],
        allowed_origins=[
            form
            for name in hosts
            for scheme in ("http", "https")
            for form in (f"{scheme}://{name}", f"{scheme}://{name}:*")
        ],
    )


async def run(
    host: ServeHost,
    transport: str,
    *,
    bind: str = "127.0.0.1",
    port: int = 0,
    announce: Callable[[str], None],
    access: HttpAccess | None = None,
) -> None:
    """Serve until the client goes (stdio) or a signal stops the server (HTTP)."""
    project = host.project
    watcher = project.watch(model=host.model, agent=host.agent)
    await watcher.start()
    follower = asyncio.ensure_future(host.follow(watcher))
    # the project's own MCP servers connect meanwhile: the client's first tools/list (or call) waits for
    # them, each within its start timeout, so that what it is offered is whole
    opening = asyncio.ensure_future(project.open())
    host.opening = opening
    try:
        if transport == "stdio":
            await _stdio(host, announce)
        else:
            await _http(host, bind, port, announce, access or HttpAccess())
    finally:
        opening.cancel()
        with contextlib.suppress(BaseException):
            await opening
        await watcher.stop()
        follower.cancel()
        with contextlib.suppress(BaseException):
            await follower
        host.close()
        await host.roots.aclose()


async def _stdio(host: ServeHost, announce: Callable[[str], None]) -> None:
    """Serve the one client on stdin/stdout until stdin closes, or SIGINT/SIGTERM: then every call in
    flight is aborted and answered, stdin is taken as closed, and the server ends after writing those
    answers (the command then exits 130 or 143)."""
    from mcp.server.stdio import stdio_server

    from .stdio import claimed_stdio

    loop = asyncio.get_running_loop()
    async with claimed_stdio() as (stdin, stdout), stdio_server(stdin, stdout) as (read, write):  # type: ignore[arg-type]
        stopping: list[asyncio.Task[None]] = []

        async def drain(reason: str) -> None:
            host.stopped = reason
            await host.abort_calls(reason)  # each call answered before stdin is taken as closed
            await asyncio.sleep(ANSWER_GRACE)  # the answers just given are written
            stdin.end()

        def stop(reason: str) -> None:
            if not stopping:
                stopping.append(asyncio.ensure_future(drain(reason)))
            else:  # a second signal: no more waiting
                stdin.end()

        with _signals(loop, stop):
            announce("serving over stdio")
            await host.server.run(read, write, host.server.create_initialization_options())
            for task in stopping:
                with contextlib.suppress(BaseException):
                    await task


@contextlib.contextmanager
def _signals(loop: asyncio.AbstractEventLoop, stop: Callable[[str], None]) -> Any:
    """SIGINT and SIGTERM call ``stop("interrupted")`` / ``stop("terminated")`` while the block runs."""
    signals = ((signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated"))
    for signum, reason in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop, reason)
    try:
        yield
    finally:
        for signum, _ in signals:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)


async def _http(
    host: ServeHost, bind: str, port: int, announce: Callable[[str], None], access: HttpAccess
) -> None:
    import uvicorn

    app = host.server.streamable_http_app(
        host=bind,
        session_idle_timeout=IDLE_TIMEOUT,
        transport_security=security(bind, access.allow_hosts),
        max_request_body_size=MAX_REQUEST_BYTES,
    )
    listener = _listen(bind, port)
    config = uvicorn.Config(
        _Sessions(app, host, access.token),
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
    )
    server = _Uvicorn(config)
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []

    async def drain(reason: str) -> None:
        from sse_starlette.sse import AppStatus  # the SDK's SSE responses: its documented drain switch

        host.stopped = reason
        await host.abort_calls(reason)  # calls in flight end now (their processes stopped) and are answered
        server.stop()  # no new connections; the open ones get GRACEFUL_SHUTDOWN seconds
        await asyncio.sleep(ANSWER_GRACE)  # the answers just given reach their streams
        AppStatus.should_exit = True  # open event streams (a client's GET) end instead of holding the exit

    def stop(reason: str) -> None:
        if not stopping:
            stopping.append(asyncio.ensure_future(drain(reason)))

    bound = listener.getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    announce(f"serving over streamable HTTP at http://{shown}:{bound[1]}/mcp")
    try:
        with _signals(loop, stop):
            await server.serve(sockets=[listener])
    finally:
        listener.close()


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

    def __init__(self, app: Any, host: ServeHost, token: str | None = None) -> None:
        self.app = app
        self.host = host
        self.token = token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and self.token is not None and not self._authorized(scope):
            await _unauthorized(send)
            return
        if scope.get("type") == "http" and scope.get("method") == "POST":
            receive = await _checked_body(receive, send)
            if receive is None:  # refused, and answered
                return
        await self.app(scope, receive, send)
        if scope.get("type") != "http":
            return
        self.host.forget_idle(IDLE_TIMEOUT)
        if scope.get("method") == "DELETE":
            headers = dict(scope.get("headers") or [])
            session_id = headers.get(b"mcp-session-id")
            if session_id:
                self.host.forget(session_id.decode("latin-1"))

    def _authorized(self, scope: Any) -> bool:
        """Whether the request carries ``Authorization: Bearer <token>`` with this server's token."""
        import hmac

        headers = dict(scope.get("headers") or [])
        scheme, _, given = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        expected = (self.token or "").encode()
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), expected)


async def _checked_body(receive: Any, send: Any) -> Any:
    """Read a POST's body and put it to the rule stdio's lines meet (:func:`.limits.check_message`): a
    message the SDK can take gives a ``receive`` that hands the SDK the body again; any other is answered
    here, as stdio answers it (413 for a body over the limit, else 400), and gives ``None``."""
    from .limits import Problem, check_message, error_reply, replies, too_large

    body = bytearray()
    problem: Problem | None
    status = 0
    while True:
        message = await receive()
        if message.get("type") != "http.request":  # the client went away
            return None
        body += message.get("body", b"")
        if len(body) > MAX_REQUEST_BYTES:
            problem, status = too_large(bytes(body[:4096])), 413
            break
        if not message.get("more_body", False):
            problem, status = check_message(bytes(body)), 400
            break
    if problem is None:
        sent = False

        async def again() -> Any:
            nonlocal sent
            if sent:
                return await receive()  # the SDK waits for the client's disconnect
            sent = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        return again
    answers = [error_reply(reply) for reply in replies(problem)]
    text = answers[0] if problem.batch is None else "[" + ",".join(answers) + "]"
    data = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": data})
    return None


async def _unauthorized(send: Any) -> None:
    """A 401 with a JSON-RPC error body and the bearer challenge."""
    from .limits import Problem, error_reply

    body = error_reply(Problem(-32001, "Unauthorized: this server needs a bearer token")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="opencode mcp serve"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
