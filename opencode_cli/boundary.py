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


# -- judging what was opened ------------------------------------------------------------------------------
#
# A path judged before it is opened may lead somewhere else by the time it is opened (a symlink on it can
# be changed in between). These helpers judge the file a descriptor holds: where it really is, and whether
# that location (already resolved, never resolved again) is inside the project.

_DELETED = " (deleted)"


def _same_file(fd_info: os.stat_result, candidate: str) -> bool:
    try:
        info = os.stat(candidate)
    except OSError:
        return False
    return (info.st_dev, info.st_ino) == (fd_info.st_dev, fd_info.st_ino)


def opened_location(fd: int, path: str | Path) -> str | None:
    """The real absolute location of the file open on ``fd`` (opened from ``path``), or ``None`` when
    it cannot be told for sure.

    Linux: ``/proc/self/fd/<fd>``. Elsewhere ``F_GETPATH`` when the platform has it. Last resort: the
    real path of ``path`` now, trusted only when it names the very file the descriptor holds.
    """
    fd_info = os.fstat(fd)
    try:
        found = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        found = None
    if found is not None and os.path.isabs(found):
        if found.endswith(_DELETED) and not _same_file(fd_info, found):
            # Unlinked since it was opened: the kernel names where it was.
            found = found[: -len(_DELETED)]
        return os.path.normpath(found)
    try:
        import fcntl

        get_path = getattr(fcntl, "F_GETPATH", None)
        if get_path is not None:
            raw = fcntl.fcntl(fd, get_path, bytes(1024))
            found = os.fsdecode(raw.split(b"\0", 1)[0])
            if os.path.isabs(found):
                return os.path.normpath(found)
    except (ImportError, OSError):
        pass
    candidate = real(path)
    return candidate if _same_file(fd_info, candidate) else None


def is_inside_location(full: str, directory: str | Path, worktree: str | Path | None) -> bool:
    """:func:`is_inside` for a location that is already real: ``full`` itself is not resolved again."""
    if contains(real(directory), full):
        return True
    return worktree is not None and contains(real(worktree), full)


async def assert_external_location(ctx: ToolContext, full: str, *, kind: Kind = "file") -> bool:
    """:func:`assert_external_directory` for a location that is already real (such as the one
    :func:`opened_location` gives): judged and asked about as it is, never resolved again."""
    if is_inside_location(full, ctx.directory, ctx.worktree):
        return False
    folder = full if kind == "directory" else os.path.dirname(full)
    pattern = os.path.join(folder, "*").replace("\\", "/")
    await ctx.ask(
        "external_directory",
        [pattern],
        always=[pattern],
        metadata={"filepath": full, "parentDir": folder},
    )
    return True
