"""The write pipeline shared by ``edit``, ``write`` and ``apply_patch`` (builtin spec §1.9).

* A file is pinned before it is read or written (:func:`pin`): its directory is opened and everything
  after happens relative to that descriptor, so a symlink changed meanwhile cannot move the read or the
  write; :attr:`Target.location` is where the file really is, for the boundary to judge.
* Text is read as UTF-8 with a leading byte-order mark kept apart (:meth:`Target.read_text`); bytes that
  are not UTF-8 survive a read/write round trip (``surrogateescape``).
* Writes are atomic (:meth:`Target.write`, :func:`atomic_write`): a temporary file in the same directory,
  ``fsync``, then a rename over the target; the file's mode is kept (new files get 0644) and a symlink is
  written through, never replaced. A crash leaves either the old or the new content, never a mix.
* Edits of one file are serialised across threads, tasks and processes (:func:`file_lock`).
* Diffs are unified diffs in the shape of the ``diff`` npm package's ``createTwoFilesPatch`` (what
  OpenCode shows), with the common indentation trimmed (:func:`trim_diff`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

BOM = "\ufeff"
NEW_FILE_MODE = 0o644
CONTEXT_LINES = 4
_ENCODING = "utf-8"
_ERRORS = "surrogateescape"


# -- reading and writing -----------------------------------------------------------------------------


def contains(root: str, path: str) -> bool:
    """Whether ``path`` is ``root`` or lies beneath it (both absolute and normalised: compared as text,
    name by name, with no system call)."""
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)


def split_bom(text: str) -> tuple[str, bool]:
    """``(text without a leading BOM, whether it had one)``."""
    return (text[1:], True) if text.startswith(BOM) else (text, False)


def decode(data: bytes) -> tuple[str, bool]:
    """A file's bytes as text without its BOM, and whether it had one (bytes that are not UTF-8 kept)."""
    return split_bom(data.decode(_ENCODING, _ERRORS))


def encode(text: str, bom: bool) -> bytes:
    """The bytes to write: ``text`` (a BOM in it is not doubled) with a BOM when ``bom``."""
    text, had = split_bom(text)
    return ((BOM if bom or had else "") + text).encode(_ENCODING, _ERRORS)


# -- pinning: reading and writing through the directory that was opened ---------------------------------

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
    candidate = os.path.realpath(os.path.abspath(path))
    return candidate if _same_file(fd_info, candidate) else None


class ChangedWhileOpening(OSError):
    """The path changed under us while it was being pinned or written (a link swapped in meanwhile)."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EAGAIN, "it changed while it was being opened", path)


class Target:
    """A file about to be read and replaced, pinned to the directory it is in.

    :func:`pin` opens that directory (the nearest one that exists) and keeps it open: every later read,
    write and removal happens relative to that descriptor, so a symlink on the path changed after the pin
    cannot send them anywhere else. :attr:`location` is where the file really is (taken from the open
    descriptor): what a boundary check judges.
    """

    def __init__(self, path: str, fd: int, directory: str, missing: tuple[str, ...], name: str) -> None:
        self.path, self.fd, self.directory, self.missing, self.name = path, fd, directory, missing, name

    @property
    def location(self) -> str:
        """The real absolute location of the file (its directory's real path, the missing directories
        still to be made, its name)."""
        return os.path.join(self.directory, *self.missing, self.name)

    def read_bytes(self) -> bytes | None:
        """The file's bytes, or ``None`` when there is no file (a symlink swapped in refuses)."""
        if self.missing:
            return None
        try:
            fd = os.open(self.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise ChangedWhileOpening(self.path) from None
            raise
        with os.fdopen(fd, "rb") as handle:
            if stat.S_ISDIR(os.fstat(handle.fileno()).st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", self.path)
            return handle.read()

    def read_text(self) -> tuple[str, bool] | None:
        """The file's text without its BOM and whether it had one, or ``None`` when there is no file."""
        data = self.read_bytes()
        return None if data is None else decode(data)

    def exists(self) -> bool:
        """Whether something is at the name now (a link counts, followed or not)."""
        if self.missing:
            return False
        try:
            os.stat(self.name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def _directory_fd(self) -> int:
        """The descriptor of the file's own directory, making the missing ones (never through a link)."""
        fd = self.fd
        for part in self.missing:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=fd)
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise ChangedWhileOpening(self.path) from None
                raise type(error)(error.errno, error.strerror, self.path) from None
            if fd != self.fd:
                os.close(fd)
            fd = child
        return fd

    def write(self, data: bytes | str, *, bom: bool = False) -> None:
        """Replace the file's content atomically (see :func:`atomic_write`): :meth:`stage`, then
        :meth:`commit`."""
        temporary = self.stage(data, bom=bom)
        try:
            self.commit(temporary)
        except BaseException:
            self.discard(temporary)
            raise

    def stage(self, data: bytes | str, *, bom: bool = False) -> str:
        """Write the new content to a temporary file beside the file (its mode kept, synced to disk) and
        return the temporary's name, for :meth:`commit` or :meth:`discard`; the file itself is untouched.
        The directories still missing on the way are made."""
        payload = encode(data, bom) if isinstance(data, str) else data
        fd = self._directory_fd()
        try:
            try:
                info = os.stat(self.name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                mode = NEW_FILE_MODE
            else:
                mode = info.st_mode & 0o7777
                if stat.S_ISREG(info.st_mode) and (
                    not mode & 0o222 or not os.access(self.name, os.W_OK, dir_fd=fd)
                ):
                    # a read-only file stays read-only even for root, who could otherwise rename over it
                    raise PermissionError(errno.EACCES, "Permission denied", self.path)
                if not stat.S_ISREG(info.st_mode):
                    mode = NEW_FILE_MODE
            temporary = f".{self.name[:200]}.{os.urandom(6).hex()}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            handle_fd = os.open(temporary, flags, 0o600, dir_fd=fd)
            try:
                with os.fdopen(handle_fd, "wb") as handle:
                    handle.write(payload)
                    handle.flush()
                    os.fchmod(handle.fileno(), mode)
                    os.fsync(handle.fileno())
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=fd)
                raise
            return temporary
        finally:
            if fd != self.fd:
                os.close(fd)

    def commit(self, temporary: str) -> None:
        """Put the content from :meth:`stage` in place: one rename over the file (atomic)."""
        fd = self._directory_fd()
        try:
            os.replace(temporary, self.name, src_dir_fd=fd, dst_dir_fd=fd)
            with contextlib.suppress(OSError):
                os.fsync(fd)
        finally:
            if fd != self.fd:
                os.close(fd)

    def discard(self, temporary: str) -> None:
        """Remove a temporary from :meth:`stage` that will not be committed (gone already: nothing)."""
        with contextlib.suppress(OSError):
            fd = self._directory_fd()  # the missing directories were made by the stage
            try:
                os.unlink(temporary, dir_fd=fd)
            finally:
                if fd != self.fd:
                    os.close(fd)

    def remove(self) -> None:
        """Remove the file (a link at the name is removed itself, never what it leads to)."""
        if self.missing:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", self.path)
        os.unlink(self.name, dir_fd=self.fd)

    def close(self) -> None:
        """Let go of the directory."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


MAX_LINKS = 40


def pin(path: str | Path, *, follow: bool = True) -> Target:
    """Pin ``path`` for reading and replacing: its directory opened, symlinks on the way followed as they
    are at this instant, and the file's name itself too (a link is written through) unless ``follow`` is
    false (to remove a link, not what it leads to)."""
    original = str(path)
    current = os.path.abspath(path)
    for _ in range(MAX_LINKS):
        parent, name = os.path.split(current)
        if not name or name in (".", ".."):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", original)
        fd, missing = _open_existing(parent, original)
        try:
            directory = opened_location(fd, parent)
            if directory is None:
                raise ChangedWhileOpening(original)
            if missing or not follow:
                return Target(original, fd, directory, missing, name)
            try:
                link = os.readlink(name, dir_fd=fd)
            except (FileNotFoundError, OSError) as error:
                if isinstance(error, FileNotFoundError) or error.errno == errno.EINVAL:
                    return Target(original, fd, directory, (), name)
                raise
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        current = os.path.normpath(os.path.join(directory, link))
    raise OSError(errno.ELOOP, "Too many levels of symbolic links", original)


def _open_existing(folder: str, original: str) -> tuple[int, tuple[str, ...]]:
    """Open the nearest existing directory at or above ``folder``: its descriptor and the names below it
    that do not exist yet."""
    missing: list[str] = []
    while True:
        try:
            return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), tuple(reversed(missing))
        except (FileNotFoundError, NotADirectoryError):
            # not there (or a file on the way): made, or refused with the OS's own error, when written
            above, name = os.path.split(folder)
            if above == folder or not name:
                raise
            if os.path.islink(folder):
                # a dangling link on the way: where it leads does not exist, and is not made through it
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", original) from None
            missing.append(name)
            folder = above


def atomic_write(path: str | Path, data: bytes | str, *, bom: bool = False) -> None:
    """Replace ``path``'s content with ``data`` atomically, creating parent directories.

    A ``str`` is encoded as UTF-8 (with a BOM when ``bom``). The existing file's permission bits are
    kept; a new file gets 0644. When ``path`` is a symlink its target is written. The file is written in
    the directory :func:`pin` opened, through a temporary file, ``fsync`` and a rename, so a crash leaves
    either the old or the new content.
    """
    with pin(path) as target:
        target.write(data, bom=bom)


# -- locking -----------------------------------------------------------------------------------------


def lock_path(path: str | Path, env: Mapping[str, str] = os.environ) -> Path:
    """The lock file that stands for ``path`` (keyed by its real path) under ``<runtime>/locks``
    (:func:`~opencode_cli.paths.runtime_dir`: a place no command is given to write)."""
    import hashlib

    from .paths import runtime_dir

    key = hashlib.sha256(os.path.realpath(path).encode(_ENCODING, _ERRORS)).hexdigest()[:32]
    return runtime_dir(env) / "locks" / f"{key}.lock"


@asynccontextmanager
async def file_lock(
    path: str | Path, env: Mapping[str, str] = os.environ, poll: float = 0.01
) -> AsyncIterator[None]:
    """Hold the edit lock of ``path``: one holder at a time across tasks, threads and processes (of the
    environment ``env``'s user: the lock files live in its runtime directory).

    An exclusive ``flock`` on a per-file lock file; waiting polls without blocking the event loop, so a
    cancelled waiter simply stops waiting.
    """
    import asyncio
    import fcntl

    from . import nofollow

    lock = lock_path(path, env)
    # what was put at "opencode", "locks" or the lock file's name (a link, a file) is replaced, never used
    folder = nofollow.own_dir(lock.parent.parent.parent, (lock.parent.parent.name, lock.parent.name))
    try:
        descriptor = nofollow.own_file(folder, lock.name, os.O_RDWR)
    finally:
        os.close(folder)
    try:
        delay = poll
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.2)
        try:
            yield
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


# -- diffs -------------------------------------------------------------------------------------------


def _split_lf(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines ``a`` and ``b`` share at their start, and then at their end (not overlapping)."""
    shortest = min(len(a), len(b))
    head = 0
    while head < shortest and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shortest - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def _line_body(line: str) -> str:
    return line[:-1] if line.endswith("\n") else line


def unified_diff(path: str, old: str, new: str, context: int = CONTEXT_LINES) -> str:
    """A unified diff of ``old`` → ``new`` with an ``Index:`` header, as ``createTwoFilesPatch`` makes it."""
    old_lines = _split_lf(old)
    new_lines = _split_lf(new)
    out = [f"Index: {path}", "=" * 67, f"--- {path}", f"+++ {path}"]
    # Lines shared at both ends cannot be part of a hunk beyond its context: match only the rest.
    head, tail = _common_ends(old_lines, new_lines)
    skip, drop = max(0, head - context), max(0, tail - context)
    import difflib

    matcher = difflib.SequenceMatcher(
        None, old_lines[skip : len(old_lines) - drop], new_lines[skip : len(new_lines) - drop], autojunk=False
    )
    for shifted in matcher.get_grouped_opcodes(context):
        group = [(tag, i1 + skip, i2 + skip, j1 + skip, j2 + skip) for tag, i1, i2, j1, j2 in shifted]
        old_start, old_end = group[0][1], group[-1][2]
        new_start, new_end = group[0][3], group[-1][4]
        old_count, new_count = old_end - old_start, new_end - new_start
        # the unified format names the line before an empty range
        old_first = old_start + 1 if old_count else old_start
        new_first = new_start + 1 if new_count else new_start
        out.append(f"@@ -{old_first},{old_count} +{new_first},{new_count} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(_marked(" ", old_lines[i1:i2]))
                continue
            if tag in ("replace", "delete"):
                out.extend(_marked("-", old_lines[i1:i2]))
            if tag in ("replace", "insert"):
                out.extend(_marked("+", new_lines[j1:j2]))
    return "\n".join(out) + "\n"


def _marked(prefix: str, lines: list[str]) -> list[str]:
    marked = []
    for line in lines:
        marked.append(prefix + _line_body(line))
        if not line.endswith("\n"):
            marked.append("\\ No newline at end of file")
    return marked


def _is_content(line: str) -> bool:
    return line[:1] in ("+", "-", " ") and not line.startswith(("---", "+++"))


def trim_diff(diff: str) -> str:
    """Remove the indentation every changed or context line of ``diff`` shares (OpenCode's ``trimDiff``)."""
    lines = diff.split("\n")
    widths = [
        len(body) - len(body.lstrip()) for line in lines if _is_content(line) and (body := line[1:]).strip()
    ]
    smallest = min(widths, default=0)
    if smallest == 0:
        return diff
    return "\n".join(line[0] + line[1 + smallest :] if _is_content(line) else line for line in lines)


def count_changes(old: str, new: str) -> tuple[int, int]:
    """``(added lines, removed lines)`` of a line diff of ``old`` → ``new``."""
    old_lines, new_lines = _split_lf(old), _split_lf(new)
    head, tail = _common_ends(old_lines, new_lines)
    import difflib

    matcher = difflib.SequenceMatcher(
        None, old_lines[head : len(old_lines) - tail], new_lines[head : len(new_lines) - tail], autojunk=False
    )
    added = removed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def diff_for(path: str, old: str, new: str) -> str:
    """The trimmed diff the edit tools report: line endings normalised to LF, no BOM."""
    normal_old = split_bom(old)[0].replace("\r\n", "\n")
    normal_new = split_bom(new)[0].replace("\r\n", "\n")
    return trim_diff(unified_diff(path, normal_old, normal_new))
