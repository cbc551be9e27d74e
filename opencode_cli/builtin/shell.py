"""The ``shell`` built-in plugin: ``bash``, whose description names the shell and its timeout."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hookspecs import hookimpl
from ..tools import _bash_prompt, builtin

if TYPE_CHECKING:
    from ..flags import Flags
    from ..project import Project
    from ..registry import RegisterTool


@hookimpl
def register_tools(register: RegisterTool, flags: Flags, project: Project | None) -> None:
    """Register ``bash``, described with the project's shell and directory (where commands run)."""
    env = project.env if project is not None else None
    directory = project.directory if project is not None else None
    register(builtin("bash", description=_bash_prompt.describer(flags, env, directory)))
