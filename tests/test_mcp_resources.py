"""The MCP resource tools: list_mcp_resources, list_mcp_resource_templates, read_mcp_resource (core §6.1)."""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest

from opencode_cli.context import PermissionRequest, ToolContext
from opencode_cli.contract import Tool
from opencode_cli.errors import DeniedError, ToolError
from opencode_cli.mcp.resources import (
    LIST_RESOURCE_TEMPLATES_DESCRIPTION,
    LIST_RESOURCES_DESCRIPTION,
    READ_RESOURCE_DESCRIPTION,
    ResourceServers,
    resource_tools,
)
from opencode_cli.permission import permission_key
from opencode_cli.results import Attachment, ToolResult
from opencode_cli.truncate import Truncator

PNG = base64.b64encode(b"\x89PNG not really").decode()


@dataclass
class Server:
    """One server's test data: real MCP objects, or an exception its listing raises."""

    resources: list[types.Resource] | Exception = field(default_factory=list)
    templates: list[types.ResourceTemplate] | Exception = field(default_factory=list)
    reads: dict[str, types.ReadResourceResult | Exception | None] = field(default_factory=dict)
    capable: bool = True


class Servers:
    """A :class:`ResourceServers` over in-memory servers; records every call."""

    def __init__(self, servers: dict[str, Server]) -> None:
        self.servers = servers
        self.calls: list[tuple[str, ...]] = []

    def resource_servers(self) -> list[str]:
        return sorted(name for name, server in self.servers.items() if server.capable)

    def connected(self, server: str) -> bool:
        return server in self.servers

    async def list_resources(self, server: str) -> list[Any]:
        self.calls.append(("list_resources", server))
        items = self.servers[server].resources
        if isinstance(items, Exception):
            raise items
        return items

    async def list_resource_templates(self, server: str) -> list[Any]:
        self.calls.append(("list_resource_templates", server))
        items = self.servers[server].templates
        if isinstance(items, Exception):
            raise items
        return items

    async def read_resource(self, server: str, uri: str) -> Any:
        self.calls.append(("read_resource", server, uri))
        result = self.servers[server].reads.get(uri)
        if isinstance(result, Exception):
            raise result
        return result


@dataclass
class Asks:
    """The permission requests a context made; raises ``error`` when set."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    error: Exception | None = None

    async def __call__(self, request: PermissionRequest) -> None:
        self.requests.append(
            {
                "permission": request.permission,
                "patterns": request.patterns,
                "always": request.always,
                "metadata": request.metadata,
            }
        )
        if self.error is not None:
            raise self.error


@pytest.fixture
def asks() -> Asks:
    return Asks()


@pytest.fixture
def ctx(tool_context: Any, tmp_path: Path, asks: Asks) -> ToolContext:
    return tool_context(asker=asks, truncator=Truncator(tmp_path / "out"), directory=tmp_path)


def servers_fixture() -> Servers:
    return Servers(
        {
            "docs": Server(
                resources=[
                    types.Resource(name="readme", uri="docs://readme", mime_type="text/markdown"),
                    types.Resource(name="guide", uri="docs://guide/b", description="Part B"),
                    types.Resource(
                        name="guide", uri="docs://guide/a", annotations=types.Annotations(priority=1.0)
                    ),
                ],
                templates=[
                    types.ResourceTemplate(
                        name="page", uri_template="docs://page/{id}", mime_type="text/html"
                    ),
                    types.ResourceTemplate(name="chapter", uri_template="docs://chapter/{n}"),
                ],
                reads={
                    "docs://readme": types.ReadResourceResult(
                        contents=[
                            types.TextResourceContents(
                                uri="docs://readme", mime_type="text/markdown", text="# Hi"
                            ),
                            types.BlobResourceContents(
                                uri="docs://logo.png", mime_type="image/png", blob=PNG
                            ),
                            types.BlobResourceContents(uri="docs://data.bin", blob="YWJjZA=="),
                        ]
                    ),
                    "docs://empty": types.ReadResourceResult(contents=[]),
                    "docs://gone": None,
                    "docs://broken": RuntimeError("connection reset"),
                },
            ),
            "Assets": Server(resources=[types.Resource(name="logo", uri="assets://logo")]),
            "db": Server(
                resources=[types.Resource(name="schema", uri="db://schema", size=2048)],
                templates=[types.ResourceTemplate(name="table", uri_template="db://table/{name}")],
            ),
            "tools-only": Server(capable=False),
        }
    )


def tools(servers: ResourceServers) -> dict[str, Tool]:
    return {t.id: t for t in resource_tools(servers)}


def run(servers: Servers, tool_id: str, args: Any, ctx: ToolContext) -> ToolResult:
    return asyncio.run(tools(servers)[tool_id].run(args, ctx))


def fails(servers: Servers, tool_id: str, args: Any, ctx: ToolContext) -> str:
    with pytest.raises(ToolError) as raised:
        run(servers, tool_id, args, ctx)
    return str(raised.value)


# -- definitions -----------------------------------------------------------------------------------------


def test_the_three_tools() -> None:
    made = resource_tools(servers_fixture())
    assert [t.id for t in made] == ["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"]
    assert [t.description for t in made] == [
        "Lists resources provided by connected MCP servers. Resources provide context such as files, "
        "database schemas, or application-specific information.",
        "Lists resource templates provided by connected MCP servers. Resource templates are parameterized "
        "resources that can be read after filling in their URI template.",
        "Read a specific resource from an MCP server using the server name and resource URI. The URI is an "
        "MCP identifier and does not need to be a file URL.",
    ]
    assert [t.description for t in made] == [
        LIST_RESOURCES_DESCRIPTION,
        LIST_RESOURCE_TEMPLATES_DESCRIPTION,
        READ_RESOURCE_DESCRIPTION,
    ]
    assert {permission_key(t.id) for t in made} == {"read"}


def test_schemas() -> None:
    # the shapes of core §6.1's table: server optional (additionalProperties false but for the templates),
    # read requires server and uri; the property descriptions are ours
    made = {tool.id: tool for tool in resource_tools(Servers({}))}
    listing = made["list_mcp_resources"].schema()
    assert listing["type"] == "object" and listing["additionalProperties"] is False
    assert list(listing["properties"]) == ["server"] and listing["properties"]["server"]["type"] == "string"
    assert "required" not in listing
    templates = made["list_mcp_resource_templates"].schema()
    assert list(templates["properties"]) == ["server"] and "additionalProperties" not in templates
    read = made["read_mcp_resource"].schema()
    assert read["required"] == ["server", "uri"] and read["additionalProperties"] is False
    assert {name: prop["type"] for name, prop in read["properties"].items()} == {
        "server": "string",
        "uri": "string",
    }


def test_schemas_are_not_shared_between_instances() -> None:
    first, second = resource_tools(servers_fixture()), resource_tools(servers_fixture())
    first[2].schema()["properties"]["uri"]["type"] = "number"
    assert second[2].schema()["properties"]["uri"]["type"] == "string"


# -- list_mcp_resources ----------------------------------------------------------------------------------


def test_list_every_server(ctx: ToolContext, asks: Asks) -> None:
    servers = servers_fixture()
    result = run(servers, "list_mcp_resources", {}, ctx)
    assert result.title == "MCP resources"
    assert result.metadata == {"count": 5, "servers": ["Assets", "db", "docs"], "truncated": False}
    assert result.output == (
        "{\n"
        '  "resources": [\n'
        "    {\n"
        '      "name": "logo",\n'
        '      "uri": "assets://logo",\n'
        '      "server": "Assets"\n'
        "    },\n"
        "    {\n"
        '      "name": "schema",\n'
        '      "uri": "db://schema",\n'
        '      "size": 2048,\n'
        '      "server": "db"\n'
        "    },\n"
        "    {\n"
        '      "name": "guide",\n'
        '      "uri": "docs://guide/a",\n'
        '      "annotations": {\n'
        '        "priority": 1\n'
        "      },\n"
        '      "server": "docs"\n'
        "    },\n"
        "    {\n"
        '      "name": "guide",\n'
        '      "uri": "docs://guide/b",\n'
        '      "description": "Part B",\n'
        '      "server": "docs"\n'
        "    },\n"
        "    {\n"
        '      "name": "readme",\n'
        '      "uri": "docs://readme",\n'
        '      "mimeType": "text/markdown",\n'
        '      "server": "docs"\n'
        "    }\n"
        "  ]\n"
        "}"
    )
    assert asks.requests == [
        {
            "permission": "read",
            "patterns": ["mcp:Assets:*", "mcp:db:*", "mcp:docs:*"],
            "always": ["mcp:Assets:*", "mcp:db:*", "mcp:docs:*"],
            "metadata": {},
        }
    ]
    assert ("list_resources", "tools-only") not in servers.calls


def test_list_one_server(ctx: ToolContext, asks: Asks) -> None:
    servers = servers_fixture()
    result = run(servers, "list_mcp_resources", {"server": "db"}, ctx)
    assert result.title == "MCP resources: db"
    assert result.metadata == {
        "count": 1,
        "servers": ["Assets", "db", "docs"],
        "server": "db",
        "truncated": False,
    }
    assert json.loads(result.output) == {
        "resources": [{"name": "schema", "uri": "db://schema", "size": 2048, "server": "db"}]
    }
    assert asks.requests == [
        {"permission": "read", "patterns": ["mcp:db:*"], "always": ["mcp:db:*"], "metadata": {"server": "db"}}
    ]
    assert servers.calls == [("list_resources", "db")]


@pytest.mark.parametrize("args", [{"server": ""}, {"server": None}, None, "docs", ["docs"], 3])
def test_empty_or_non_object_arguments_list_everything(args: Any, ctx: ToolContext) -> None:
    result = run(servers_fixture(), "list_mcp_resources", args, ctx)
    assert result.title == "MCP resources"
    assert result.metadata["count"] == 5


@pytest.mark.parametrize("value", [5, False, 0, ["db"], {"name": "db"}])
def test_server_must_be_a_string(value: Any, ctx: ToolContext, asks: Asks) -> None:
    assert fails(servers_fixture(), "list_mcp_resources", {"server": value}, ctx) == "server must be a string"
    assert fails(servers_fixture(), "list_mcp_resource_templates", {"server": value}, ctx) == (
        "server must be a string"
    )
    assert asks.requests == []


def test_unknown_server(ctx: ToolContext, asks: Asks) -> None:
    expected = (
        'MCP server "tools-only" does not support resources. Available resource servers: Assets, db, docs'
    )
    assert fails(servers_fixture(), "list_mcp_resources", {"server": "tools-only"}, ctx) == expected
    assert fails(servers_fixture(), "list_mcp_resource_templates", {"server": "tools-only"}, ctx) == expected
    none = Servers({"tools-only": Server(capable=False)})
    assert (
        fails(none, "list_mcp_resources", {"server": "nope"}, ctx)
        == 'MCP server "nope" does not support resources'
    )
    assert asks.requests == []


def test_no_resource_server_asks_nothing_and_lists_nothing(ctx: ToolContext, asks: Asks) -> None:
    result = run(Servers({}), "list_mcp_resources", {}, ctx)
    assert result.output == '{\n  "resources": []\n}'
    assert result.metadata == {"count": 0, "servers": [], "truncated": False}
    assert asks.requests == [{"permission": "read", "patterns": [], "always": [], "metadata": {}}]


def test_sorted_by_server_name_and_uri_in_collation_order(ctx: ToolContext) -> None:
    servers = Servers(
        {
            "b": Server(
                resources=[
                    types.Resource(name="Zeta", uri="z://1"),
                    types.Resource(name="alpha", uri="a://2"),
                ]
            ),
            "a": Server(
                resources=[
                    types.Resource(name="same", uri="u://B"),
                    types.Resource(name="same", uri="u://a"),
                    types.Resource(name="Same", uri="u://c"),
                ]
            ),
        }
    )
    listed = json.loads(run(servers, "list_mcp_resources", {}, ctx).output)["resources"]
    assert [(r["server"], r["name"], r["uri"]) for r in listed] == [
        ("a", "same", "u://a"),
        ("a", "same", "u://B"),
        ("a", "Same", "u://c"),
        ("b", "alpha", "a://2"),
        ("b", "Zeta", "z://1"),
    ]


def test_failed_listing_is_skipped_and_duplicate_uris_collapse(ctx: ToolContext) -> None:
    servers = Servers(
        {
            "bad": Server(resources=RuntimeError("boom")),
            "good": Server(
                resources=[
                    types.Resource(name="old", uri="g://1"),
                    types.Resource(name="other", uri="g://2"),
                    types.Resource(name="new", uri="g://1"),
                ]
            ),
        }
    )
    result = run(servers, "list_mcp_resources", {}, ctx)
    assert json.loads(result.output)["resources"] == [
        {"name": "new", "uri": "g://1", "server": "good"},
        {"name": "other", "uri": "g://2", "server": "good"},
    ]
    assert result.metadata["servers"] == ["bad", "good"]
    assert result.metadata["count"] == 2


def test_denied_ask_lists_nothing(ctx: ToolContext, asks: Asks) -> None:
    servers = servers_fixture()
    asks.error = DeniedError([{"permission": "read", "pattern": "mcp:docs:*", "action": "deny"}])
    with pytest.raises(DeniedError):
        run(servers, "list_mcp_resources", {"server": "docs"}, ctx)
    assert servers.calls == []


def test_long_listing_is_truncated_by_the_wrap(ctx: ToolContext) -> None:
    servers = Servers(
        {"big": Server(resources=[types.Resource(name=f"r{i}", uri=f"big://{i}") for i in range(600)])}
    )
    result = run(servers, "list_mcp_resources", {}, ctx)
    assert result.metadata["truncated"] is True
    assert result.metadata["count"] == 600
    assert Path(result.metadata["outputPath"]).read_text().startswith('{\n  "resources": [')
    assert "lines truncated..." in result.output


# -- list_mcp_resource_templates -------------------------------------------------------------------------


def test_list_templates(ctx: ToolContext, asks: Asks) -> None:
    result = run(servers_fixture(), "list_mcp_resource_templates", {}, ctx)
    assert result.title == "MCP resource templates"
    assert result.metadata == {"count": 3, "servers": ["Assets", "db", "docs"], "truncated": False}
    assert json.loads(result.output) == {
        "resourceTemplates": [
            {"name": "table", "uriTemplate": "db://table/{name}", "server": "db"},
            {"name": "chapter", "uriTemplate": "docs://chapter/{n}", "server": "docs"},
            {"name": "page", "uriTemplate": "docs://page/{id}", "mimeType": "text/html", "server": "docs"},
        ]
    }
    assert result.output.startswith('{\n  "resourceTemplates": [\n    {\n      "name": "table",')
    assert asks.requests[0]["patterns"] == ["mcp:Assets:*", "mcp:db:*", "mcp:docs:*"]


def test_list_templates_of_one_server(ctx: ToolContext, asks: Asks) -> None:
    servers = servers_fixture()
    result = run(servers, "list_mcp_resource_templates", {"server": "docs"}, ctx)
    assert result.title == "MCP resource templates: docs"
    assert result.metadata == {
        "count": 2,
        "servers": ["Assets", "db", "docs"],
        "server": "docs",
        "truncated": False,
    }
    assert list(json.loads(result.output)["resourceTemplates"][0]) == ["name", "uriTemplate", "server"]
    assert asks.requests == [
        {
            "permission": "read",
            "patterns": ["mcp:docs:*"],
            "always": ["mcp:docs:*"],
            "metadata": {"server": "docs"},
        }
    ]
    assert servers.calls == [("list_resource_templates", "docs")]


# -- read_mcp_resource -----------------------------------------------------------------------------------


def test_read(ctx: ToolContext, asks: Asks) -> None:
    result = run(servers_fixture(), "read_mcp_resource", {"server": "docs", "uri": "docs://readme"}, ctx)
    assert result.title == "MCP resource: docs://readme"
    assert result.output == (
        "Resource: docs://readme\nMIME: text/markdown\n# Hi\n\n"
        "[Binary MCP resource attached: docs://logo.png (image/png)]\n\n"
        "[Binary MCP resource omitted: docs://data.bin (application/octet-stream, 4 B) "
        "is not a supported attachment type]"
    )
    assert result.attachments == [
        Attachment(mime="image/png", url=f"data:image/png;base64,{PNG}", filename="docs://logo.png")
    ]
    assert result.metadata == {
        "server": "docs",
        "uri": "docs://readme",
        "contents": 3,
        "attachments": 1,
        "truncated": False,
    }
    assert asks.requests == [
        {
            "permission": "read",
            "patterns": ["mcp:docs:docs://readme"],
            "always": ["mcp:docs:*"],
            "metadata": {"server": "docs", "uri": "docs://readme"},
        }
    ]


def test_read_with_no_contents(ctx: ToolContext) -> None:
    result = run(servers_fixture(), "read_mcp_resource", {"server": "docs", "uri": "docs://empty"}, ctx)
    assert result.output == "MCP resource docs://empty from docs returned no contents."
    assert result.metadata == {
        "server": "docs",
        "uri": "docs://empty",
        "contents": 0,
        "attachments": 0,
        "truncated": False,
    }


@pytest.mark.parametrize("uri", ["docs://gone", "docs://broken", "docs://unknown"])
def test_failed_read(uri: str, ctx: ToolContext) -> None:
    message = fails(servers_fixture(), "read_mcp_resource", {"server": "docs", "uri": uri}, ctx)
    assert message == f"Failed to read MCP resource: docs/{uri}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "server is required"),
        (None, "server is required"),
        ("docs", "server is required"),
        ({"uri": "docs://readme"}, "server is required"),
        ({"server": "", "uri": "docs://readme"}, "server is required"),
        ({"server": None, "uri": None}, "server is required"),
        ({"server": "docs"}, "uri is required"),
        ({"server": "docs", "uri": ""}, "uri is required"),
        ({"server": 1, "uri": "docs://readme"}, "server must be a string"),
        ({"server": "docs", "uri": 7}, "uri must be a string"),
        ({"server": 1, "uri": 7}, "server must be a string"),
        ({"uri": 7}, "server is required"),
        ({"server": "nowhere", "uri": "x://1"}, 'MCP server "nowhere" is not connected'),
        ({"server": "tools-only", "uri": "x://1"}, 'MCP server "tools-only" does not support resources'),
    ],
)
def test_read_errors(args: Any, message: str, ctx: ToolContext, asks: Asks) -> None:
    servers = servers_fixture()
    assert fails(servers, "read_mcp_resource", args, ctx) == message
    assert asks.requests == []
    assert servers.calls == []


def test_denied_read_reads_nothing(ctx: ToolContext, asks: Asks) -> None:
    servers = servers_fixture()
    asks.error = ToolError("The user rejected permission to use this specific tool call.")
    with pytest.raises(ToolError, match="rejected"):
        run(servers, "read_mcp_resource", {"server": "docs", "uri": "docs://readme"}, ctx)
    assert servers.calls == []
