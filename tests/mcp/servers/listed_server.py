"""A real MCP server (the SDK's ``MCPServer``) whose tools are listed in a JSON file.

Run ``python listed_server.py stdio LIST.json``. ``LIST.json`` maps tool names to descriptions; each such
tool returns ``"<name> called"``. The tool ``refresh`` reads the file again, adds and removes tools to
match it, and sends ``notifications/tools/list_changed``. A new process reads the file at start, so what a
fresh process lists always equals what a refreshed one lists: the model-based test of issue 33 relies on
it. The server declares resources (one: ``listed://names``), so the resource tools come with it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolListChangedNotification

mcp = MCPServer("listed", version="1.0.0", log_level="WARNING")

# MCPServer does not advertise tools.listChanged; refresh sends the notification, so say so.
_create_options = mcp._lowlevel_server.create_initialization_options
mcp._lowlevel_server.create_initialization_options = lambda notification_options=None, *args, **kwargs: (
    _create_options(notification_options or NotificationOptions(tools_changed=True), *args, **kwargs)
)

LISTING = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("listed.json")
_added: set[str] = set()


def _read() -> dict[str, str]:
    try:
        data = json.loads(LISTING.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(name): str(text) for name, text in data.items()} if isinstance(data, dict) else {}


def _sync() -> None:
    """Make the tools match the file."""
    wanted = _read()
    for name in sorted(_added - set(wanted)):
        mcp.remove_tool(name)
        _added.discard(name)
    for name, description in wanted.items():
        if name in _added:
            mcp.remove_tool(name)

        def called(name: str = name) -> str:
            return f"{name} called"

        mcp.add_tool(lambda: called(), name=name, description=description, structured_output=False)
        _added.add(name)


@mcp.tool(structured_output=False)
async def refresh(ctx: Context) -> str:
    """Read the listing file again and say that the tools changed."""
    _sync()
    await ctx.session.send_notification(ToolListChangedNotification(), related_request_id=ctx.request_id)
    return "refreshed " + ", ".join(sorted(_added))


@mcp.resource("listed://names", mime_type="text/plain")
def names() -> str:
    """The names of the listed tools."""
    return "\n".join(sorted(_added))


if __name__ == "__main__":
    _sync()
    mcp.run("stdio")
