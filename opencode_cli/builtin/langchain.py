"""The ``langchain`` built-in plugin: the LangChain tools and toolkits ``[langchain]`` names (see
:mod:`opencode_cli.bridges.langchain`). It imports LangChain only when that table names some, and only
when tools are built."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hookspecs import hookimpl

if TYPE_CHECKING:
    from ..project import Project
    from ..registry import RegisterTool


@hookimpl
def register_tools(register: RegisterTool, project: Project | None) -> None:
    """Register the tools of the configured LangChain tools and toolkits."""
    if project is None or not project.config.get("langchain"):
        return
    from ..bridges import langchain, settings
    from ..bridges import register as register_all

    register_all(register, langchain.tools(settings(project, "langchain")))
