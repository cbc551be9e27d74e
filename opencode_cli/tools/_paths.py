"""Path helpers shared by the file tools: relative paths as OpenCode shows them, and a guarded ``stat``."""

from __future__ import annotations

import os

from ..context import ToolContext
from ..errors import ToolError


def relative(base: str, target: str) -> str:
    """``target`` relative to ``base`` as Node's ``path.relative`` gives it: ``""`` for ``base`` itself,
    ``..`` segments for paths outside, ``/`` separators."""
    base, target = os.path.normpath(base), os.path.normpath(target)
    if base == target:
        return ""
    return os.path.relpath(target, base).replace(os.sep, "/")


def worktree_relative(ctx: ToolContext, path: str) -> str:
    """``path`` relative to the worktree (or the project directory outside git), for titles and patterns."""
    return relative(str(ctx.worktree or ctx.directory), path)


def reason(error: OSError) -> str:
    """The short text of an OS error (``Permission denied``, ``Is a directory``…)."""
    return error.strerror or str(error)


def stat_or_none(path: str) -> os.stat_result | None:
    """``os.stat(path)``, ``None`` when nothing is there; other failures become a model-facing error."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise ToolError(f"Cannot access {path}: {reason(error)}") from None
