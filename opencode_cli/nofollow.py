"""The host's own files in places a command may write: opened without following a link.

A sandboxed command may write the project, the temporary directory, the spill directory and the
configured writable roots, so it may plant a symbolic link at any name there. The host (unsandboxed) must
never act through such a link: every bookkeeping file it keeps in those places (spill files and the
cleanup stamp, edit locks, caches, dropped bytecode) goes through this module, which opens each name below
a trusted directory with ``O_NOFOLLOW`` relative to the descriptor of the directory above it. A link where
a directory or file was expected fails with ``ELOOP`` (or ``ENOTDIR``), never reaches elsewhere; in the
host's own directories (:func:`own_dir`, :func:`own_file`), which no command is given to write, it is
replaced instead, so that nothing planted there can stop the host's work.

Only the standard library; cheap to import.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def open_dir(base: str | Path, parts: Sequence[str] = (), *, create: bool = True) -> int:
    """A descriptor of ``base/parts…``: ``base`` is trusted (opened as it is, made when missing with
    ``create``), each of ``parts`` is made when missing and opened without following a link."""
    if create:
        os.makedirs(base, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def child(fd: int, part: str) -> int:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o700, dir_fd=fd)
        return os.open(part, _DIR_FLAGS, dir_fd=fd)

    return _descend(fd, parts, child)


def _descend(fd: int, parts: Sequence[str], child: Callable[[int, str], int]) -> int:
    """The descriptor of ``parts`` below the directory ``fd``, each opened by ``child`` from the one
    above it (every descriptor but the last closed, also on an error)."""
    try:
        for part in parts:
            below = child(fd, part)
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd


#: Times :func:`own_dir` replaces what it finds in its way before it gives up (something keeps putting
#: it back).
REPAIRS = 3


def own_dir(base: str | Path, parts: Sequence[str]) -> int:
    """A descriptor of the host's own directory ``base/parts…`` (``base`` trusted and made when missing):
    each part is a real directory of this user's. A link, a file or anything else found at a part's name
    (something outside the sandbox put it there) is removed, never followed, and the directory made
    again; a directory of another user's there is an error."""
    return _descend(open_dir(base, create=True), parts, _own_child)


def _own_child(fd: int, part: str) -> int:
    for _ in range(REPAIRS):
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, 0o700, dir_fd=fd)
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as error:
            if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part, dir_fd=fd)  # a link (itself, not where it leads) or a file
            continue
        if os.fstat(child).st_uid != os.geteuid():
            os.close(child)
            raise PermissionError(errno.EPERM, f"not a directory of this user's: {part}")
        return child
    raise OSError(errno.ELOOP, f"{part} keeps being replaced")


@contextlib.contextmanager
def directory(base: str | Path, parts: Sequence[str] = (), *, create: bool = True) -> Iterator[int]:
    """:func:`open_dir` as a context manager that closes the descriptor."""
    fd = open_dir(base, parts, create=create)
    try:
        yield fd
    finally:
        os.close(fd)


def create(dir_fd: int, name: str, mode: int = 0o644) -> int:
    """A new file ``name`` in the directory ``dir_fd``, open for writing (``O_EXCL``: never an existing
    file, never through a link)."""
    return os.open(name, _NEW_FLAGS, mode, dir_fd=dir_fd)


def open_regular(dir_fd: int, name: str, flags: int, mode: int = 0o600) -> int:
    """``name`` in ``dir_fd`` opened with ``flags`` (plus ``O_NOFOLLOW``), refused unless it is a regular
    file (a FIFO or device planted there is not opened for long: ``O_NONBLOCK`` guards the open)."""
    fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"not a regular file: {name}")
    os.set_blocking(fd, True)
    return fd


def own_file(dir_fd: int, name: str, flags: int, mode: int = 0o600) -> int:
    """:func:`open_regular` of the host's own file ``name`` (made when missing) in its own directory: a
    link or anything else but a regular file there is removed, never followed, and the file made again."""
    for _ in range(REPAIRS):
        try:
            return open_regular(dir_fd, name, flags | os.O_CREAT, mode)
        except OSError as error:
            if error.errno not in (errno.ELOOP, None):  # a link (ELOOP), or not a regular file
                raise
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=dir_fd)
    raise OSError(errno.ELOOP, f"{name} keeps being replaced")


def replace(path: str | Path, data: bytes, *, mode: int = 0o600) -> None:
    """Put ``data`` at ``path`` atomically: a new temporary beside it (random name, ``O_EXCL``), then a
    rename over the name (a link there is replaced, not followed). The parent directory is made when
    missing."""
    folder, name = os.path.split(os.fspath(path))
    with directory(folder) as fd:
        temporary = f".{name}.{os.urandom(6).hex()}.tmp"
        handle = create(fd, temporary, mode)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=fd)
            raise


def unlink(folder: str | Path, parts: Sequence[str], name: str) -> None:
    """Remove ``folder/parts…/name`` where ``parts`` may not be links (a link at ``name`` is removed
    itself). Missing: nothing."""
    try:
        with directory(folder, parts, create=False) as fd:
            os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        return
