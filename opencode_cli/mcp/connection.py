"""One MCP server as a service of the project: started (or connected) once, shared, stopped at the end.

The SDK's transports and its ``ClientSession`` are context managers whose task groups must be entered
and left by one task, so a connection runs in a task of its own: :meth:`McpConnection.start` launches it
and waits until the server is initialized and its tools are listed (the timeout is kept inside that task,
so a server that never answers is stopped at it, to the second); :meth:`McpConnection.stop` tells it to
leave and waits. If the server goes away while connected (it exits, the stream breaks), the connection
marks itself ``lost`` at once and reports the change (its tools leave the registry); the next call asks
the project for a new connection.

:class:`McpConnection` is the face the project holds; its other jobs live in modules of their own:
:mod:`.opening` (the transport, OAuth and the SDK's session a start opens, and why a start failed) and
:mod:`.requests` (``connection.requests``: tool calls and resources, bounded, ended when the connection
is lost). What the server asks in the middle of a call goes to the call (:mod:`.asks`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import message_of
from ..services import Service
from .opening import StartError, connect, list_tools, start_failure
from .requests import ProgressSink, Requests

if TYPE_CHECKING:
    from .config import ServerConfig
    from .stdio import ServerProcess

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
        self.requests = Requests(self)
        """Its requests: tool calls and resources (:mod:`.requests`)."""

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
            await self.await_end()

    @property
    def ready(self) -> bool:
        """Whether the server was initialized and its tools listed (it stays so after a loss)."""
        return self._ready

    @property
    def task(self) -> asyncio.Task[None] | None:
        """The task that holds the connection (``None`` before :meth:`start` and after :meth:`stop`)."""
        return self._task

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
                        await connect(self, stack)
                        self.tools = await list_tools(self.session)
                except TimeoutError:
                    timed_out = True
                    raise
                self._ready = True
                ready.set_result(None)
                for note in self.notes:
                    self.report(note)
                await self._until_closed()
                if self._kill or not (self._leave is not None and self._leave.is_set()):
                    raise _Closed  # not a graceful leave: the process group is stopped at once
        except BaseException as error:
            if not ready.done():
                reason = start_failure(self, error, timed_out)
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

    def _lost_reason(self, error: BaseException) -> str:
        process = self.process
        if process is not None and process.exit_seen:
            return process.exited()
        if isinstance(error, _Closed):
            return "the server closed the connection"
        return message_of(error)

    def report(self, message: str) -> None:
        """Pass a one-line report about the server to ``warn``."""
        if self.warn is not None:
            self.warn(message)

    async def abandon(self, reason: str) -> None:
        """Give up a server that no longer answers: the connection is lost for ``reason``, its task
        leaves at once (a local server's process group is stopped) and is waited for (bounded)."""
        self.lost = reason
        self._kill = True
        if self._leave is not None:
            self._leave.set()
        await self.await_end()

    async def await_end(self) -> None:
        """Wait (bounded) for the connection's task to finish after the connection ended, so that the
        reason (an exit code) is known."""
        task = self._task
        if task is not None and not task.done():
            with contextlib.suppress(BaseException):
                await asyncio.wait({task}, timeout=STOP_TIMEOUT)

    # -- what the server sends: the SDK session's handlers (see .opening) ----------------------------

    async def on_message(self, message: Any) -> None:
        """Refresh the tools when the server says they changed (``notifications/tools/list_changed``)."""
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification) or getattr(message, "method", None) == (
            "notifications/tools/list_changed"
        ):
            with contextlib.suppress(Exception):
                self.tools = await list_tools(self.session)
                if self.on_change is not None:
                    self.on_change()

    @contextlib.contextmanager
    def answering(self, asks: Any) -> Any:
        """While the block runs (a call), the server's requests are answered by ``asks`` (a
        :class:`~.asks.CallAsks`) unless an older call is still running."""
        self._asks.append(asks)
        try:
            yield
        finally:
            self._asks.remove(asks)

    async def on_elicitation(self, context: Any, params: Any) -> Any:
        """``elicitation/create``: answered for the oldest call in progress; ``decline`` outside a call
        (nobody to ask)."""
        from mcp.types import ElicitResult

        if not self._asks:
            return ElicitResult(action="decline")
        return await self._asks[0].elicit(params)

    async def on_sampling(self, context: Any, params: Any) -> Any:
        """``sampling/createMessage``: answered with the model of the oldest call's session, once
        allowed; refused outside a call."""
        from mcp.types import INVALID_REQUEST, ErrorData

        if not self._asks:
            return ErrorData(
                code=INVALID_REQUEST, message="Sampling refused: no call of this server is in progress"
            )
        return await self._asks[0].sample(params)

    # -- requests: see .requests ------------------------------------------------------------------

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
        return await self.requests.call_tool(name, arguments, progress, on_task)

    async def list_resources(self) -> list[Any]:
        """Every resource of the server (all pages)."""
        return await self.requests.list_resources()

    async def list_resource_templates(self) -> list[Any]:
        """Every resource template of the server (all pages)."""
        return await self.requests.list_resource_templates()

    async def read_resource(self, uri: str) -> Any:
        """Read one resource, bounded by the server's request timeout."""
        return await self.requests.read_resource(uri)

    def timed_out(self, method: str) -> str:
        """``MCP server "NAME" did not answer METHOD within N s (KEY)``."""
        return self.requests.timed_out(method)


class _Closed(Exception):
    """The connection ended without being asked to (the server exited, or it was stopped as hung)."""


def plural(count: int, word: str) -> str:
    """``1 tool``, ``2 tools``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
