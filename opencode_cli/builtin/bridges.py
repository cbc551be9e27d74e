"""The ``langchain`` and ``pydantic_ai`` built-in plugins: the LangChain tools and toolkits ``[langchain]``
names, and the pydantic-ai toolsets ``[pydantic_ai]`` names (see :mod:`opencode_cli.bridges`). Each
imports its ecosystem only when its table names something, and only when tools are built. (The ``llm``
bridge is :mod:`opencode_cli.builtin.llm`: its tools come from installed packages, not from a table.)"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..hookspecs import hookimpl
from . import configured

if TYPE_CHECKING:
    from ..project import Project
    from ..registry import RegisterTool


class Configured:
    """A bridge whose tools a config table names: ``table`` is both the table and the bridge's module
    (:mod:`opencode_cli.bridges.langchain`, :mod:`opencode_cli.bridges.pydantic_ai`)."""

    def __init__(self, table: str) -> None:
        self.table = table

    @hookimpl
    def register_tools(self, register: RegisterTool, project: Project | None) -> None:
        """Register the tools the table names."""
        if project is None or not configured(project, self.table):
            return
        from ..bridges import register as register_all
        from ..bridges import settings

        bridge = importlib.import_module(f"opencode_cli.bridges.{self.table}")
        register_all(register, bridge.tools(settings(project, self.table)))


langchain = Configured("langchain")
pydantic_ai = Configured("pydantic_ai")
