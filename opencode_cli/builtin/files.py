"""The ``files`` built-in plugin: reading, finding and changing files (read, glob, grep, edit, write,
apply_patch)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hookspecs import hookimpl
from ..tools import builtin

if TYPE_CHECKING:
    from ..registry import RegisterTool


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Register the file tools."""
    for tool_id in ("read", "glob", "grep", "edit", "write", "apply_patch"):
        register(builtin(tool_id))
