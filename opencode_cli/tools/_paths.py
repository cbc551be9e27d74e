"""Path helpers shared by the file tools: relative paths as OpenCode shows them, a guarded ``stat``, and
file-system errors worded as Node words them."""

from __future__ import annotations

import errno
import os

from ..context import ToolContext
from ..errors import ToolError
from ..files import contains


def relative(base: str, target: str) -> str:
    """``target`` relative to ``base`` as Node's ``path.relative`` gives it: ``""`` for ``base`` itself,
    ``..`` segments for paths outside, ``/`` separators."""
    base, target = os.path.normpath(base), os.path.normpath(target)
    if base == target:
        return ""
    if os.path.isabs(base) and contains(base, target):  # below it: the rest of the path, as it is
        return target[len(base.rstrip(os.sep)) + 1 :].replace(os.sep, "/")
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


# libuv's wording of the errors a file tool meets (OpenCode shows Node's messages verbatim).
_UV_WORDS = {
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "illegal operation on a directory",
    errno.ENOTDIR: "not a directory",
    errno.ELOOP: "too many symbolic links encountered",
    errno.ENAMETOOLONG: "name too long",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on device",
    errno.EBUSY: "resource busy or locked",
    errno.EEXIST: "file already exists",
}


def node_message(error: OSError, syscall: str, path: str | None) -> str:
    """``CODE: description, syscall 'path'`` like a Node.js file-system error."""
    number = error.errno or errno.EIO
    code = errno.errorcode.get(number, "EIO")
    words = _UV_WORDS.get(number) or (error.strerror or os.strerror(number)).lower()
    where = f" '{path}'" if path is not None else ""
    return f"{code}: {words}, {syscall}{where}"
