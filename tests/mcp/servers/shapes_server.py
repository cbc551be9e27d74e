"""An MCP server whose tool has the schema shapes Gemini needs converted: an optional property (``anyOf``
with a null branch), a ``$ref`` with a sibling ``description``, and arrays whose ``items`` has no type or
is missing, and an array-form nullable type (as hand-written schemas have it)."""

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

mcp = MCPServer("shapes", log_level="WARNING")


class Order(BaseModel):
    customer: str
    quantity: int


@mcp.tool(structured_output=False)
def shapes(
    order: Annotated[Order, Field(description="the order to place")],
    tags: list[Any],
    values: list[Any],
    note: str | None = None,
    label: str | None = None,
) -> str:
    """Describe what was given."""
    return f"{order.customer} {order.quantity} {tags} {values} {note} {label}"


# a hand-written schema: "values" is an array with no items at all
tool = mcp._tool_manager.get_tool("shapes")
assert tool is not None
del tool.parameters["properties"]["values"]["items"]
# and "label" is nullable the array-form way
tool.parameters["properties"]["label"] = {"type": ["string", "null"], "description": "a label, or null"}

mcp.run("stdio")
