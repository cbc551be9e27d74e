"""Running ``opencode mcp serve`` for a test and talking to it with the SDK's ``ClientSession``."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

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
    async def session(self, **client: Any) -> AsyncIterator[ClientSession]:
        """A client connected to the server (its own MCP session)."""
        async with (
            streamable_http_client(self.url) as (read, write),
            ClientSession(read, write, **client) as session,
        ):
            await session.initialize()
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
