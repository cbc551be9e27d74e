"""Read-only binds of the project's configuration, in a private mount namespace (Linux; no root needed).

Landlock grants access beneath a directory and cannot take a sub-path back out of it: a command that may
write the project may write its ``opencode.toml`` and ``.opencode/`` too. So, in the command's process
between fork and exec (before Landlock's rules, which then forbid any change of the mount table), the
launcher moves into mount namespace of its own and binds each protected path onto itself read-only:

1. ``unshare(CLONE_NEWNS)`` as root; otherwise ``unshare(CLONE_NEWUSER | CLONE_NEWNS)`` with the user and
   group mapped to themselves (an unprivileged user namespace: the kernel must allow them);
2. every mount made private, so nothing done here reaches the host's namespace;
3. for each path (a file or a directory, which must exist): a bind mount onto itself, then a remount
   read-only that keeps the flags the kernel locks (``nosuid``, ``nodev``, ``noexec``…).

Writes to those paths then fail with ``EROFS``; they cannot be removed or renamed (``EBUSY``), nor hard
linked elsewhere (``EXDEV``). Only the standard library (the launcher runs this as a plain module).
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24
#: statvfs flags (``ST_*``) to the mount flags a remount must keep.
_KEPT = (
    (os.ST_NOSUID, MS_NOSUID),
    (os.ST_NODEV, MS_NODEV),
    (os.ST_NOEXEC, MS_NOEXEC),
    (os.ST_NOATIME, MS_NOATIME),
    (os.ST_NODIRATIME, MS_NODIRATIME),
    (os.ST_RELATIME, MS_RELATIME),
)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter(libc: ctypes.CDLL | None = None) -> None:
    """Move this (single-threaded) process into a mount namespace of its own, with every mount private."""
    libc = libc or _libc()
    if os.geteuid() == 0:
        _check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    else:
        uid, gid = os.geteuid(), os.getegid()
        _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare(CLONE_NEWUSER|CLONE_NEWNS)")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount(/, MS_PRIVATE)")


def bind_read_only(path: str, libc: ctypes.CDLL | None = None) -> None:
    """Bind ``path`` onto itself, then make that bind read-only (keeping the locked flags)."""
    libc = libc or _libc()
    raw = os.fsencode(path)
    _check(libc.mount(raw, raw, None, MS_BIND | MS_REC, None), f"bind {path}")
    vfs = os.statvfs(path)
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY
    for st_flag, ms_flag in _KEPT:
        if vfs.f_flag & st_flag:
            flags |= ms_flag
    _check(libc.mount(None, raw, None, flags, None), f"remount {path} read-only")


def protect(paths: list[str]) -> None:
    """:func:`enter`, then :func:`bind_read_only` each of ``paths`` (absent ones are skipped)."""
    libc = _libc()
    enter(libc)
    for path in paths:
        if os.path.lexists(path) and not os.path.islink(path):
            bind_read_only(path, libc)


_PROBED: list[tuple[bool, str]] = []


def available() -> tuple[bool, str]:
    """Whether this process could give a child a private mount namespace (probed once, in a forked
    child that tries :func:`enter`), and why not when it cannot."""
    if not _PROBED:
        _PROBED.append(_probe())
    return _PROBED[0]


def _probe() -> tuple[bool, str]:
    import sys

    if not sys.platform.startswith("linux"):
        return False, "mount namespaces are Linux's"
    libc = _libc()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read)
            enter(libc)
            os._exit(0)
        except BaseException as error:
            try:
                os.write(write, str(error).encode()[:500])
            finally:
                os._exit(1)
    os.close(write)
    try:
        message = b""
        while chunk := os.read(read, 512):
            message += chunk
    finally:
        os.close(read)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 0:
        return True, ""
    return False, message.decode("utf-8", "replace") or "unshare failed"
