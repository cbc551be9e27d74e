"""The MCP resource tools: ``list_mcp_resources``, ``list_mcp_resource_templates``, ``read_mcp_resource``.

Core spec §6.1 ("MCP resource tools"); they ask the ``read`` permission (§8.4) on ``mcp:<server>:*`` /
``mcp:<server>:<uri>`` patterns. OpenCode offers them only when some connected server advertises the
``resources`` capability; deciding that is the caller's job (:meth:`ResourceServers.resource_servers`
is non-empty).

The tools parse their arguments themselves, as OpenCode does (no schema validation): arguments that are
not an object count as ``{}``; ``server``/``uri`` must be strings when present, and an empty string or
``null`` counts as absent. Like OpenCode's MCP layer, a server whose listing fails adds nothing to a
list, a failed read reports ``Failed to read MCP resource: …``, and within one server a later item with
the same URI (template) replaces an earlier one. The truncation of the output is done by
:meth:`Tool.run`; ``tool.execute.before`` is run by the session before the tool, not here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..contract import Tool
from ..errors import ToolError
from ..results import Attachment, ToolResult
from ..toolspec import ToolSource
from .content import is_record, js_stringify, resource_pieces, to_json, wire_field
from .uris import normalize_uri

if TYPE_CHECKING:
    from ..context import ToolContext

LIST_RESOURCES = "list_mcp_resources"
LIST_RESOURCE_TEMPLATES = "list_mcp_resource_templates"
READ_RESOURCE = "read_mcp_resource"

LIST_RESOURCES_DESCRIPTION = (
    "Lists resources provided by connected MCP servers. Resources provide context such as files, "
    "database schemas, or application-specific information."
)
LIST_RESOURCE_TEMPLATES_DESCRIPTION = (
    "Lists resource templates provided by connected MCP servers. Resource templates are parameterized "
    "resources that can be read after filling in their URI template."
)
READ_RESOURCE_DESCRIPTION = (
    "Read a specific resource from an MCP server using the server name and resource URI. The URI is an "
    "MCP identifier and does not need to be a file URL."
)


#: The property descriptions are ours: the spec gives the shapes (core §6.1), not these texts.
_SERVER_FILTER = "Only this server's {what}; leave it out for those of every connected server."


def list_resources_schema() -> dict[str, Any]:
    """The JSON Schema of ``list_mcp_resources`` (before ``ProviderTransform.schema``)."""
    return {
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": _SERVER_FILTER.format(what="resources")},
        },
        "additionalProperties": False,
    }


def list_resource_templates_schema() -> dict[str, Any]:
    """The JSON Schema of ``list_mcp_resource_templates`` (before ``ProviderTransform.schema``); unlike the
    other two, the spec gives it no ``additionalProperties: false``."""
    return {
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": _SERVER_FILTER.format(what="resource templates")},
        },
    }


def read_resource_schema() -> dict[str, Any]:
    """The JSON Schema of ``read_mcp_resource`` (before ``ProviderTransform.schema``)."""
    return {
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "The connected MCP server that has the resource."},
            "uri": {"type": "string", "description": "The resource's URI, as the listing gives it."},
        },
        "required": ["server", "uri"],
        "additionalProperties": False,
    }


class ResourceServers(Protocol):
    """What the resource tools need from the MCP layer."""

    def resource_servers(self) -> list[str]:
        """The connected servers that advertise the ``resources`` capability."""
        ...

    def connected(self, server: str) -> bool:
        """Whether ``server`` is connected (with or without the ``resources`` capability)."""
        ...

    async def list_resources(self, server: str) -> list[Any]:
        """The server's resources (``mcp.types.Resource``, every page)."""
        ...

    async def list_resource_templates(self, server: str) -> list[Any]:
        """The server's resource templates (``mcp.types.ResourceTemplate``, every page)."""
        ...

    async def read_resource(self, server: str, uri: str) -> Any:
        """The ``ReadResourceResult`` for ``uri`` (``None`` or an exception when it cannot be read)."""
        ...


# -- argument parsing ------------------------------------------------------------------------------------


def _record(args: Any) -> Mapping[str, Any]:
    return args if isinstance(args, Mapping) else {}


def optional_string(args: Any, key: str) -> str | None:
    """``args[key]`` as OpenCode reads it: absent, ``null`` or ``""`` -> ``None``; not a string -> error."""
    value = _record(args).get(key)
    if value is None or (isinstance(value, str) and value == ""):
        return None
    if not isinstance(value, str):
        raise ToolError(f"{key} must be a string")
    return value


def required_string(args: Any, key: str) -> str:
    """Like :func:`optional_string`, but a missing value is the error ``{key} is required``."""
    value = optional_string(args, key)
    if not value:
        raise ToolError(f"{key} is required")
    return value


# -- ordering --------------------------------------------------------------------------------------------


def _collation_key() -> Callable[[str], Any]:
    from ..collate import sort_key

    return sort_key


def sorted_servers(names: list[str]) -> list[str]:
    """Server names in ``localeCompare`` order, as OpenCode sorts them."""
    return sorted(names, key=_collation_key())


def _js_text(value: Any) -> str:
    """``String(value)`` for the values a key is built from (``undefined`` when absent)."""
    return "undefined" if value is None else value if isinstance(value, str) else js_stringify(value)


def unsupported(server: str, available: list[str]) -> str:
    """The error for a ``server`` argument that is not a resource server."""
    message = f'MCP server "{server}" does not support resources'
    if available:
        message += f". Available resource servers: {', '.join(available)}"
    return message


# -- the tools -------------------------------------------------------------------------------------------


class _ResourceTool(Tool):
    """A resource tool: its own argument parsing instead of schema validation."""

    def __init__(self, servers: ResourceServers, source: ToolSource | None = None) -> None:
        super().__init__(source=source or ToolSource("builtin"))
        self.servers = servers

    def validate(self, args: Any) -> Any:
        """The raw arguments: OpenCode parses them in ``execute`` (see :func:`optional_string`)."""
        return args


class _ListTool(_ResourceTool):
    """``list_mcp_resources`` and ``list_mcp_resource_templates`` differ only in these attributes."""

    key_field: tuple[str, str] = ("uri", "uri")
    output_key = ""
    heading = ""

    def fetch(self, server: str) -> Awaitable[list[Any]]:
        """The items of one server (resources or resource templates)."""
        raise NotImplementedError

    async def execute(self, params: Any, ctx: ToolContext) -> ToolResult:
        """List the items of every resource server, or of the ``server`` argument."""
        server = optional_string(params, "server")
        available = sorted_servers(list(self.servers.resource_servers()))
        if server and server not in available:
            raise ToolError(unsupported(server, available))
        patterns = [f"mcp:{server}:*"] if server else [f"mcp:{name}:*" for name in available]
        await ctx.ask("read", patterns, always=list(patterns), metadata={"server": server} if server else {})

        targets = [server] if server else available
        listed = await asyncio.gather(*(self.fetch(name) for name in targets), return_exceptions=True)
        name, wire = self.key_field
        entries: list[tuple[str, dict[str, Any]]] = []
        for target, items in zip(targets, listed, strict=True):
            if isinstance(items, BaseException):
                if not isinstance(items, Exception):
                    raise items
                continue  # OpenCode logs the failure and lists nothing for that server
            by_key: dict[Any, dict[str, Any]] = {}
            for item in items or []:
                if is_record(item):
                    by_key[_js_text(wire_field(item, name, wire))] = to_json(item)
            entries.extend((target, data) for data in by_key.values())

        collate = _collation_key()

        def order(entry: tuple[str, dict[str, Any]]) -> Any:
            client, data = entry
            return collate(f"{client}\0{_js_text(data.get('name'))}\0{_js_text(data.get(wire))}")

        formatted = []
        for client, data in sorted(entries, key=order):
            data.pop("client", None)
            data["server"] = client
            formatted.append(data)
        metadata: dict[str, Any] = {"count": len(formatted), "servers": available}
        if server:
            metadata["server"] = server
        return ToolResult(
            output=js_stringify({self.output_key: formatted}, indent=2),
            title=f"{self.heading}: {server}" if server else self.heading,
            metadata=metadata,
        )


class ListResourcesTool(_ListTool):
    """``list_mcp_resources``: the resources of the connected MCP servers, as pretty JSON."""

    id = LIST_RESOURCES
    description = LIST_RESOURCES_DESCRIPTION
    key_field = ("uri", "uri")
    output_key = "resources"
    heading = "MCP resources"

    def __init__(self, servers: ResourceServers, source: ToolSource | None = None) -> None:
        self.json_schema = list_resources_schema()
        super().__init__(servers, source)

    def fetch(self, server: str) -> Awaitable[list[Any]]:
        """The server's resources."""
        return self.servers.list_resources(server)


class ListResourceTemplatesTool(_ListTool):
    """``list_mcp_resource_templates``: the resource templates of the connected MCP servers."""

    id = LIST_RESOURCE_TEMPLATES
    description = LIST_RESOURCE_TEMPLATES_DESCRIPTION
    key_field = ("uri_template", "uriTemplate")
    output_key = "resourceTemplates"
    heading = "MCP resource templates"

    def __init__(self, servers: ResourceServers, source: ToolSource | None = None) -> None:
        self.json_schema = list_resource_templates_schema()
        super().__init__(servers, source)

    def fetch(self, server: str) -> Awaitable[list[Any]]:
        """The server's resource templates."""
        return self.servers.list_resource_templates(server)


class ReadResourceTool(_ResourceTool):
    """``read_mcp_resource``: one resource's contents as text, binary ones as attachments."""

    id = READ_RESOURCE
    description = READ_RESOURCE_DESCRIPTION

    def __init__(self, servers: ResourceServers, source: ToolSource | None = None) -> None:
        self.json_schema = read_resource_schema()
        super().__init__(servers, source)

    async def execute(self, params: Any, ctx: ToolContext) -> ToolResult:
        """Read ``uri`` from ``server`` after asking ``read`` on ``mcp:<server>:<uri>``, the URI normalised
        (:func:`~opencode_cli.mcp.uris.normalize_uri`): the normalised URI is what is asked about and read.
        One whose ``..`` climbs above its root is asked about as written, and also as ``../<uri>``, so
        that a rule allowing a prefix of it never allows it silently."""
        server = required_string(params, "server")
        uri = required_string(params, "uri")
        if not self.servers.connected(server):
            raise ToolError(f'MCP server "{server}" is not connected')
        if server not in self.servers.resource_servers():
            raise ToolError(f'MCP server "{server}" does not support resources')
        uri, climbs = normalize_uri(uri)
        patterns = [f"mcp:{server}:{uri}"]
        if climbs:  # asked as written, and as climbing out: no rule for a prefix of it allows it
            patterns.append(f"mcp:{server}:{CLIMBS}{uri}")
        await ctx.ask(
            "read",
            patterns,
            always=[f"mcp:{server}:*"],
            metadata={"server": server, "uri": uri},
        )
        try:
            content = await self.servers.read_resource(server, uri)
        except Exception:
            content = None  # OpenCode logs the failure and reads nothing
        if content is None:
            raise ToolError(f"Failed to read MCP resource: {server}/{uri}")

        contents = wire_field(content, "contents")
        items = [
            item
            for item in (contents if isinstance(contents, list | tuple) else [contents])
            if is_record(item)
        ]
        attachments: list[Attachment] = []
        pieces = resource_pieces(items, attachments, uri=uri)
        return ToolResult(
            output="\n\n".join(pieces) or f"MCP resource {uri} from {server} returned no contents.",
            title=f"MCP resource: {uri}",
            metadata={"server": server, "uri": uri, "contents": len(items), "attachments": len(attachments)},
            attachments=attachments,
        )


#: What a climbing URI is prefixed with in its second pattern.
CLIMBS = "../"


def resource_tools(servers: ResourceServers, *, source: ToolSource | None = None) -> list[Tool]:
    """The three resource tools, working against ``servers`` (source: built-in unless given)."""
    return [
        ListResourcesTool(servers, source),
        ListResourceTemplatesTool(servers, source),
        ReadResourceTool(servers, source),
    ]
