"""The ``codemode`` built-in plugin: ``execute``, which runs a Python script that calls tools (offered
only with ``OPENCODE_EXPERIMENTAL_CODE_MODE``: see :mod:`opencode_cli.policy`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hookspecs import hookimpl
from ..tools import builtin

if TYPE_CHECKING:
    from ..registry import RegisterTool


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Register ``execute``."""
    register(builtin("execute"))
