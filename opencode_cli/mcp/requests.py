"""Requests to a connected MCP server: its tools' calls and its resources, each bounded, each ended at once
when the connection is lost.

:class:`Requests` (``connection.requests``) makes them for :class:`~.connection.McpConnection`. A tool
call asks for progress; its request timeout restarts with each report, up to the total bound
(``maxTotalTimeout``); a tool that declares ``taskSupport = "required"`` runs as a task (:mod:`.tasks`).
A request that times out names the server, the timeout and its key; the server is then pinged, and one that
does not answer is stopped as hung (the connection is ``lost``: the next call connects again). Any other
failure is worded as the TypeScript SDK words it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import message_of
from .relay import ProgressSink

if TYPE_CHECKING:
    from .connection import McpConnection

#: The JSON-RPC error code the SDK gives a request whose connection closed (``mcp.types.CONNECTION_CLOSED``).
CONNECTION_CLOSED = -32000
#: The JSON-RPC error code of a request the server answers only once the user has opened some pages
#: (``URLElicitationRequiredError``; its ``data.elicitations`` are URL-mode elicitations).
URL_ELICITATION_REQUIRED = -32042
#: Seconds a server gets to answer a ping after a request timed out, before it is taken as hung.
PING_TIMEOUT = 2.0


class Requests:
    """The requests a connection makes to its server (its session, while it is connected)."""

    def __init__(self, connection: McpConnection) -> None:
        self.connection = connection

    def _live(self) -> Any:
        connection = self.connection
        if connection.session is None or connection.lost:
            from ..errors import ToolError

            lost = connection.lost
            raise ToolError(
                f'MCP server "{connection.name}" is not connected' + (f" ({lost})" if lost else "")
            )
        return connection.session

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        progress: ProgressSink | None = None,
        on_task: Callable[[str, str | None], None] | None = None,
    ) -> Any:
        """See :meth:`.McpConnection.call_tool`."""
        from . import tasks

        sendable(arguments, f"the arguments of {name}")
        session = self._live()
        connection = self.connection
        listed = next((tool for tool in connection.tools if tool.name == name), None)
        if listed is not None and tasks.required(listed, connection.capabilities):
            timeout = connection.server.request_timeout
            return await self._unless_lost(
                tasks.call_as_task(session, name, arguments, timeout, on_task), "tools/call"
            )
        return await self._unless_lost(self._call_tool(session, name, arguments, progress), "tools/call")

    async def _call_tool(
        self, session: Any, name: str, arguments: dict[str, Any], progress: ProgressSink | None
    ) -> Any:
        loop = asyncio.get_running_loop()
        server = self.connection.server
        wait = server.request_timeout
        deadline = loop.time() + server.total_timeout
        cut_at_total = False
        try:
            async with asyncio.timeout(wait) as timer:

                async def reported(value: float, total: float | None, message: str | None) -> None:
                    nonlocal cut_at_total
                    cut_at_total = loop.time() + wait >= deadline  # the next cut is the total bound's
                    timer.reschedule(min(loop.time() + wait, deadline))
                    if progress is not None:
                        with contextlib.suppress(Exception):
                            progress(value, total, message)

                # a progress callback makes the SDK send a progress token with the call
                return await session.call_tool(name, arguments, progress_callback=reported)
        except TimeoutError:
            if cut_at_total:
                raise _TotalTimeout from None
            raise

    async def list_resources(self) -> list[Any]:
        """Every resource of the server (all pages)."""
        return await self._pages("list_resources", "resources")

    async def list_resource_templates(self) -> list[Any]:
        """Every resource template of the server (all pages)."""
        return await self._pages("list_resource_templates", "resource_templates")

    async def read_resource(self, uri: str) -> Any:
        """Read one resource, bounded by the server's request timeout."""
        sendable(uri, "the resource URI")
        session = self._live()
        timeout = self.connection.server.request_timeout
        return await self._unless_lost(
            asyncio.wait_for(session.read_resource(uri), timeout), "resources/read"
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

    # -- when a request fails --------------------------------------------------------------------------

    async def _unless_lost(self, request: Any, method: str) -> Any:
        """Await ``request``, or fail as soon as the connection is lost. A request that times out names
        the server, the timeout and its key, and the server is pinged: one that does not answer that
        either is stopped (its process group too), and the next request starts it afresh.

        The request runs in the calling task (see :func:`~opencode_cli.loops.cancelled_by`): the end of
        the connection's task cancels it."""
        from ..errors import ToolError
        from ..loops import cancelled_by

        serving = self.connection.task
        if serving is None:
            request.close()
            raise ToolError(f'MCP server "{self.connection.name}" is not connected')
        if serving.done():
            request.close()
            raise self._went_away()

        def when_lost(cancel: Callable[[], None]) -> Callable[[], None]:
            def ended(_: object) -> None:
                cancel()

            def taken_back() -> None:
                serving.remove_done_callback(ended)

            serving.add_done_callback(ended)
            return taken_back

        try:
            return await cancelled_by(request, when_lost, self._went_away)
        except ToolError:  # the server went away
            raise
        except Exception as error:
            raise await self._request_error(error, method) from None

    def _went_away(self) -> Exception:
        from ..errors import ToolError

        reason = self.connection.lost or "the server closed the connection"
        return ToolError(f'MCP server "{self.connection.name}" went away during the call ({reason})')

    async def _request_error(self, error: Exception, method: str) -> Exception:
        """The model-facing :class:`ToolError` for a request that failed with ``error`` (a timeout pings
        the server first; a closed connection marks it lost)."""
        from mcp.types import REQUEST_TIMEOUT

        from ..errors import ToolError

        connection = self.connection
        auth = connection.auth
        if auth is not None and auth.refused:  # the token is refused: sign in (again)
            signed_out, refusal = auth.signed_out, auth.take_refusal()
            if signed_out:
                connection.lost = refusal
            return ToolError(f'MCP server "{connection.name}" {refusal}')
        if isinstance(error, _TotalTimeout):  # it kept reporting progress: alive, only too long
            return ToolError(self.cut_short(method))
        code = getattr(error, "code", None)
        if code == URL_ELICITATION_REQUIRED:  # the user is to open pages: the call's asks deliver them
            from .asks import UrlElicitationRequired

            return UrlElicitationRequired.of(
                connection.name, _request_error(error), getattr(error, "data", None)
            )
        if code == REQUEST_TIMEOUT or isinstance(error, TimeoutError):
            await self._check_alive()
            return ToolError(self.timed_out(method))
        if code == CONNECTION_CLOSED:  # the server went away under the request
            await connection.await_end()
            connection.lost = connection.lost or "the server closed the connection"
        if connection.lost:
            return self._went_away()
        return ToolError(_request_error(error))

    def timed_out(self, method: str) -> str:
        """``MCP server "NAME" did not answer METHOD within N s (KEY)``."""
        server = self.connection.server
        within = f"{server.request_timeout:g} s ({server.timeout_key})"
        return f'MCP server "{self.connection.name}" did not answer {method} within {within}'

    def cut_short(self, method: str) -> str:
        """``MCP server "NAME" did not finish METHOD within N s (KEY), though it kept reporting
        progress``: the total bound (``maxTotalTimeout``) cut a call its progress had kept going."""
        server = self.connection.server
        within = f"{server.total_timeout:g} s ({server.total_timeout_key})"
        return (
            f'MCP server "{self.connection.name}" did not finish {method} within {within}, '
            "though it kept reporting progress"
        )

    async def _check_alive(self) -> None:
        """After a request timed out: ping the server within :data:`PING_TIMEOUT`; if it does not answer,
        the connection is abandoned (its task leaves at once, stopping its process group)."""
        connection = self.connection
        session = connection.session
        if session is None or connection.lost:
            return
        timeout = connection.server.request_timeout
        try:
            async with asyncio.timeout(min(PING_TIMEOUT, timeout)):
                await session.send_ping()
            return
        except Exception:
            pass
        await connection.abandon(
            f"did not answer within {timeout:g} s, nor a ping after that; it was stopped"
        )


class _TotalTimeout(TimeoutError):
    """A tool call that kept reporting progress ran into its total bound (``maxTotalTimeout``)."""


def _request_error(error: BaseException) -> str:
    """A failed request as the TypeScript SDK words it (``MCP error -32001: Request timed out``)."""
    code = getattr(error, "code", None)
    if isinstance(code, int) and hasattr(error, "message"):
        said = str(error.message)
        prefix = f"MCP error {code}: "
        return said if said.startswith(prefix) else prefix + said  # a TypeScript server's message has it
    return message_of(error)


def sendable(value: Any, what: str) -> None:
    """Refuse a request the SDK could not write (its JSON must be Unicode: a lone surrogate is not),
    with an error that says why, rather than a request that is never sent and never answered."""
    from ..arguments import hostile_value
    from ..errors import ToolError

    problem = hostile_value({"value": value})
    if problem is not None:
        where = problem.removeprefix('["value"]').lstrip(": ") or problem
        raise ToolError(f"Cannot send {what} to the MCP server: {where}")
