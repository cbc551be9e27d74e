"""Running ``opencode mcp serve`` for a test and talking to it with the SDK's ``ClientSession``."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from _mcp_servers import free_port, stop, wait_listening
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

T = TypeVar("T")

SERVE = [sys.executable, "-m", "opencode_cli", "mcp", "serve"]
#: Seconds a whole test's conversation may take before it is failed (never reached when it works).
TEST_TIMEOUT = 90.0


def run(coroutine: Awaitable[T], timeout: float = TEST_TIMEOUT) -> T:
    """Run a test's async part, failing it if it hangs."""
    return asyncio.run(asyncio.wait_for(coroutine, timeout))  # type: ignore[arg-type]


class Notes:
    """What a client was sent besides answers: ``tools/list_changed`` count, and an event to wait on."""

    def __init__(self) -> None:
        self.list_changed = 0
        self.changed = asyncio.Event()

    async def handler(self, message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if method == "notifications/tools/list_changed":
            self.list_changed += 1
            self.changed.set()


@contextlib.asynccontextmanager
async def stdio_session(
    directory: Path,
    env: dict[str, str],
    *args: str,
    log: Path | None = None,
    **client: Any,
) -> AsyncIterator[ClientSession]:
    """A ``ClientSession`` with ``opencode mcp serve ARGS`` run over stdio in ``directory``; ``client``
    goes to the ``ClientSession`` (``elicitation_callback``, ``message_handler``…)."""
    params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], *args], env=env, cwd=directory)
    errlog = (log or directory.parent / "serve.log").open("a")
    try:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, **client) as session,
        ):
            await session.initialize()
            yield session
    finally:
        errlog.close()


class HttpServer:
    """``opencode mcp serve --transport http`` as a subprocess on a free port of 127.0.0.1."""

    def __init__(self, directory: Path, env: dict[str, str], *args: str) -> None:
        self.port = free_port()
        self.log = directory.parent / "serve-http.log"
        self.process: subprocess.Popen[bytes] = _start_in(
            directory, [*SERVE, "--transport", "http", "--port", str(self.port), *args], self.log, env
        )
        wait_listening(self.process, self.port, self.log)
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        stop(self.process)

    @contextlib.asynccontextmanager
    async def session(self, token: str | None = None, **client: Any) -> AsyncIterator[ClientSession]:
        """A client connected to the server (its own MCP session), sending ``token`` as its bearer token
        if given."""
        from mcp.shared._httpx_utils import create_mcp_http_client

        headers = {"authorization": f"Bearer {token}"} if token else None
        async with (
            create_mcp_http_client(headers) as http,
            streamable_http_client(self.url, http_client=http) as (read, write),
            ClientSession(read, write, **client) as session,
        ):
            await session.initialize()
            yield session

    @contextlib.asynccontextmanager
    async def modern_session(self, **client: Any) -> AsyncIterator[ClientSession]:
        """A client of the newest protocol revision: ``server/discover``, then single-exchange requests
        that carry no MCP session id."""
        async with (
            streamable_http_client(self.url) as (read, write),
            ClientSession(read, write, **client) as session,
        ):
            await session.discover()
            yield session


def _start_in(directory: Path, argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` in ``directory``, in its own process group, output to ``log`` (as ``start`` does)."""
    with log.open("ab") as out:
        return subprocess.Popen(
            argv,
            cwd=directory,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env=env,
            start_new_session=True,
        )


def text_of(result: Any) -> str:
    """The text parts of a ``CallToolResult``."""
    return "".join(getattr(block, "text", "") for block in result.content)


Answer = Callable[[Any, Any], Awaitable[Any]]


# -- the MCP Inspector, from npm ---------------------------------------------------------------------------

INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector"
# One pin, read by .ci/run too.
INSPECTOR_VERSION = (Path(__file__).resolve().parent / "inspector-version.txt").read_text().strip()


def ensure_inspector() -> list[str]:
    """The argv that runs the MCP Inspector (``npx --prefix CACHE --no-install mcp-inspector``), installed
    with npm into the MCP tests' npm cache if missing or at another version than the pin. Skips the test
    when npm is not installed; fails it when the install fails."""
    import fcntl
    import json
    import shutil

    from _mcp_servers import npm_cache

    npm, npx = shutil.which("npm"), shutil.which("npx")
    if npm is None or npx is None or shutil.which("node") is None:
        pytest.skip("npm, npx and node are needed to run the MCP Inspector")
    cache = npm_cache()
    package = cache / "node_modules" / INSPECTOR_PACKAGE / "package.json"
    cache.mkdir(parents=True, exist_ok=True)

    def installed() -> str | None:
        try:
            return json.loads(package.read_text())["version"]
        except (OSError, ValueError, KeyError):
            return None

    with (cache / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed() != INSPECTOR_VERSION:
            spec = f"{INSPECTOR_PACKAGE}@{INSPECTOR_VERSION}"
            argv = [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", spec]
            done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
            if done.returncode != 0 or installed() != INSPECTOR_VERSION:
                pytest.fail(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return [npx, "--prefix", str(cache), "--no-install", "mcp-inspector"]
