"""Writing several files as one, for ``apply_patch``'s phase 3: all of them, or none.

The caller holds the edit lock of every path it touches (:func:`hold_locks`) and keeps a copy of each
(:func:`take_snapshots`: bytes, mode and symlink). :func:`write_all` then stages every new content beside
its target (an abort is looked at between two files; an abort or a failure removes what was staged and
the directories made for it), and commits by renames and removals, which nothing interrupts. A commit
failing part way (a read-only file, a full disk) puts every path already touched back from its copy,
removes the directories the call made, and fails with a message that says so.

Every write, rename and removal goes through the file's pinned directory (:func:`opencode_cli.files.pin`),
and only where ``allowed`` says it may: a symlink changed since the paths were judged cannot send a write
outside the project. The writer knows nothing of patches: it is given, per file, where new bytes go and
what path is removed after.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import boundary, files
from ..context import AbortSignal
from ..errors import AbortedError, ToolError
from ._paths import node_message, relative

#: Said of a patch that was stopped before its commit.
NOT_APPLIED = "The patch was not applied: no file was modified."

#: Whether a real location may be written: inside the project, or a location judged before the ask.
Allowed = Callable[[str], bool]


@contextlib.asynccontextmanager
async def hold_locks(paths: Iterable[str], env: Mapping[str, str]) -> AsyncIterator[None]:
    """Hold the edit lock of every path (the lock files of ``env``'s runtime directory), taken in the
    order of the lock files' names (so two calls cannot deadlock).

    Two paths naming the same file share one lock file, which is taken once (a second ``flock`` on it
    from this process would wait for ourselves).
    """
    locks = {str(files.lock_path(path, env)): path for path in paths}
    async with contextlib.AsyncExitStack() as stack:
        for key in sorted(locks):
            await stack.enter_async_context(files.file_lock(locks[key], env))
        yield


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


@dataclass
class Snapshot:
    """A path as it was before the call changed anything, and how to put it back."""

    path: str
    real: str
    """Where the path led (symlinks resolved): what an atomic write replaces."""
    existed: bool = False
    link: str | None = None
    """The symlink's target when the path itself is a symlink."""
    real_existed: bool = False
    data: bytes | None = None
    """The regular file's bytes; ``None`` when there was none (absent, a directory, a dangling link)."""
    mode: int | None = None

    @classmethod
    def take(cls, path: str) -> Snapshot:
        """Read what is at ``path`` now."""
        snapshot = cls(path, os.path.realpath(path))
        snapshot.existed = os.path.lexists(path)
        if os.path.islink(path):
            snapshot.link = os.readlink(path)
        snapshot.real_existed = os.path.lexists(snapshot.real)
        try:
            info = os.stat(snapshot.real)
        except (FileNotFoundError, NotADirectoryError):
            return snapshot
        if stat.S_ISREG(info.st_mode):
            snapshot.data = _read_bytes(snapshot.real)
            snapshot.mode = stat.S_IMODE(info.st_mode)
        return snapshot

    def restore(self, allowed: Allowed) -> None:
        """Put the path back: its absence, its symlink, its bytes and mode (writing only where
        ``allowed``)."""
        path = self.path
        if not self.existed:
            if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
                os.remove(path)
            return
        if self.link is not None and not (os.path.islink(path) and os.readlink(path) == self.link):
            if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
                os.remove(path)
            os.symlink(self.link, path)
        if self.data is None:
            # nothing of ours to put back, except a file written through a dangling link
            if self.link is not None and not self.real_existed and os.path.isfile(self.real):
                os.remove(self.real)
            return
        try:
            current: bytes | None = _read_bytes(self.real)
        except OSError:
            current = None
        if current != self.data:
            if os.path.isfile(self.real) and not os.access(self.real, os.W_OK):
                os.chmod(self.real, stat.S_IMODE(os.stat(self.real).st_mode) | 0o200)
            _write_guarded(self.real, self.data, allowed)
        if self.mode is not None:
            os.chmod(self.real, self.mode)


def take_snapshots(paths: Iterable[str], base: str, abort: AbortSignal) -> dict[str, Snapshot]:
    """A copy of every path (the abort looked at before each), to undo the writes with; raises a
    ToolError naming a path that cannot be copied (nothing is written then)."""
    snapshots = {}
    for path in paths:
        if abort.aborted:
            raise AbortedError(NOT_APPLIED)
        try:
            snapshots[path] = Snapshot.take(path)
        except OSError as error:
            raise ToolError(
                f"apply_patch failed: could not keep a copy of {relative(base, path)} to undo the patch "
                f"with: {node_message(error, 'open', path)}\nNo file was modified."
            ) from None
    return snapshots


@dataclass(frozen=True)
class FileWrite:
    """One file's part of the transaction: new bytes for ``path`` (``None``: nothing written), then the
    removal of ``remove`` (``None``: nothing removed; skipped when it is the very file just written)."""

    path: str | None
    data: bytes = b""
    remove: str | None = None


def _missing_parents(path: str) -> list[str]:
    """The directories above ``path`` that do not exist yet, deepest first."""
    missing = []
    folder = os.path.dirname(os.path.realpath(path))
    while folder and not os.path.exists(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return missing


def _write_guarded(path: str, data: bytes, allowed: Allowed) -> None:
    """Write ``path`` atomically through its pinned directory, only when where it really is now is
    ``allowed`` (a symlink changed since it was judged cannot send the write outside the project)."""
    with files.pin(path) as target:
        if not allowed(target.location):
            raise files.ChangedWhileOpening(path)
        target.write(data)


@dataclass
class _Staged:
    """New content written to a temporary beside its target, not yet renamed over it."""

    path: str
    location: str
    """Where the target really was when staged: the commit renames only there."""
    temporary: str


def _stage_guarded(path: str, data: bytes, allowed: Allowed) -> _Staged:
    """Stage ``path``'s new content (see :meth:`files.Target.stage`) where it really is, when allowed."""
    with files.pin(path) as target:
        if not allowed(target.location):
            raise files.ChangedWhileOpening(path)
        return _Staged(path, target.location, target.stage(data))


def _commit_guarded(staged: _Staged) -> None:
    """Rename the staged content over its target, which must still be where it was staged."""
    with files.pin(staged.path) as target:
        if target.location != staged.location:
            raise files.ChangedWhileOpening(staged.path)
        target.commit(staged.temporary)


def _discard(staged: Iterable[_Staged]) -> None:
    """Remove staged temporaries that will not be committed."""
    for one in staged:
        with contextlib.suppress(OSError), files.pin(one.path) as target:
            if target.location == one.location:
                target.discard(one.temporary)


def _remove_guarded(path: str, allowed: Allowed) -> None:
    """Remove ``path`` through its pinned directory, only when where it really is now is ``allowed``."""
    with files.pin(path, follow=False) as target:
        if not allowed(target.location):
            raise files.ChangedWhileOpening(path)
        target.remove()


class _WriteFailed(Exception):
    def __init__(self, path: str, error: OSError, syscall: str) -> None:
        super().__init__(path)
        self.path, self.error, self.syscall = path, error, syscall


def _same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def write_all(
    writes: list[FileWrite],
    snapshots: dict[str, Snapshot],
    base: str,
    allowed: Allowed,
    abort: AbortSignal,
) -> None:
    """Make every write, all or none: stage every new content beside its target (the abort is looked
    at between two files; an abort or a failure removes what was staged), then commit by renames and
    removals, which nothing interrupts; a commit failing part way puts back everything touched from the
    ``snapshots`` (one for every path written or removed). Raises a ToolError saying which."""
    created: list[str] = []
    for write in writes:
        if write.path is not None:
            for folder in _missing_parents(write.path):
                if folder not in created:
                    created.append(folder)
    staged: dict[int, _Staged] = {}
    try:
        for index, write in enumerate(writes):
            if abort.aborted:
                raise AbortedError(NOT_APPLIED)
            if write.path is None:
                continue
            try:
                staged[index] = _stage_guarded(write.path, write.data, allowed)
            except OSError as error:
                raise _WriteFailed(write.path, error, "open") from error
    except BaseException as stopped:
        _discard(staged.values())
        _remove_created(created)
        if isinstance(stopped, _WriteFailed):
            raise _failure(stopped, base, [], NOT_APPLIED) from None
        raise
    touched: list[str] = []
    committed: set[int] = set()
    try:
        for index, write in enumerate(writes):
            if write.path is not None:
                touched.append(write.path)
                try:
                    _commit_guarded(staged[index])
                except OSError as error:
                    raise _WriteFailed(write.path, error, "open") from error
                committed.add(index)
            if write.remove is not None and (write.path is None or not _same_file(write.remove, write.path)):
                touched.append(write.remove)
                try:
                    _remove_guarded(write.remove, allowed)
                except OSError as error:
                    raise _WriteFailed(write.remove, error, "unlink") from error
    except _WriteFailed as failure:
        _discard(one for index, one in staged.items() if index not in committed)
        not_restored = _roll_back(touched, snapshots, created, allowed)
        if not_restored:
            listed = "; ".join(f"{relative(base, path)} ({reason})" for path, reason in not_restored)
            after = f"The changes already made could not all be undone. Not restored: {listed}"
        else:
            after = "The changes already made were undone: no file was modified."
        raise _failure(failure, base, not_restored, after) from None


def _failure(failure: _WriteFailed, base: str, not_restored: list[Any], after: str) -> ToolError:
    verb = "delete" if failure.syscall == "unlink" else "write"
    return ToolError(
        f"apply_patch failed: could not {verb} {relative(base, failure.path)}: "
        f"{node_message(failure.error, failure.syscall, failure.path)}\n{after}"
    )


def _remove_created(created: list[str]) -> None:
    """Remove the directories the call made (deepest first), where they are still the ones made."""
    for folder in sorted(created, key=lambda name: name.count(os.sep), reverse=True):
        if boundary.real(folder) != folder:
            continue  # no longer the folder that was made (a link on the way changed): left alone
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def _roll_back(
    touched: list[str], snapshots: dict[str, Snapshot], created: list[str], allowed: Allowed
) -> list[tuple[str, str]]:
    """Restore every touched path (latest first) and remove created directories; returns what failed."""
    failed: list[tuple[str, str]] = []
    for path in reversed(list(dict.fromkeys(touched))):
        try:
            snapshots[path].restore(allowed)
        except OSError as error:
            failed.append((path, error.strerror or str(error)))
    _remove_created(created)
    return failed
