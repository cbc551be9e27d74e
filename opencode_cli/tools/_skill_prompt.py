"""The skill tool's description, which lists the project's skills (builtin spec §13).

This module is imported when tools are listed, so it imports nothing heavy (no pydantic).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..skills import Skills, available_block, discover

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..project import Project

HERE = Path(__file__).parent


def describe(skills: Skills) -> str:
    """The tool's description: the fixed text of ``skill.txt``, then the available skills."""
    base = (HERE / "skill.txt").read_text(encoding="utf-8").rstrip("\n")
    return f"{base}\n\n{available_block(skills)}"


def describer(project: Project | None) -> Callable[[], str]:
    """A zero-argument callable giving the description, for :func:`opencode_cli.define`."""
    return lambda: describe(skills_of(project, None))


def skills_of(project: Project | None, ctx: ToolContext | None) -> Skills:
    """``project``'s skills; without a project, those found from the call's (or this process's)
    directory and environment."""
    if project is not None:
        return project.generation.skills
    from ..config import find_worktree
    from ..trust import view

    directory = ctx.directory if ctx is not None else Path.cwd()
    env = ctx.env if ctx is not None else os.environ
    worktree = ctx.worktree if ctx is not None else find_worktree(directory)
    found = view(directory, worktree, env)  # the trusted view: no substitution of an untrusted project's
    return discover(directory, worktree, env, found.skill_dirs, found.config.data)
