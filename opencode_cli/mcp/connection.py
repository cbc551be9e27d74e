"""One MCP server as a service of the project: started (or connected) once, shared, stopped at the end.

The SDK's transports and its ``ClientSession`` are context managers whose task groups must be entered
and left by one task, so a connection runs in a task of its own: :meth:`McpConnection.start` launches it
and waits until the server is initialized and its tools are listed (the timeout is kept inside that task,
so a server that never answers is stopped at it, to the second); :meth:`McpConnection.stop` tells it to
leave and waits. A local server runs through :mod:`~opencode_cli.mcp.stdio`, which knows its pid, exit code
and last stderr lines. If the server goes away while connected (it exits, the stream breaks), the
connection marks itself ``lost`` at once and reports the change (its tools leave the registry); the next
call asks the project for a new connection. A request that times out names the server, the timeout and
its key; the server is then pinged, and one that does not answer is stopped as hung (``lost`` too).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..services import Service
from .stdio import quote

if TYPE_CHECKING:
    from .config import ServerConfig
    from .stdio import ServerProcess


#: What a tool call's progress reports are handed to: ``(progress, total, message)``.
ProgressSink = Callable[[float, "float | None", "str | None"], None]

#: The JSON-RPC error code the SDK gives a request whose connection closed (``mcp.types.CONNECTION_CLOSED``).
CONNECTION_CLOSED = -32000
#: Seconds a server gets to answer a ping after a request timed out, before it is taken as hung.
PING_TIMEOUT = 2.0
#: Seconds a connection gets to leave (its server to stop) when asked to.
STOP_TIMEOUT = 5.0


class McpConnection(Service):
    """A connected MCP server: its capabilities, its tools, and calls to it."""

    #: Stopped alongside the other connections when the project closes (none depends on another).
    independent = True

    def __init__(
        self,
        server: ServerConfig,
        directory: str,
        env: Mapping[str, str],
        on_change: Callable[[], None] | None = None,
        warn: Callable[[str], None] | None = None,
    ):
        self.server = server
        self.name = server.name
        self.directory = directory
        self.env = dict(env)
        self.on_change = on_change
        self.warn = warn
        self.session: Any = None
        self.capabilities: Any = None
        self.tools: list[Any] = []
        self.transport = ""
        self.lost: str | None = None
        self.process: ServerProcess | None = None
        """A local server's process (pid, exit code, last stderr lines); ``None`` for a remote one."""
        self.notes: list[str] = []
        """One-line reports about the server (a line it printed that is not JSON-RPC)."""
        self.auth: Any = None
        """A remote server's OAuth (:class:`.oauth.Guard`), or ``None``."""
        self._asks: list[Any] = []
        """The calls in progress that can answer the server's requests (:class:`.asks.CallAsks`), oldest
        first: a server's elicitation or sampling request goes to the first."""
        self._leave: asyncio.Event | None = None
        self._kill = False
        self._ready = False
        self._task: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        """A local server's process id while it runs."""
        process = self.process
        return process.pid if process is not None and process.pid and process.returncode is None else None

    def detail(self) -> str | None:
        """``stdio, pid N, K tools`` (or the remote transport), or why the connection was lost."""
        if self.lost:
            return f"lost: {self.lost}"
        if self.session is None:
            return None
        pid = f", pid {self.pid}" if self.pid else ""
        return f"{self.transport}{pid}, {plural(len(self.tools), 'tool')}"

    @property
    def ended(self) -> bool:
        """Whether the connection is over: lost, its task done, or its server's process gone (the loss
        may not be marked yet: it is, once :meth:`settle` returns)."""
        if self.lost is not None or (self._task is not None and self._task.done()):
            return True
        process = self.process
        return process is not None and self._ready and (process.closed.is_set() or process.dead())

    async def settle(self) -> None:
        """Once :attr:`ended`: wait (bounded) for the connection's task to finish, so that why it ended
        (an exit code, stderr) is known."""
        if self.ended and self.lost is None:
            await self._settle()

    @property
    def has_resources(self) -> bool:
        """Whether the server advertises the ``resources`` capability."""
        return self.session is not None and getattr(self.capabilities, "resources", None) is not None

    # -- lifecycle ---------------------------------------------------------------------------------
    #
    # One task per connection (:meth:`_serve`) enters the transport and the SDK's session, and leaves
    # them: their anyio task groups and cancel scopes never cross tasks. Its start is bounded inside
    # it, so a start that times out unwinds in the task that entered everything.

    async def start(self) -> None:
        """Connect, initialize and list the tools, within the server's timeout; a failure says why
        (no answer in time, the exit code and last stderr lines, a line that is not JSON-RPC)."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._leave = asyncio.Event()
        self._task = asyncio.create_task(self._serve(ready), name=f"mcp {self.name}")
        try:
            await asyncio.shield(ready)
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Leave the session and close the transport (a local server is stopped with its process group)."""
        task, self._task = self._task, None
        if task is None:
            return
        if self._leave is not None:
            self._leave.set()
        if not self._ready:  # still connecting: no session to leave, so the start is cut short at once
            task.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT)
        except (TimeoutError, Exception):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self.session = None

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        timed_out = False
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(self.server.connect_timeout):
                        await self._connect(stack)
                        self.tools = await self._list_tools()
                except TimeoutError:
                    timed_out = True
                    raise
                self._ready = True
                ready.set_result(None)
                for note in self.notes:
                    self._warn(note)
                await self._until_closed()
                if self._kill or not (self._leave is not None and self._leave.is_set()):
                    raise _Closed  # not a graceful leave: the process group is stopped at once
        except BaseException as error:
            if not ready.done():
                reason = self._start_failure(error, timed_out)
                if reason:
                    failure: BaseException = StartError(reason)
                else:
                    failure = error if isinstance(error, Exception) else RuntimeError("cancelled")
                ready.set_exception(failure)
                ready.exception()  # retrieved: start() may have stopped waiting (it was cancelled)
            elif not (self._leave is not None and self._leave.is_set()) or self._kill:
                self.lost = self.lost or self._lost_reason(error)
            if isinstance(error, asyncio.CancelledError):
                raise
        finally:
            self.session = None
            if self._ready and self.lost is None and not (self._leave is not None and self._leave.is_set()):
                self.lost = "the server closed the connection"
            if self._ready and self.lost is not None and self.on_change is not None:
                with contextlib.suppress(Exception):
                    self.on_change()  # its tools leave the registry; the status says why

    async def _until_closed(self) -> None:
        """Wait until asked to leave, or until the server's process ends (a local server)."""
        assert self._leave is not None
        waits = [asyncio.ensure_future(self._leave.wait())]
        if self.process is not None:
            waits.append(asyncio.ensure_future(self.process.closed.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    def _start_failure(self, error: BaseException, timed_out: bool) -> str:
        """Why the start failed, from what is known of the process once it is stopped (or of the
        authorization: a server may take ``initialize`` without a token and refuse ``tools/list``)."""
        if self.auth is not None and self.auth.refused:
            return self.auth.take_refusal() or ""
        oauth = _oauth_failure(error) if self.server.type == "remote" else None
        if oauth is not None:
            return oauth
        process = self.process
        if timed_out:
            reason = f"no answer within {self.server.connect_timeout:g} s"
            if process is not None and process.garbage is not None:
                reason += f" (it {process.speaks_garbage()})"
            return reason + (process.stderr_tail() if process is not None else "")
        if process is not None and process.garbage is not None and not process.spoke:
            return process.speaks_garbage()
        if process is not None and process.exit_seen:
            return process.exited()
        return ""

    def _lost_reason(self, error: BaseException) -> str:
        process = self.process
        if process is not None and process.exit_seen:
            return process.exited()
        if isinstance(error, _Closed):
            return "the server closed the connection"
        return _describe(error)

    def _warn(self, message: str) -> None:
        if self.warn is not None:
            self.warn(message)

    def _on_garbage(self, line: str) -> None:
        note = f'MCP server "{self.name}" printed a line that is not JSON-RPC on stdout: {quote(line)}'
        self.notes.append(note)
        if self._ready:
            self._warn(note)

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
        if self.server.type == "remote":
            from .oauth import auth_for

            self.auth = auth_for(self.server, self.env, self.directory)
        failure: Exception | None = None
        for name, open_transport in transports:
            attempt = contextlib.AsyncExitStack()
            try:
                read, write = await open_transport(attempt)
                await self._initialize(attempt, read, write)
            except BaseException as error:
                with contextlib.suppress(BaseException):
                    await attempt.aclose()
                if not isinstance(error, Exception):
                    raise
                if self.auth is not None and self.auth.refused:  # no transport helps: sign in first
                    raise StartError(self.auth.take_refusal()) from None
                failure = failure or error
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

        _quiet_sdk_logs()
        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                message_handler=self._on_message,
                client_info=Implementation(name="opencode-tools", version=__version__),
                elicitation_callback=self._on_elicitation,
                sampling_callback=self._on_sampling,
            )
        )
        initialized = await session.initialize()
        self.capabilities = initialized.capabilities
        self.session = session

    async def _stdio(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        """A local server, in a process group of its own that dies with us."""
        from .stdio import ServerProcess, stdio_transport

        server = self.server
        command = server.command[0]
        env = {**self.env, **dict(server.environment)}  # as OpenCode: our environment, then the table's
        if shutil.which(command, path=env.get("PATH")) is None:
            raise FileNotFoundError(f"command not found: {command}")
        argv: list[str] = list(server.command)
        rules = None
        if server.sandbox is not None:  # the same wall as bash's commands (opencode_cli.sandbox)
            from pathlib import Path

            from ..sandbox import confine

            where, what = Path(self.directory), f"MCP server {self.name}"
            confined = confine(server.sandbox, directory=where, worktree=None, env=env, what=what)
            rules = None if confined is None else confined[1]
        self.process = ServerProcess()
        return await stack.enter_async_context(
            stdio_transport(
                argv,
                env=env,
                cwd=self.directory,
                process=self.process,
                on_garbage=self._on_garbage,
                echo_stderr=bool(os.environ.get("OPENCODE_DEBUG")),
                rules=rules,
            )
        )

    async def _streamable_http(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = await stack.enter_async_context(
            create_mcp_http_client(headers=dict(self.server.headers), auth=self.auth)
        )
        return await stack.enter_async_context(streamable_http_client(self.server.url, http_client=client))

    async def _sse(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        from mcp.client.sse import sse_client

        return await stack.enter_async_context(
            sse_client(self.server.url, headers=dict(self.server.headers), auth=self.auth)
        )

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

    # -- what the server asks of us (elicitation, sampling): see .asks ------------------------------

    @contextlib.contextmanager
    def answering(self, asks: Any) -> Any:
        """While the block runs (a call), the server's requests are answered by ``asks`` (a
        :class:`~.asks.CallAsks`) unless an older call is still running."""
        self._asks.append(asks)
        try:
            yield
        finally:
            self._asks.remove(asks)

    async def _on_elicitation(self, context: Any, params: Any) -> Any:
        """``elicitation/create``: answered for the oldest call in progress; ``decline`` outside a call
        (nobody to ask)."""
        from mcp.types import ElicitResult

        if not self._asks:
            return ElicitResult(action="decline")
        return await self._asks[0].elicit(params)

    async def _on_sampling(self, context: Any, params: Any) -> Any:
        """``sampling/createMessage``: answered with the model of the oldest call's session, once
        allowed; refused outside a call."""
        from mcp.types import INVALID_REQUEST, ErrorData

        if not self._asks:
            return ErrorData(
                code=INVALID_REQUEST, message="Sampling refused: no call of this server is in progress"
            )
        return await self._asks[0].sample(params)

    # -- requests ----------------------------------------------------------------------------------

    def _live(self) -> Any:
        if self.session is None or self.lost:
            from ..errors import ToolError

            raise ToolError(
                f'MCP server "{self.name}" is not connected' + (f" ({self.lost})" if self.lost else "")
            )
        return self.session

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        progress: ProgressSink | None = None,
        on_task: Callable[[str, str | None], None] | None = None,
    ) -> Any:
        """Call a tool, asking for progress (``progress`` gets each report); a server that goes away
        during the call ends it at once with an error saying so (the next call connects again).

        The call is bounded by the server's request timeout, which each progress report restarts, up to
        its total bound (``maxTotalTimeout``), as the TypeScript SDK's ``resetTimeoutOnProgress`` does:
        the Python SDK takes one timeout per request, so the bound is kept here instead. A tool that
        declares ``taskSupport = "required"`` runs as a task (:mod:`.tasks`), its statuses reported to
        ``on_task(status, message)``."""
        from . import tasks

        _sendable(arguments, f"the arguments of {name}")
        session = self._live()
        listed = next((tool for tool in self.tools if tool.name == name), None)
        if listed is not None and tasks.required(listed, self.capabilities):
            timeout = self.server.request_timeout
            return await self._unless_lost(
                tasks.call_as_task(session, name, arguments, timeout, on_task), "tools/call"
            )
        return await self._unless_lost(self._call_tool(session, name, arguments, progress), "tools/call")

    async def _call_tool(
        self, session: Any, name: str, arguments: dict[str, Any], progress: ProgressSink | None
    ) -> Any:
        loop = asyncio.get_running_loop()
        wait = self.server.request_timeout
        deadline = loop.time() + self.server.total_timeout
        async with asyncio.timeout(wait) as timer:

            async def reported(value: float, total: float | None, message: str | None) -> None:
                timer.reschedule(min(loop.time() + wait, deadline))
                if progress is not None:
                    with contextlib.suppress(Exception):
                        progress(value, total, message)

            # a progress callback makes the SDK send a progress token with the call
            return await session.call_tool(name, arguments, progress_callback=reported)

    async def _unless_lost(self, request: Any, method: str) -> Any:
        """Await ``request``, or fail as soon as the connection is lost. A request that times out names
        the server, the timeout and its key, and the server is pinged: one that does not answer that
        either is stopped (its process group too), and the next request starts it afresh.

        The request runs in the calling task (see :func:`~opencode_cli.loops.cancelled_by`): the end of
        the connection's task cancels it."""
        from ..errors import ToolError
        from ..loops import cancelled_by

        connection = self._task
        if connection is None:
            request.close()
            raise ToolError(f'MCP server "{self.name}" is not connected')
        if connection.done():
            request.close()
            raise self._went_away()

        def when_lost(cancel: Callable[[], None]) -> Callable[[], None]:
            def ended(_: object) -> None:
                cancel()

            connection.add_done_callback(ended)
            return lambda: connection.remove_done_callback(ended)

        try:
            return await cancelled_by(request, when_lost, self._went_away)
        except ToolError:  # the server went away
            raise
        except Exception as error:
            raise await self._request_error(error, method) from None

    def _went_away(self) -> Exception:
        from ..errors import ToolError

        reason = self.lost or "the server closed the connection"
        return ToolError(f'MCP server "{self.name}" went away during the call ({reason})')

    async def _request_error(self, error: Exception, method: str) -> Exception:
        """The model-facing :class:`ToolError` for a request that failed with ``error`` (a timeout pings
        the server first; a closed connection marks it lost)."""
        from mcp.types import REQUEST_TIMEOUT

        from ..errors import ToolError

        if self.auth is not None and self.auth.refused:  # the token is refused: sign in (again)
            signed_out, refusal = self.auth.signed_out, self.auth.take_refusal()
            if signed_out:
                self.lost = refusal
            return ToolError(f'MCP server "{self.name}" {refusal}')
        code = getattr(error, "code", None)
        if code == REQUEST_TIMEOUT or isinstance(error, TimeoutError):
            await self._check_alive()
            return ToolError(self.timed_out(method))
        if code == CONNECTION_CLOSED:  # the server went away under the request
            await self._settle()
            self.lost = self.lost or "the server closed the connection"
        if self.lost:
            return self._went_away()
        return ToolError(_request_error(error))

    def timed_out(self, method: str) -> str:
        """``MCP server "NAME" did not answer METHOD within N s (KEY)``."""
        within = f"{self.server.request_timeout:g} s ({self.server.timeout_key})"
        return f'MCP server "{self.name}" did not answer {method} within {within}'

    async def _check_alive(self) -> None:
        """After a request timed out: ping the server within :data:`PING_TIMEOUT`; if it does not answer,
        mark it failed and stop it (the serving task leaves at once, stopping its process group)."""
        session = self.session
        if session is None or self.lost:
            return
        try:
            async with asyncio.timeout(min(PING_TIMEOUT, self.server.request_timeout)):
                await session.send_ping()
            return
        except Exception:
            pass
        self.lost = (
            f"did not answer within {self.server.request_timeout:g} s, nor a ping after that; it was stopped"
        )
        self._kill = True
        if self._leave is not None:
            self._leave.set()
        await self._settle()

    async def _settle(self) -> None:
        """Wait (bounded) for the serving task to finish after the connection ended, so that the reason
        (an exit code) is known."""
        task = self._task
        if task is not None and not task.done():
            with contextlib.suppress(BaseException):
                await asyncio.wait({task}, timeout=STOP_TIMEOUT)

    async def list_resources(self) -> list[Any]:
        """Every resource of the server (all pages)."""
        return await self._pages("list_resources", "resources")

    async def list_resource_templates(self) -> list[Any]:
        """Every resource template of the server (all pages)."""
        return await self._pages("list_resource_templates", "resource_templates")

    async def read_resource(self, uri: str) -> Any:
        """Read one resource, bounded by the server's request timeout."""
        _sendable(uri, "the resource URI")
        session = self._live()
        return await self._unless_lost(
            asyncio.wait_for(session.read_resource(uri), self.server.request_timeout), "resources/read"
        )

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


def _describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in error.exceptions)
    return str(error) or type(error).__name__


class StartError(Exception):
    """A server that could not start, with the reason (no answer in time, its exit code, its garbage)."""


class _Closed(Exception):
    """The connection ended without being asked to (the server exited, or it was stopped as hung)."""


def plural(count: int, word: str) -> str:
    """``1 tool``, ``2 tools``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


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


def _sendable(value: Any, what: str) -> None:
    """Refuse a request the SDK could not write (its JSON must be Unicode: a lone surrogate is not),
    with an error that says why, rather than a request that is never sent and never answered."""
    from ..arguments import hostile_value
    from ..errors import ToolError

    problem = hostile_value({"value": value})
    if problem is not None:
        where = problem.removeprefix('["value"]').lstrip(": ") or problem
        raise ToolError(f"Cannot send {what} to the MCP server: {where}")
