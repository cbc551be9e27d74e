"""A real HTTP server on 127.0.0.1 (ephemeral port) for the network tools' tests.

Routes are plain functions of the request handler; every request is recorded (method, path, headers,
body). Handlers that wait do so on :attr:`LocalServer.release`, which is set when the server stops, so
a test never leaves a thread sleeping behind it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Route = Callable[["Handler"], None]


@dataclass
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Handler(BaseHTTPRequestHandler):
    server: _Server  # type: ignore[assignment]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        owner = self.server.owner
        owner.requests.append(
            Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        route = owner.routes.get(self.path.split("?")[0])
        try:
            if route is None:
                reply(self, 404, b"not found")
            else:
                route(self)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = _dispatch
    do_POST = _dispatch


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: LocalServer


def reply(
    handler: BaseHTTPRequestHandler,
    status: int = 200,
    body: bytes | str = b"",
    headers: Mapping[str, str] | None = None,
    *,
    length: bool = True,
) -> None:
    """Send a whole response (``length=False``: no ``Content-Length``, the body ends with the connection)."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    handler.send_response(status)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    if length:
        handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def stream(
    handler: BaseHTTPRequestHandler,
    chunks: Iterable[bytes],
    headers: Mapping[str, str] | None = None,
    *,
    chunked: bool = False,
) -> None:
    """Send a body piece by piece, with no ``Content-Length`` (close-delimited, or HTTP/1.1 chunked)."""
    if chunked:
        handler.protocol_version = "HTTP/1.1"
    handler.send_response(200)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    if chunked:
        handler.send_header("Transfer-Encoding", "chunked")
        handler.send_header("Connection", "close")
    handler.end_headers()
    for chunk in chunks:
        if chunked:
            handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        else:
            handler.wfile.write(chunk)
        handler.wfile.flush()
    if chunked:
        handler.wfile.write(b"0\r\n\r\n")
    handler.close_connection = True


class LocalServer:
    """A threaded HTTP server on an ephemeral port of 127.0.0.1."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[Seen] = []
        self.release = threading.Event()
        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return self.base + path

    def route(self, path: str, handler: Route) -> str:
        """Serve ``path`` with ``handler``; returns the full URL."""
        self.routes[path] = handler
        return self.url(path)

    def start(self) -> LocalServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
