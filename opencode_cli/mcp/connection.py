"""One MCP server as a service of the project: started (or connected) once, shared, stopped at the end.

The SDK's transports and its ``ClientSession`` are context managers whose task groups must be entered
and left by one task, so a connection runs in a task of its own: :meth:`McpConnection.start` launches it
and waits until the server is initialized and its tools are listed (within the server's timeout);
:meth:`McpConnection.stop` tells it to leave and waits. If the server goes away while connected (it
exits, the stream breaks), the connection marks itself ``lost``: the next call reports it, and the tool
asks the project for a new connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..services import Service

if TYPE_CHECKING:
    from .config import ServerConfig


#: The JSON-RPC error code the SDK gives a request whose connection closed (``mcp.types.CONNECTION_CLOSED``).
CONNECTION_CLOSED = -32000


class McpConnection(Service):
    """A connected MCP server: its capabilities, its tools, and calls to it."""

    def __init__(
        self,
        server: ServerConfig,
        directory: str,
        env: Mapping[str, str],
        on_change: Callable[[], None] | None = None,
    ):
        self.server = server
        self.name = server.name
        self.directory = directory
        self.env = dict(env)
        self.on_change = on_change
        self.session: Any = None
        self.capabilities: Any = None
        self.tools: list[Any] = []
        self.transport = ""
        self.lost: str | None = None
        self._leave: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    def detail(self) -> str | None:
        """``stdio``/``streamable-http``/``sse`` and the tool count, or why the connection was lost."""
        if self.lost:
            return f"lost: {self.lost}"
        return f"{self.transport}, {len(self.tools)} tools" if self.session is not None else None

    @property
    def has_resources(self) -> bool:
        """Whether the server advertises the ``resources`` capability."""
        return self.session is not None and getattr(self.capabilities, "resources", None) is not None

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, initialize and list the tools, within the server's timeout."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._leave = asyncio.Event()
        self._task = asyncio.create_task(self._run(ready), name=f"mcp {self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.server.connect_timeout)
        except TimeoutError:
            await self.stop()
            raise TimeoutError(f"no answer within {self.server.connect_timeout:g} s") from None
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Leave the session and close the transport (the server process is stopped with it)."""
        task, self._task = self._task, None
        if task is None:
            return
        if self._leave is not None:
            self._leave.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 5)
        except (TimeoutError, Exception):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self.session = None

    async def _run(self, ready: asyncio.Future[None]) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                await self._connect(stack)
                self.tools = await self._list_tools()
                ready.set_result(None)
                assert self._leave is not None
                await self._leave.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception) else RuntimeError("cancelled"))
                ready.exception()  # retrieved: start() may have stopped waiting (a timeout)
            elif not (self._leave is not None and self._leave.is_set()):
                self.lost = _describe(error)
            if isinstance(error, asyncio.CancelledError):
                raise
        finally:
            if ready.done() and self._leave is not None and not self._leave.is_set() and self.lost is None:
                self.lost = "the server closed the connection"
            self.session = None

    async def _connect(self, stack: contextlib.AsyncExitStack) -> None:
        """Open the transport and initialize a session on it: stdio for a local server; for a remote one
        streamable HTTP, and SSE when that fails (an older server)."""
        transports = (
            [("stdio", self._stdio)]
            if self.server.type == "local"
            else [
                ("streamable-http", self._streamable_http),
                ("sse", self._sse),
            ]
        )
        failure: Exception | None = None
        for name, open_transport in transports:
            attempt = contextlib.AsyncExitStack()
            try:
                read, write = await open_transport(attempt)
                await self._initialize(attempt, read, write)
            except Exception as error:
                failure = failure or error
                with contextlib.suppress(BaseException):
                    await attempt.aclose()
                continue
            self.transport = name
            stack.push_async_exit(attempt)
            return
        assert failure is not None
        raise failure

    async def _initialize(self, stack: contextlib.AsyncExitStack, read: Any, write: Any) -> None:
        from mcp import ClientSession
        from mcp.types import Implementation

        from .. import __version__

        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                message_handler=self._on_message,
                client_info=Implementation(name="opencode-cli", version=__version__),
            )
        )
        initialized = await session.initialize()
        self.capabilities = initialized.capabilities
        self.session = session

    async def _stdio(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        """A local server, started through the launcher so that it dies with us."""
        from mcp.client.stdio import StdioServerParameters, stdio_client

        from ..services.launch import launcher

        server = self.server
        command, *args = server.command
        env = {**self.env, **dict(server.environment)}  # as OpenCode: our environment, then the table's
        if shutil.which(command, path=env.get("PATH")) is None:
            raise FileNotFoundError(f"command not found: {command}")
        rules = None
        if server.sandbox is not None:  # the same wall as bash's commands (opencode_cli.sandbox)
            from pathlib import Path

            from ..sandbox import confine

            where, what = Path(self.directory), f"MCP server {self.name}"
            confined = confine(server.sandbox, directory=where, worktree=None, env=env, what=what)
            rules = None if confined is None else confined[1]
        params = StdioServerParameters(
            command=sys.executable,
            args=[*launcher(rules), command, *args],
            env=env,
            cwd=self.directory,
            encoding_error_handler="replace",
        )
        return await stack.enter_async_context(stdio_client(params, errlog=_stderr_sink()))

    async def _streamable_http(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = await stack.enter_async_context(create_mcp_http_client(headers=dict(self.server.headers)))
        return await stack.enter_async_context(streamable_http_client(self.server.url, http_client=client))

    async def _sse(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        from mcp.client.sse import sse_client

        return await stack.enter_async_context(sse_client(self.server.url, headers=dict(self.server.headers)))

    async def _list_tools(self) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        while True:
            from mcp.types import PaginatedRequestParams

            page = await self.session.list_tools(
                params=PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def _on_message(self, message: Any) -> None:
        """Refresh the tools when the server says they changed (``notifications/tools/list_changed``)."""
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification) or getattr(message, "method", None) == (
            "notifications/tools/list_changed"
        ):
            with contextlib.suppress(Exception):
                self.tools = await self._list_tools()
                if self.on_change is not None:
                    self.on_change()

    # -- requests ----------------------------------------------------------------------------------

    def _live(self) -> Any:
        if self.session is None or self.lost:
            from ..errors import ToolError

            raise ToolError(
                f'MCP server "{self.name}" is not connected' + (f" ({self.lost})" if self.lost else "")
            )
        return self.session

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call a tool, bounded by the server's request timeout; a server that goes away during the call
        ends it at once with an error saying so (the next call connects again)."""
        session = self._live()
        return await self._unless_lost(
            session.call_tool(name, arguments, read_timeout_seconds=self.server.request_timeout)
        )

    async def _unless_lost(self, request: Any) -> Any:
        """Await ``request``, or fail as soon as the connection is lost."""
        from ..errors import ToolError

        call = asyncio.ensure_future(request)
        connection = self._task
        if connection is None:
            call.cancel()
            raise ToolError(f'MCP server "{self.name}" is not connected')
        try:
            await asyncio.wait({call, connection}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            call.cancel()
            raise
        if not call.done():
            call.cancel()
            with contextlib.suppress(BaseException):
                await call
            reason = self.lost or "the server closed the connection"
            raise ToolError(f'MCP server "{self.name}" went away during the call ({reason})')
        try:
            return call.result()
        except Exception as error:
            if getattr(error, "code", None) == CONNECTION_CLOSED:  # the server went away under the request
                self.lost = self.lost or "the server closed the connection"
            if self.lost:
                raise ToolError(f'MCP server "{self.name}" went away during the call ({self.lost})') from None
            raise ToolError(_request_error(error)) from None

    async def list_resources(self) -> list[Any]:
        """Every resource of the server (all pages)."""
        return await self._pages("list_resources", "resources")

    async def list_resource_templates(self) -> list[Any]:
        """Every resource template of the server (all pages)."""
        return await self._pages("list_resource_templates", "resource_templates")

    async def read_resource(self, uri: str) -> Any:
        """Read one resource."""
        return await self._unless_lost(self._live().read_resource(uri))

    async def _pages(self, method: str, field: str) -> list[Any]:
        from mcp.types import PaginatedRequestParams

        session = self._live()
        found: list[Any] = []
        cursor = None
        while True:
            page = await getattr(session, method)(
                params=PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            found.extend(getattr(page, field))
            cursor = page.next_cursor
            if not cursor:
                return found


def _request_error(error: BaseException) -> str:
    """A failed request as the TypeScript SDK words it (``MCP error -32001: Request timed out``)."""
    code = getattr(error, "code", None)
    if isinstance(code, int) and hasattr(error, "message"):
        return f"MCP error {code}: {error.message}"  # type: ignore[attr-defined]
    return _describe(error)


def _describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in error.exceptions)
    return str(error) or type(error).__name__


_devnull: Any = None


def _stderr_sink() -> Any:
    """Where a local server's stderr goes: ours with ``OPENCODE_DEBUG``, else nowhere (OpenCode keeps it in
    its log; a command's output is no place for a server's chatter)."""
    global _devnull
    if os.environ.get("OPENCODE_DEBUG"):
        return sys.stderr
    if _devnull is None:
        _devnull = open(os.devnull, "w")  # noqa: SIM115 - one for the process, shared by every server
    return _devnull
