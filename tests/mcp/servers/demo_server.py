"""A real MCP server for the tests, built with the SDK's ``MCPServer``.

Run ``python demo_server.py stdio`` or ``python demo_server.py http PORT``: streamable HTTP on
``http://127.0.0.1:PORT/mcp`` (127.0.0.1 only); ``PORT`` 0 takes a free port. Once listening it prints
``READY <port>`` on stderr.

Tools: ``echo``, ``nested`` (a pydantic model: ``$defs``/``$ref`` and an ``enum`` in its schema), ``image``,
``embedded``, ``fail``, ``fail_silently``, ``structured`` (no content, only structured content), ``slow``,
``die`` (the process exits during the call), ``leave`` (it exits after answering),
``many_lines`` and ``add_tool`` (registers a tool, then sends
``notifications/tools/list_changed``). Resources: ``demo://readme``, ``demo://logo.png``, ``demo://huge.bin``
(just over 10 MiB) and the template ``demo://notes/{name}``.
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct
import sys
import zlib
from enum import StrEnum

from mcp.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
    ToolListChangedNotification,
)
from pydantic import BaseModel, Field


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid PNG of one colour (8-bit RGB, no filter)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PIXEL = _png(1, 1, (255, 0, 0))
LOGO = _png(4, 4, (0, 128, 255))
HUGE_SIZE = 10 * 1024 * 1024 + 10


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


mcp = MCPServer("demo", version="1.0.0", log_level="WARNING")

# MCPServer does not advertise tools.listChanged; add_tool sends the notification, so say so (handshake era).
_create_options = mcp._lowlevel_server.create_initialization_options
mcp._lowlevel_server.create_initialization_options = lambda notification_options=None, *args, **kwargs: (
    _create_options(notification_options or NotificationOptions(tools_changed=True), *args, **kwargs)
)


class Size(StrEnum):
    SMALL = "small"
    LARGE = "large"


class Item(BaseModel):
    name: str
    quantity: int = Field(ge=1)


class Order(BaseModel):
    customer: str
    size: Size
    items: list[Item]


@mcp.tool(structured_output=False)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@mcp.tool(structured_output=False)
def nested(order: Order) -> str:
    """Summarise an order (a nested model with an enum)."""
    items = ", ".join(f"{item.quantity} {item.name}" for item in order.items)
    return f"{order.customer}: {order.size.value}: {items}"


@mcp.tool()
def image() -> CallToolResult:
    """One PNG image, then the text "an image"."""
    return CallToolResult(
        content=[
            ImageContent(type="image", data=_b64(PIXEL), mime_type="image/png"),
            TextContent(type="text", text="an image"),
        ]
    )


@mcp.tool()
def embedded() -> CallToolResult:
    """Embedded resources: a text one, a PNG blob and a blob of an unsupported type."""
    return CallToolResult(
        content=[
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="demo://note", mime_type="text/plain", text="a note"),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="demo://pixel.png", mime_type="image/png", blob=_b64(PIXEL)
                ),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="demo://data.bin",
                    mime_type="application/octet-stream",
                    blob=_b64(b"\x00\x01\x02\x03"),
                ),
            ),
        ]
    )


@mcp.tool()
def fail() -> CallToolResult:
    """An error result whose text is "it broke"."""
    return CallToolResult(content=[TextContent(type="text", text="it broke")], is_error=True)


@mcp.tool()
def fail_silently() -> CallToolResult:
    """An error result with no content."""
    return CallToolResult(content=[], is_error=True)


@mcp.tool()
def structured() -> CallToolResult:
    """No content at all, only the structured content {"answer": 42}."""
    return CallToolResult(content=[], structured_content={"answer": 42})


@mcp.tool(structured_output=False)
async def slow(seconds: float) -> str:
    """Sleep, then return "done"."""
    await asyncio.sleep(seconds)
    return "done"


@mcp.tool()
def die() -> str:
    """The server process exits (code 3) before it answers."""
    os._exit(3)


@mcp.tool()
async def leave(code: int) -> str:
    """Answer "bye", then the process exits with ``code`` (a note on stderr first)."""
    print(f"demo: leaving with code {code}", file=sys.stderr, flush=True)
    asyncio.get_running_loop().call_later(0.1, os._exit, code)
    return "bye"


@mcp.tool(structured_output=False)
def many_lines(count: int) -> str:
    """Text of ``count`` lines: "line 1", "line 2"..."""
    return "\n".join(f"line {number}" for number in range(1, count + 1))


@mcp.tool(structured_output=False)
async def add_tool(name: str, ctx: Context) -> str:
    """Register a tool ``name`` (it returns "<name> called"), then tell the client that the tools changed."""

    def added() -> str:
        return f"{name} called"

    mcp.add_tool(added, name=name, description=f"A tool added at run time: {name}", structured_output=False)
    # On this request's stream (the POST's response over HTTP), so it reaches the client before the result.
    await ctx.session.send_notification(ToolListChangedNotification(), related_request_id=ctx.request_id)
    await ctx.notify_tools_changed()  # the 2026-07-28 era: subscriptions/listen streams
    return f"added {name}"


@mcp.resource("demo://readme", mime_type="text/markdown")
def readme() -> str:
    """A short markdown document."""
    return "# Demo"


@mcp.resource("demo://logo.png", mime_type="image/png")
def logo() -> bytes:
    """A 4x4 PNG."""
    return LOGO


@mcp.resource("demo://huge.bin", mime_type="application/pdf")
def huge() -> bytes:
    """A PDF blob just over 10 MiB once decoded."""
    head = b"%PDF-1.4\n"
    return head + b"\x00" * (HUGE_SIZE - len(head))


@mcp.resource("demo://notes/{name}", mime_type="text/plain")
def note(name: str) -> str:
    """A note by name."""
    return f"note {name}"


async def serve_http(port: int, sse: bool = False) -> None:
    """Serve streamable HTTP (or the older SSE transport) on 127.0.0.1; print ``READY <port>`` on stderr
    once listening."""
    import uvicorn

    app = mcp.sse_app(host="127.0.0.1") if sse else mcp.streamable_http_app(host="127.0.0.1")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started and not serving.done():
        await asyncio.sleep(0.02)
    if server.started:
        bound = server.servers[0].sockets[0].getsockname()[1]
        print(f"READY {bound}", file=sys.stderr, flush=True)
    await serving


def main(argv: list[str]) -> None:
    match argv:
        case ["stdio"]:
            mcp.run("stdio")
        case ["http", port] if port.isdigit():
            asyncio.run(serve_http(int(port)))
        case ["sse", port] if port.isdigit():
            asyncio.run(serve_http(int(port), sse=True))
        case _:
            sys.exit("usage: demo_server.py stdio | demo_server.py http PORT | demo_server.py sse PORT")


if __name__ == "__main__":
    main(sys.argv[1:])
