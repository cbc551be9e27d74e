"""An MCP server (stdio) whose tools ask the client in the middle of a call: ``book`` elicits a form
(a required name, a number with a default, an enum, a boolean with a default, an optional note),
``visit`` a URL-mode elicitation, ``authorize`` refuses the call with ``-32042`` (URL elicitation
required), ``haiku`` a sampling request (50 tokens at most). Each returns what it
got back, as text."""

import warnings
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp.types import ElicitRequestURLParams, SamplingMessage, TextContent
from pydantic import BaseModel, Field

warnings.simplefilter("ignore")  # sampling is deprecated in the newest revision; it is still asked
mcp = MCPServer("asking", log_level="WARNING")


class Booking(BaseModel):
    name: str = Field(description="who the table is for")
    guests: int = Field(default=2, description="how many people")
    meal: Literal["fish", "pasta"] = "pasta"
    terrace: bool = Field(default=False, description="sit outside")
    note: str | None = None


@mcp.tool(structured_output=False)
async def book(ctx: Context) -> str:
    """Book a table, asking the user for the details."""
    answer = await ctx.elicit("Book a table for tonight?", Booking)
    if answer.action != "accept":
        return f"booking: {answer.action}"
    return "booking: accept " + answer.data.model_dump_json()


@mcp.tool(structured_output=False)
async def visit(ctx: Context) -> str:
    """Send the user to a page."""
    answer = await ctx.elicit_url("Confirm on the shop's page", "https://shop.example/confirm?id=7", "el-7")
    return f"visit: {answer.action}"


@mcp.tool(structured_output=False)
def authorize() -> str:
    """Refuse the call until the user has authorized it in a browser (-32042, URL elicitation required)."""
    page = ElicitRequestURLParams(
        message="Authorize access to your calendar",
        url="https://auth.example/authorize?s=9",
        elicitation_id="au-9",
    )
    # worded as a TypeScript server words it: its McpError's message carries the code already
    raise UrlElicitationRequiredError(
        [page], message="MCP error -32042: This request requires browser-based authorization."
    )


@mcp.tool(structured_output=False)
async def haiku(topic: str, ctx: Context) -> str:
    """A haiku written by the client's model."""
    result = await ctx.session.create_message(
        [
            SamplingMessage(
                role="user", content=TextContent(type="text", text=f"Write a haiku about {topic}.")
            )
        ],
        max_tokens=50,
        system_prompt="You are a poet.",
    )
    text = result.content.text if isinstance(result.content, TextContent) else str(result.content)
    return f"haiku ({result.model}): {text}"


mcp.run("stdio")
