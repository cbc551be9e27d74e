"""A served call's outcome as MCP content, and a wire tool as an MCP tool."""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote_to_bytes

import mcp_types as types

from ...results import unicode_text

if TYPE_CHECKING:
    from ...results import Attachment
    from ...session import ToolPart, WireTool


def tool_for(wire: WireTool, upstream: Any = None) -> types.Tool:
    """The MCP tool for one offered tool: its name, description and wire schema; for a configured MCP
    server's tool (``upstream``: its definition there) also what the server said of it: its title,
    output schema, annotations and icons."""
    tool = types.Tool(name=wire.name, description=wire.description, input_schema=wire.parameters)
    if upstream is not None:
        tool.title = getattr(upstream, "title", None)
        tool.output_schema = getattr(upstream, "output_schema", None)
        tool.annotations = getattr(upstream, "annotations", None)
        tool.icons = getattr(upstream, "icons", None)
    return tool


def passes_on(part: ToolPart, upstream: Any) -> bool:
    """Whether a proxied call's result is its server's own: it completed with the server's success, or
    failed with the server's error (and nothing after the server, a hook or an interrupt, changed that)."""
    from ...session import Outcome

    if getattr(upstream, "is_error", False):
        return part.outcome == Outcome.FAILED
    return part.outcome == Outcome.COMPLETED


def passed_on(upstream: Any) -> types.CallToolResult:
    """A configured MCP server's result as it sent it: every content item (text, image, audio, resource
    link, embedded resource), the structured content and the error flag."""
    return types.CallToolResult(
        content=list(upstream.content),
        structured_content=upstream.structured_content,
        is_error=bool(upstream.is_error),
    )


def result_for(part: ToolPart, note: str = "") -> types.CallToolResult:
    """What the client gets for a call: the text the model would see (``is_error`` for a failed call and
    for one rerouted to ``invalid``), then each attachment; ``note`` is added to the text."""
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=unicode_text(part.text + note))]
    content.extend(attachment_content(attachment) for attachment in part.attachments)
    return types.CallToolResult(content=content, is_error=part.status == "error" or part.tool == "invalid")


def attachment_content(attachment: Attachment) -> types.ContentBlock:
    """An image as image content, any other file (a PDF…) as an embedded resource; an attachment that is
    not a ``data:`` URL as a link to it."""
    decoded = _data_url(attachment.url)
    name = attachment.filename or attachment.id or "attachment"
    if decoded is None:
        return types.ResourceLink(
            type="resource_link", uri=attachment.url, name=name, mime_type=attachment.mime
        )
    mime, data = decoded
    mime = attachment.mime or mime
    if mime.startswith("image/"):
        return types.ImageContent(type="image", data=data, mime_type=mime)
    uri = f"opencode://attachment/{quote(attachment.id or 'file')}/{quote(name)}"
    return types.EmbeddedResource(
        type="resource", resource=types.BlobResourceContents(uri=uri, mime_type=mime, blob=data)
    )


def _data_url(url: str) -> tuple[str, str] | None:
    """``(mime, base64 data)`` of a ``data:`` URL, or ``None`` for any other URL."""
    if not url.startswith("data:") or "," not in url:
        return None
    header, _, payload = url[5:].partition(",")
    mime, *params = header.split(";")
    if "base64" in params:
        try:
            base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            return None
        return mime or "application/octet-stream", payload
    return mime or "text/plain", base64.b64encode(unquote_to_bytes(payload)).decode()
