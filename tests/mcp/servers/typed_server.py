"""An MCP server whose tools declare output schemas as the ``mcp`` SDK makes them: ``add`` returns a bare
``int`` (the SDK wraps it: ``{"result": int}``), ``point`` a model (unwrapped: ``{"x": int, "y": int}``),
``listed`` a list (wrapped again), ``plain`` no output schema at all."""

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

mcp = MCPServer("typed", log_level="WARNING")


class Point(BaseModel):
    x: int
    y: int


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
def point(x: int, y: int) -> Point:
    """A point."""
    return Point(x=x, y=y)


@mcp.tool()
def listed(count: int) -> list[int]:
    """The numbers below count."""
    return list(range(count))


@mcp.tool(structured_output=False)
def plain(text: str) -> str:
    """Text back, with no output schema."""
    return text


mcp.run("stdio")
