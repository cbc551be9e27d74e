"""The ``shell`` built-in plugin: ``bash``, whose description names the shell and its timeout."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hookspecs import hookimpl
from ..tools import _bash_prompt, builtin

if TYPE_CHECKING:
    from ..flags import Flags
    from ..registry import RegisterTool


@hookimpl
def register_tools(register: RegisterTool, flags: Flags) -> None:
    """Register ``bash``."""
    register(builtin("bash", description=_bash_prompt.describer(flags)))
