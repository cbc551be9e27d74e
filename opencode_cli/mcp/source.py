"""MCP servers as sources of the registry: each server's tools, and the three resource tools.

An MCP tool's id is ``sanitize(server) + "_" + sanitize(tool)`` (every character outside
``[a-zA-Z0-9_-]`` becomes ``_``; at most 64 characters: see :mod:`~opencode_cli.mcp.naming`), its
permission is that id with the pattern ``*``, its schema is the
server's input schema made an object with ``additionalProperties: false`` (no §7.1 normalisation; the
provider profile still applies), and its arguments go to the server as given: the server validates them
(core spec §6.1). The resource tools are offered while a connected server has the ``resources``
capability.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..contract import Tool
from ..results import ToolResult
from ..sources import Contribution, Source
from ..toolspec import ToolSource
from .naming import MAX_ID, renamed, sanitize

__all__ = [
    "McpSource",
    "McpTool",
    "ResourceSource",
    "sanitize",
    "tool_schema",
]

if TYPE_CHECKING:
    from ..context import ToolContext
    from .config import ServerConfig
    from .relay import ProgressSink
    from .servers import McpServers


def tool_schema(input_schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The JSON Schema a model is shown for an MCP tool (core spec §6.1, "Conversion")."""
    schema = dict(input_schema or {})
    return {
        **schema,
        "type": "object",
        "properties": schema.get("properties") or {},
        "additionalProperties": False,
    }


class McpTool(Tool):
    """One tool of an MCP server, called through the project's connection to it."""

    def __init__(self, tool_id: str, definition: Any, server: str, servers: McpServers) -> None:
        super().__init__(
            tool_id,
            definition.description or "",
            json_schema=tool_schema(definition.input_schema),
            source=ToolSource("mcp", name=server),
        )
        self.remote_name = definition.name
        self.output_schema: dict[str, Any] | None = getattr(definition, "output_schema", None)
        """The tool's output schema, if it declares one (code mode types its return with it)."""
        self.definition = definition
        """The tool as its server listed it (``mcp serve`` passes its title and annotations on)."""
        self.server = server
        self._servers = servers

    def validate(self, args: Any) -> Any:
        """The arguments as sent (the server validates them); anything but an object is ``{}``. What no
        JSON-RPC message can carry (a lone surrogate, nesting past the limit) is refused here, with the
        built-in tools' invalid-arguments text."""
        from ..arguments import hostile_value
        from ..errors import InvalidArgumentsError

        if not isinstance(args, Mapping):
            return {}
        problem = hostile_value(args)
        if problem is not None:
            raise InvalidArgumentsError(self.id, problem)
        return dict(args)

    async def execute(self, params: Any, ctx: ToolContext) -> ToolResult:
        """Ask for the tool's permission, then call it on the server (reconnecting a lost server)."""
        from ..errors import ToolError
        from .asks import CallAsks, UrlElicitationRequired
        from .content import tool_result

        await ctx.ask(self.id, ["*"], always=["*"], metadata={})
        connection = await self._servers.connection(self.server)
        # progress reports arrive in the connection's task: the sink runs in the call's context
        relay = ctx.relay
        progress = relay.progress if relay is not None else None
        if progress is not None:
            progress = _in_this_context(progress)
        asks = CallAsks(self.server, ctx)
        with connection.answering(asks):  # its elicitation and sampling requests
            try:
                result = await connection.call_tool(
                    self.remote_name, params, progress, on_task=_task_progress(ctx)
                )
            except UrlElicitationRequired as required:  # pages to open first: the user is shown them
                raise ToolError(await required.deliver(asks)) from None
        keep = relay.result if relay is not None else None
        if keep is not None:
            keep(result)  # a host serving the call onwards passes the server's own result on
        mapped = tool_result(result)
        structured = getattr(result, "structured_content", None)
        if self.output_schema is not None and structured is not None:
            # what the output schema describes, for code mode (the model gets the text as before)
            mapped.metadata["structuredContent"] = structured
        return mapped


def _in_this_context(sink: ProgressSink) -> ProgressSink:
    """``sink`` run in a copy of the context current now (the call's), wherever it is called from."""
    context = contextvars.copy_context()

    def report(progress: float, total: float | None, message: str | None) -> None:
        context.run(sink, progress, total, message)

    return report


def _task_progress(ctx: ToolContext) -> Callable[[str, str | None], None]:
    """Report a task-augmented call's statuses as the call's live title (``working: Analyzing…``)."""

    def report(status: str, message: str | None) -> None:
        ctx.metadata(title=f"{status}: {message}" if message else status, metadata={"taskStatus": status})

    return report


class McpSource(Source):
    """The tools of one MCP server, as it last listed them.

    A server that connected once keeps its tools offered while it is not connected (it exited, was
    killed, is restarting): a call of one of them starts it again (and fails saying why when it cannot
    start). A server that never connected is offered nothing; its record says why."""

    kind = "mcp"

    def __init__(self, server: ServerConfig, servers: McpServers) -> None:
        self.server = server
        self.key = server.key
        self._servers = servers
        self._listed: list[Any] | None = None

    def build(self, previous: Contribution | None, warn: Callable[[str], None]) -> Contribution:
        """One :class:`McpTool` per listed tool; the record says whether the server is connected."""
        from ..plugins import PluginRecord

        record = PluginRecord(name=self.server.name, kind="mcp", location=self.server.describe())
        contribution = Contribution(self, record=record)
        connection = self._servers.peek(self.server.name)
        if connection is not None:
            self._listed = list(connection.tools)
        else:
            error = self._servers.error(self.server.name)
            if self._listed is not None:  # it connected before: its tools stay, the next call starts it
                record.warnings = [f"not connected ({error or 'stopped'}); the next call starts it again"]
            elif error is not None:
                record.fail(error)
                return contribution
            else:
                record.status, record.error = "blocked", "not connected"
                return contribution
        prefix = self._servers.prefix(self.server.name)
        if prefix.note is not None:
            warn(prefix.note)
        for definition in self._listed or []:
            made, why = renamed(prefix, definition.name)
            full = f"{prefix.prefix}_{sanitize(definition.name)}"
            if made != full:
                warn(f'MCP tool id "{full}" has more than {MAX_ID} characters; it is sent as "{made}"')
            contribution.tools.append((McpTool(made, definition, self.server.name, self._servers), None))
            if why is not None:
                contribution.renamed[made] = why
            record.tools.append(made)
        return contribution


class ResourceSource(Source):
    """``list_mcp_resources``, ``list_mcp_resource_templates`` and ``read_mcp_resource``, while a server
    that declared the ``resources`` capability when it connected is configured (whether or not it lists
    any, and while it restarts)."""

    kind = "mcp"
    key = "mcp:resources"

    def __init__(self, servers: McpServers) -> None:
        self._servers = servers
        self.configured: dict[str, ServerConfig] | None = None
        """The servers of the generation being built (set when the sources are listed for it)."""

    def build(self, previous: Contribution | None, warn: Callable[[str], None]) -> Contribution:
        """The three tools, or none."""
        from .resources import resource_tools

        contribution = Contribution(self)
        if self._servers.offers_resources(self.configured):
            stamp = ToolSource("mcp", name="resources")
            contribution.tools = [(tool.copy(source=stamp), None) for tool in resource_tools(self._servers)]
        return contribution
