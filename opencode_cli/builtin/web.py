"""The ``web`` built-in plugin: ``webfetch`` and ``websearch``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hookspecs import hookimpl
from ..tools import _websearch_prompt, builtin

if TYPE_CHECKING:
    from ..registry import RegisterTool


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Register ``webfetch`` and ``websearch`` (whose description carries today's date)."""
    register(builtin("webfetch"))
    register(builtin("websearch", description=_websearch_prompt.describe, plain=False))
