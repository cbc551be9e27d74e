"""The ``core`` built-in plugin: the innermost ``tool_call`` (the call path) and ``tool_execute`` (a tool's
wrap), and ``invalid``, the tool a malformed call is repaired into. It cannot be switched off: every call
runs through it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..hookspecs import hookimpl
from ..tools import builtin

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..contract import Tool
    from ..registry import RegisterTool
    from ..results import ToolResult


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Register ``invalid`` (never offered to a model: the target of call repair)."""
    register(builtin("invalid"))


@hookimpl(trylast=True)
def tool_execute(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> Awaitable[ToolResult]:
    """Run the tool's wrap (validate, execute, truncate): the innermost ``tool_execute``."""
    return tool.run(args, ctx)


@hookimpl(trylast=True)
def tool_call(proceed: Callable[[], Awaitable[ToolResult]]) -> Awaitable[ToolResult]:
    """Make the call (the doom-loop check, the execution hooks, the tool): the innermost ``tool_call``."""
    return proceed()
