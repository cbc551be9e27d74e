"""A naive file server over MCP (as many real ones are): ``file:///PATH`` reads ``ROOT/PATH``, dot segments
and percent-escapes included, with no check of its own. Run ``python rtsrv_server.py ROOT``."""

import sys
from pathlib import Path
from urllib.parse import unquote

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources.templates import ResourceSecurity

ROOT = Path(sys.argv[1])
mcp = MCPServer("rtsrv", log_level="WARNING")


@mcp.resource("file:///{+path}", security=ResourceSecurity(exempt_params={"path"}))
def read_file(path: str) -> str:
    """The file at ``ROOT/path``."""
    return (ROOT / unquote(path)).read_text()


mcp.run("stdio")
