"""Fixtures that run real MCP servers: the demo server (``servers/demo_server.py``, the SDK's ``MCPServer``),
two broken ones, and ``@modelcontextprotocol/server-everything`` from npm.

Commands are argv lists for a stdio client; HTTP fixtures start a server on 127.0.0.1, yield its endpoint
URL and stop it (and check it is gone) at teardown. The helpers (``alive``, ``wait_gone``, paths, the npm
pin) are in ``_mcp_servers.py``.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _mcp_servers import (
    DEMO_SERVER,
    EXIT_SERVER,
    GARBAGE_SERVER,
    LOOPBACK_PRELOAD,
    ServerURL,
    demo_over_http,
    ensure_everything,
    free_port,
    start,
    stop,
    wait_listening,
)


@pytest.fixture(scope="session")
def demo_server_command() -> list[str]:
    """``[sys.executable, "<abs>/servers/demo_server.py", "stdio"]``: the demo server over stdio."""
    return [sys.executable, str(DEMO_SERVER), "stdio"]


@pytest.fixture(scope="session")
def garbage_server_command() -> list[str]:
    """A server that prints lines that are not JSON on stdout (for about 60 s) and never speaks MCP."""
    return [sys.executable, str(GARBAGE_SERVER)]


@pytest.fixture(scope="session")
def exit_server_command() -> list[str]:
    """A server that prints an error on stderr and exits with code 1 at once."""
    return [sys.executable, str(EXIT_SERVER)]


@pytest.fixture
def demo_http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerURL]:
    """The demo server over streamable HTTP on a free port of 127.0.0.1, a new one for each test.

    Yields ``http://127.0.0.1:PORT/mcp`` (a :class:`ServerURL`); stops the server at teardown.
    """
    yield from demo_over_http(tmp_path_factory, "http", "/mcp")


@pytest.fixture
def demo_sse_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerURL]:
    """The demo server over the older SSE transport on 127.0.0.1: yields ``http://127.0.0.1:PORT/sse``."""
    yield from demo_over_http(tmp_path_factory, "sse", "/sse")


@pytest.fixture(scope="session")
def everything_entry() -> Path:
    """The everything server's ``dist/index.js``, installed with npm at the pinned version if missing.

    The cache is ``$OPENCODE_TEST_NPM_CACHE``, else ``~/.cache/opencode-cli-tests/npm``. Skips when npm or
    node is missing; fails when the install fails.
    """
    return ensure_everything()


@pytest.fixture(scope="session")
def everything_command(everything_entry: Path) -> list[str]:
    """The everything server over stdio: ``["<abs>/node", "<entry>", "stdio"]``, where ``<entry>`` is
    ``<cache>/node_modules/@modelcontextprotocol/server-everything/dist/index.js``."""
    node = shutil.which("node")
    assert node is not None  # everything_entry skips without it
    return [node, str(everything_entry), "stdio"]


@pytest.fixture
def everything_http_server(
    everything_entry: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerURL]:
    """The everything server over streamable HTTP on a free port of 127.0.0.1, a new one for each test.

    It listens on ``$PORT`` (on every interface, by itself: ``servers/loopback.cjs`` is preloaded to bind
    127.0.0.1 only). Yields ``http://127.0.0.1:PORT/mcp`` (a :class:`ServerURL`); stops it at teardown.
    """
    node = shutil.which("node")
    assert node is not None
    log = tmp_path_factory.mktemp("everything-http") / "server.log"
    port = free_port()
    argv = [node, "--require", str(LOOPBACK_PRELOAD), str(everything_entry), "streamableHttp"]
    process = start(argv, log, env={**os.environ, "PORT": str(port)})
    try:
        wait_listening(process, port, log)
        yield ServerURL.of(f"http://127.0.0.1:{port}/mcp", process, log)
    finally:
        stop(process)
