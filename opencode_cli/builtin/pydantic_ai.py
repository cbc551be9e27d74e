"""The ``pydantic_ai`` built-in plugin: the pydantic-ai toolsets ``[pydantic_ai]`` names (see
:mod:`opencode_cli.bridges.pydantic_ai`). It imports pydantic-ai only when that table names some, and only
when tools are built."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hookspecs import hookimpl

if TYPE_CHECKING:
    from ..project import Project
    from ..registry import RegisterTool


@hookimpl
def register_tools(register: RegisterTool, project: Project | None) -> None:
    """Register the tools of the configured pydantic-ai toolsets."""
    if project is None or not project.config.get("pydantic_ai"):
        return
    from ..bridges import pydantic_ai, settings
    from ..bridges import register as register_all

    register_all(register, pydantic_ai.tools(settings(project, "pydantic_ai")))
