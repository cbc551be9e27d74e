"""An MCP server that is slow to stop: when its stdin closes it keeps running, and it ignores SIGTERM.

Each event is appended to the file named by ``$STUBBORN_LOG`` as ``<event> <name>``: ``eof`` when its
stdin closed, ``term`` when a SIGTERM came. Only SIGKILL ends it.
"""

import os
import signal
import sys
import time

from mcp.server.mcpserver import MCPServer

NAME = sys.argv[1]
mcp = MCPServer(f"stubborn-{NAME}", log_level="WARNING")


@mcp.tool()
def ping_me() -> str:
    """Answer "pong"."""
    return "pong"


def log(event: str) -> None:
    with open(os.environ["STUBBORN_LOG"], "a") as file:
        file.write(f"{event} {NAME}\n")


signal.signal(signal.SIGTERM, lambda *_: log("term"))
mcp.run("stdio")
log("eof")
while True:
    time.sleep(3600)
