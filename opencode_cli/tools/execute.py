"""``execute``: code mode's one tool, a Python script that calls the MCP tools (builtin-tools §15.3).

Registered only as a built-in that :mod:`opencode_cli.policy` offers in code mode
(``OPENCODE_EXPERIMENTAL_CODE_MODE``) and when a script would have an MCP tool to call; its description
ends with the catalogue of those tools. The work is done by :mod:`opencode_cli.codemode`, imported (with
``pydantic_monty``) only when a script runs.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..context import ToolContext
from ..results import ToolResult
from ._arguments import Arguments


class ExecuteParameters(Arguments):
    """Arguments of the execute tool."""

    code: str = Field(description="Script body executed by the confined interpreter.")


async def execute(params: ExecuteParameters, ctx: ToolContext) -> ToolResult:
    """Run the script; an abort ends it with ``Execution cancelled.``."""
    from ..codemode.script import run_script

    return await run_script(params.code, ctx)


def init() -> dict[str, Any]:
    """The tool's definition, built on first use (it answers an abort itself)."""
    return {"parameters": ExecuteParameters, "execute": execute, "handles_abort": True}
