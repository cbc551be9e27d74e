"""The ``lsp`` built-in plugin: the ``lsp`` tool, which asks a language server about code (offered only
with ``OPENCODE_EXPERIMENTAL_LSP_TOOL``: see :mod:`opencode_cli.policy`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hookspecs import hookimpl
from ..tools import builtin

if TYPE_CHECKING:
    from ..registry import RegisterTool


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Register ``lsp``."""
    register(builtin("lsp"))
