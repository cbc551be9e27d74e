"""An MCP server (the SDK's ``MCPServer``) whose tools use what ``mcp serve`` must pass on unchanged: an
output schema with structured content, a title and annotations, each kind of content item, progress
reported for longer than the request timeout configured for it, and an argument declared as an
``Mcp-Param-*`` header (``x-mcp-header``)."""

import asyncio
import base64
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

mcp = MCPServer("faithful", log_level="WARNING")

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
WAV = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt ").decode()


class Sum(BaseModel):
    total: int
    parts: list[int]


@mcp.tool(
    title="Add numbers",
    annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True),
)
def add(a: int, b: int) -> Sum:
    """Add two numbers."""
    return Sum(total=a + b, parts=[a, b])


@mcp.tool()
def kinds() -> CallToolResult:
    """One content item of each kind."""
    return CallToolResult(
        content=[
            TextContent(type="text", text="some text"),
            ImageContent(type="image", data=PNG, mime_type="image/png"),
            AudioContent(type="audio", data=WAV, mime_type="audio/wav"),
            ResourceLink(
                type="resource_link", uri="file:///srv/report.pdf", name="report", mime_type="application/pdf"
            ),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri="memo://one", mime_type="text/plain", text="an embedded memo"
                ),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="memo://two", mime_type="application/zip", blob=WAV),
            ),
        ]
    )


@mcp.tool()
async def slow(steps: int, pause: float, ctx: Context) -> str:
    """Report progress ``steps`` times, ``pause`` seconds apart."""
    for step in range(1, steps + 1):
        await asyncio.sleep(pause)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"done after {steps} steps"


@mcp.tool()
async def silent(pause: float) -> str:
    """Wait ``pause`` seconds, reporting nothing."""
    await asyncio.sleep(pause)
    return "too late"


@mcp.tool()
def routed(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Say where the call was routed (its argument travels as the ``Mcp-Param-Region`` header too)."""
    return f"routed to {region}"


mcp.run("stdio")
