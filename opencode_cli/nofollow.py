"""The host's own files in places a command may write: opened without following a link.

A sandboxed command may write the project, the temporary directory, the spill directory and the
configured writable roots, so it may plant a symbolic link at any name there. The host (unsandboxed) must
never act through such a link: every bookkeeping file it keeps in those places (spill files and the
cleanup stamp, edit locks, caches, dropped bytecode) goes through this module, which opens each name below
a trusted directory with ``O_NOFOLLOW`` relative to the descriptor of the directory above it. A link where
a directory or file was expected fails with ``ELOOP`` (or ``ENOTDIR``), never reaches elsewhere.

Only the standard library; cheap to import.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def open_dir(base: str | Path, parts: Sequence[str] = (), *, create: bool = True) -> int:
    """A descriptor of ``base/parts…``: ``base`` is trusted (opened as it is, made when missing with
    ``create``), each of ``parts`` is made when missing and opened without following a link."""
    if create:
        os.makedirs(base, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


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
