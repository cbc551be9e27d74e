"""The ``external_directory`` guard (core spec §5), symlink-aware.

A path is inside the project when its real location (symlinks resolved; for a path that does not exist
yet, the real location of its nearest existing ancestor plus the rest) lies under the project directory
or under the git worktree. Anything else needs the ``external_directory`` permission, asked once per
call with the pattern ``<dir>/*``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from .context import ToolContext

Kind = Literal["file", "directory"]


def contains(parent: str, child: str) -> bool:
    """Whether ``child`` is ``parent`` or lies below it (both absolute, already normalised)."""
    rel = os.path.relpath(child, parent)
    return rel == "." or not (os.path.isabs(rel) or rel == ".." or rel.startswith(".." + os.sep))


def real(path: str | Path) -> str:
    """The real absolute path: symlinks resolved as far as the path exists."""
    return os.path.realpath(os.path.abspath(path))


def is_inside(target: str | Path, directory: str | Path, worktree: str | Path | None) -> bool:
    """Whether ``target`` is inside the project rooted at ``directory`` (and its git worktree)."""
    full = real(target)
    if contains(real(directory), full):
        return True
    return worktree is not None and contains(real(worktree), full)


def external_pattern(target: str | Path, kind: Kind = "file") -> tuple[str, str]:
    """``(directory, pattern)`` for an outside target: its real directory and ``<dir>/*``."""
    full = real(target)
    folder = full if kind == "directory" else os.path.dirname(full)
    return folder, os.path.join(folder, "*").replace("\\", "/")


async def assert_external_directory(
    ctx: ToolContext,
    target: str | Path | None,
    *,
    kind: Kind = "file",
    bypass: bool = False,
) -> bool:
    """Ask ``external_directory`` when ``target`` is outside the project; returns whether it asked.

    Raises the permission error when the ask is denied or rejected.
    """
    if not target or bypass:
        return False
    if is_inside(target, ctx.directory, ctx.worktree):
        return False
    folder, pattern = external_pattern(target, kind)
    await ctx.ask(
        "external_directory",
        [pattern],
        always=[pattern],
        metadata={"filepath": real(target), "parentDir": folder},
    )
    return True
