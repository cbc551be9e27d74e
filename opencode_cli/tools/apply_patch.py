"""``apply_patch``: add, delete, update and move files with one patch (builtin-tools spec §8).

The call runs in three phases:

1. **Verify** every hunk, in patch order: resolve its path, run the ``external_directory`` guard (and the
   guard of a ``Move to`` path), read the file and compute its new text. Any failure ends the call here
   with ``apply_patch verification failed: …`` and nothing has been written.
2. **Ask** once for the ``edit`` permission: the worktree-relative paths as patterns, always ``*``, the
   diffs and a ``files`` list as metadata.
3. **Apply** with the edit lock of every touched path held (taken in one stable order, so two calls cannot
   deadlock). Under the locks each source file is read again; one that changed since phase 1 (another
   edit got in while the permission was asked) has its new text computed again from what is there now.
   The changes are then made in patch order with atomic writes, renames by write-then-delete, and
   deletes.

Beyond OpenCode: phase 3 is transactional. Before anything is written, the bytes, mode and symlink of
every touched path are kept in memory; if a write or delete fails part way (a read-only file, a full
disk), every path already touched is put back as it was, directories the call created are removed
again, and the call fails with a message that says so. A ``Move to`` naming the file itself is an update
(OpenCode would delete the file after writing it).

LSP diagnostics come from :mod:`opencode_cli.lsp.diagnostics`. Not here yet: formatters and file-watcher
events.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
import stat
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .. import boundary, files
from ..context import AbortSignal, ToolContext
from ..contract import unless_aborted
from ..errors import INTERRUPTED, AbortedError, ToolError
from ..loops import to_end
from ..lsp import diagnostics as lsp
from ..patch import (
    AddFile,
    DeleteFile,
    Hunk,
    PatchError,
    UpdateFile,
    derive_new_contents,
    js_trim,
    parse_patch,
)
from ..results import ToolResult
from ._paths import relative
from .edit import diagnostics

if TYPE_CHECKING:
    from pydantic import BaseModel

VERIFICATION_FAILED = "apply_patch verification failed"
SUCCESS = "Success. Updated the following files:"
EMPTY_PATCH = "*** Begin Patch\n*** End Patch"

T = TypeVar("T")
ChangeType = Literal["add", "update", "delete", "move"]


@functools.cache
def parameters() -> type[BaseModel]:
    """The apply_patch tool's arguments, as a pydantic model made on first use (see :mod:`.plain_args`)."""
    from pydantic import Field

    from ._arguments import Arguments

    class ApplyPatchParameters(Arguments):
        """Arguments of the apply_patch tool."""

        patchText: str = Field(description="The full patch text that describes all changes to be made")

    return ApplyPatchParameters


# -- errors as Node words them --------------------------------------------------------------------------

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


def _node_message(error: OSError, syscall: str, path: str | None) -> str:
    """``CODE: description, syscall 'path'`` like a Node.js file-system error."""
    number = error.errno or errno.EIO
    code = errno.errorcode.get(number, "EIO")
    words = _UV_WORDS.get(number) or (error.strerror or os.strerror(number)).lower()
    where = f" '{path}'" if path is not None else ""
    return f"{code}: {words}, {syscall}{where}"


def _verification(detail: str) -> ToolError:
    return ToolError(f"{VERIFICATION_FAILED}: {detail}")


# -- phase 1: what every hunk does ----------------------------------------------------------------------


@dataclass
class Change:
    """One hunk, verified: the file it touches, its old and new text, and its diff."""

    type: ChangeType
    path: str
    old: str
    new: str
    bom: bool
    move_path: str | None = None
    source: bytes | None = None
    """The bytes ``old`` was read from (update and delete), to notice a change before applying."""
    diff: str = ""
    additions: int = 0
    deletions: int = 0
    hunk: Hunk | None = field(default=None, repr=False)

    @property
    def target(self) -> str:
        """Where the new text goes: the destination of a move, else the file itself."""
        return self.move_path or self.path

    def entry(self, base: str) -> dict[str, Any]:
        """The ``files[i]`` metadata of this change."""
        entry: dict[str, Any] = {
            "filePath": self.path,
            "relativePath": relative(base, self.target),
            "type": self.type,
            "patch": self.diff,
            "additions": self.additions,
            "deletions": self.deletions,
        }
        if self.move_path is not None:
            entry["movePath"] = self.move_path
        return entry


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _plan_add(hunk: AddFile, path: str) -> Change:
    contents = hunk.contents
    if contents and not contents.endswith("\n"):
        contents += "\n"
    new, bom = files.split_bom(contents)
    added, removed = files.count_changes("", new)
    return Change(
        "add",
        path,
        "",
        new,
        bom,
        diff=files.diff_for(path, "", new),
        additions=added,
        deletions=removed,
        hunk=hunk,
    )


def _plan_update(
    hunk: UpdateFile, path: str, move_path: str | None, source: files.Target | bytes | None
) -> Change:
    """The update (or move) of ``path``: its bytes are ``source``'s (a pinned file, or bytes read
    already; ``None`` when there is no file)."""
    data = source
    if isinstance(source, files.Target):
        try:
            data = _read_pinned(source)
        except OSError as error:
            raise _verification(_node_message(error, "open", path)) from None
    if data is None:
        raise _verification(f"Failed to read file to update: {path}")
    old, bom = files.decode(data)
    try:
        new = derive_new_contents(old, hunk.chunks, path)
    except PatchError as error:
        raise _verification(f"Error: {error}") from None
    new, new_bom = files.split_bom(new)
    added, removed = files.count_changes(old, new)
    return Change(
        "move" if move_path is not None else "update",
        path,
        old,
        new,
        bom or new_bom,
        move_path=move_path,
        source=data,
        diff=files.diff_for(path, old, new),
        additions=added,
        deletions=removed,
        hunk=hunk,
    )


def _plan_delete(hunk: DeleteFile, path: str, source: files.Target | bytes) -> Change:
    """The deletion of ``path``: its bytes are ``source``'s (a pinned file, or bytes read already)."""
    if isinstance(source, files.Target):
        try:
            found = source.read_bytes()
        except IsADirectoryError:
            raise _verification(_node_message(OSError(errno.EISDIR, ""), "read", None)) from None
        except OSError as error:
            raise _verification(_node_message(error, "open", path)) from None
        if found is None:
            raise _verification(_node_message(OSError(errno.ENOENT, ""), "open", path))
        data = found
    else:
        data = source
    old, bom = files.decode(data)
    return Change(
        "delete",
        path,
        old,
        "",
        bom,
        source=data,
        diff=files.diff_for(path, old, ""),
        additions=0,
        deletions=len(old.split("\n")),
        hunk=hunk,
    )


def _empty_patch_error(text: str) -> ToolError:
    normal = js_trim(text.replace("\r\n", "\n").replace("\r", "\n"))
    if normal == EMPTY_PATCH:
        return ToolError("patch rejected: empty patch")
    return _verification("no hunks found")


@dataclass
class Verified:
    """Phase 1's outcome: the changes, and the real locations judged for them (the only places outside
    the project that phase 3 may write, however the paths' symlinks change meanwhile)."""

    changes: list[Change]
    judged: set[str]


def _read_pinned(target: files.Target) -> bytes | None:
    """The pinned file's bytes; ``None`` when there is no regular file (absent or a directory)."""
    try:
        return target.read_bytes()
    except IsADirectoryError:
        return None


async def _verify(hunks: list[Hunk], ctx: ToolContext) -> Verified:
    """Phase 1: guard, read and compute every hunk in order; nothing is written.

    Each path is pinned (:func:`boundary.pinned`): the guard judges where the file really is, and the
    file read is that one.
    """
    changes = []
    judged: set[str] = set()
    for hunk in hunks:
        path = str(ctx.resolve(hunk.path))
        try:
            async with boundary.pinned(ctx, path) as target:
                judged.add(target.location)
                if isinstance(hunk, AddFile):
                    change = await asyncio.to_thread(_plan_add, hunk, path)
                elif isinstance(hunk, DeleteFile):
                    change = await asyncio.to_thread(_plan_delete, hunk, path, target)
                else:
                    move_path = str(ctx.resolve(hunk.move_path)) if hunk.move_path else None
                    change = await asyncio.to_thread(_plan_update, hunk, path, move_path, target)
                    if move_path is not None:
                        async with boundary.pinned(ctx, move_path) as destination:
                            judged.add(destination.location)
                if change.type in ("delete", "move") and await asyncio.to_thread(os.path.islink, path):
                    # what is removed is the name itself (the link, not what it leads to): judged too
                    async with boundary.pinned(ctx, path, follow=False) as name:
                        judged.add(name.location)
        except OSError as error:
            raise _verification(_node_message(error, "open", path)) from None
        changes.append(change)
    return Verified(changes, judged)


# -- phase 3: locks, snapshots, applying, rolling back --------------------------------------------------


def _touched(changes: Iterable[Change]) -> list[str]:
    """Every path a change writes or removes, each once, in patch order."""
    seen: dict[str, None] = {}
    for change in changes:
        seen.setdefault(change.path)
        if change.move_path is not None:
            seen.setdefault(change.move_path)
    return list(seen)


@contextlib.asynccontextmanager
async def _hold_locks(paths: Iterable[str]) -> AsyncIterator[None]:
    """Hold the edit lock of every path, taken in the order of the lock files' names.

    Two paths naming the same file share one lock file, which is taken once (a second ``flock`` on it
    from this process would wait for ourselves).
    """
    locks = {str(files.lock_path(path)): path for path in paths}
    async with contextlib.AsyncExitStack() as stack:
        for key in sorted(locks):
            await stack.enter_async_context(files.file_lock(locks[key]))
        yield


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


#: Whether phase 3 may write at a real location: inside the project, or a location judged in phase 1.
Allowed = Callable[[str], bool]


def _write_guarded(path: str, data: bytes, allowed: Allowed) -> None:
    """Write ``path`` atomically through its pinned directory, only when where it really is now is
    ``allowed`` (a symlink changed since phase 1 cannot send the write outside the project)."""
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


class _ApplyFailed(Exception):
    def __init__(self, path: str, error: OSError, syscall: str) -> None:
        super().__init__(path)
        self.path, self.error, self.syscall = path, error, syscall


def _same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


#: Said of a patch that was stopped before its commit.
NOT_APPLIED = "The patch was not applied: no file was modified."


def _apply_all(
    changes: list[Change], snapshots: dict[str, Snapshot], base: str, allowed: Allowed, abort: AbortSignal
) -> None:
    """Make every change, all or none: stage every new content beside its target (the abort is looked
    at between two files; an abort or a failure removes what was staged), then commit by renames and
    removals, which nothing interrupts; a commit failing part way puts back everything touched from the
    snapshots. Raises a ToolError saying which."""
    created: list[str] = []
    for change in changes:
        if change.type != "delete":
            for folder in _missing_parents(change.target):
                if folder not in created:
                    created.append(folder)
    staged: dict[int, _Staged] = {}
    try:
        for index, change in enumerate(changes):
            if abort.aborted:
                raise AbortedError(NOT_APPLIED)
            if change.type == "delete":
                continue
            try:
                staged[index] = _stage_guarded(change.target, files.encode(change.new, change.bom), allowed)
            except OSError as error:
                raise _ApplyFailed(change.target, error, "open") from error
    except BaseException as stopped:
        _discard(staged.values())
        _remove_created(created)
        if isinstance(stopped, _ApplyFailed):
            raise _failure(stopped, base, [], NOT_APPLIED) from None
        raise
    touched: list[str] = []
    committed: set[int] = set()
    try:
        for index, change in enumerate(changes):
            if change.type != "delete":
                touched.append(change.target)
                try:
                    _commit_guarded(staged[index])
                except OSError as error:
                    raise _ApplyFailed(change.target, error, "open") from error
                committed.add(index)
            if change.type == "delete" or (
                change.type == "move"
                and change.move_path is not None
                and not _same_file(change.path, change.move_path)
            ):
                touched.append(change.path)
                try:
                    _remove_guarded(change.path, allowed)
                except OSError as error:
                    raise _ApplyFailed(change.path, error, "unlink") from error
    except _ApplyFailed as failure:
        _discard(one for index, one in staged.items() if index not in committed)
        not_restored = _roll_back(touched, snapshots, created, allowed)
        if not_restored:
            listed = "; ".join(f"{relative(base, path)} ({reason})" for path, reason in not_restored)
            after = f"The changes already made could not all be undone. Not restored: {listed}"
        else:
            after = "The changes already made were undone: no file was modified."
        raise _failure(failure, base, not_restored, after) from None


def _failure(failure: _ApplyFailed, base: str, not_restored: list[Any], after: str) -> ToolError:
    verb = "delete" if failure.syscall == "unlink" else "write"
    return ToolError(
        f"apply_patch failed: could not {verb} {relative(base, failure.path)}: "
        f"{_node_message(failure.error, failure.syscall, failure.path)}\n{after}"
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


def _refresh(change: Change, data: bytes | None) -> Change:
    """``change`` computed again from ``data``, what its source file holds now (``None``: no file)."""
    if data is None:
        if change.type == "delete":
            raise _verification(_node_message(OSError(errno.ENOENT, ""), "open", change.path))
        raise _verification(f"Failed to read file to update: {change.path}")
    if isinstance(change.hunk, UpdateFile):
        return _plan_update(change.hunk, change.path, change.move_path, data)
    assert isinstance(change.hunk, DeleteFile)
    return _plan_delete(change.hunk, change.path, data)


def _apply(changes: list[Change], base: str, allowed: Allowed, abort: AbortSignal) -> list[Change]:
    """Phase 3, the locks held: keep a copy of every touched path, redo stale changes, apply all (or
    none: see :func:`_apply_all`)."""
    snapshots = {}
    for path in _touched(changes):
        if abort.aborted:
            raise AbortedError(NOT_APPLIED)
        try:
            snapshots[path] = Snapshot.take(path)
        except OSError as error:
            raise ToolError(
                f"apply_patch failed: could not keep a copy of {relative(base, path)} to undo the patch "
                f"with: {_node_message(error, 'open', path)}\nNo file was modified."
            ) from None
    for path, snapshot in snapshots.items():
        if not allowed(snapshot.real):
            # a link on the path changed since phase 1 and now leads outside what was judged
            raise ToolError(
                f"apply_patch failed: {relative(base, path)} changed while the permission was asked and now "
                "leads outside the project\nNo file was modified."
            )
    fresh = [
        change
        if change.type == "add" or snapshots[change.path].data == change.source
        else _refresh(change, snapshots[change.path].data)
        for change in changes
    ]
    _apply_all(fresh, snapshots, base, allowed, abort)
    return fresh


# -- the tool -------------------------------------------------------------------------------------------


def _summary(changes: list[Change], base: str) -> str:
    lines = []
    for change in changes:
        if change.type == "add":
            lines.append(f"A {relative(base, change.path)}")
        elif change.type == "delete":
            lines.append(f"D {relative(base, change.path)}")
        else:
            lines.append(f"M {relative(base, change.target)}")
    return SUCCESS + "\n" + "\n".join(lines)


async def _verify_ask_apply(hunks: list[Hunk], ctx: ToolContext, base: str) -> list[Change]:
    """Phases 1 to 3; an abort before the commit raises :class:`AbortedError` with nothing written."""
    verified = await unless_aborted(_verify(hunks, ctx), ctx)
    changes = verified.changes

    def allowed(location: str) -> bool:
        return location in verified.judged or boundary.is_inside_location(
            location, ctx.directory, ctx.worktree
        )

    patterns = [relative(base, change.path) for change in changes]
    asked = ctx.ask(
        "edit",
        patterns,
        always=["*"],
        metadata={
            "filepath": ", ".join(patterns),
            "diff": "".join(change.diff + "\n" for change in changes),
            "files": [change.entry(base) for change in changes],
        },
    )
    await unless_aborted(asked, ctx)
    await unless_aborted(boundary.ask_config(ctx, sorted(verified.judged)), ctx)

    async with contextlib.AsyncExitStack() as locks:
        await unless_aborted(locks.enter_async_context(_hold_locks(_touched(changes))), ctx)
        # not cancelled by the abort: it looks at the abort itself until the commit, then ends it
        return await to_end(_apply, changes, base, allowed, ctx.abort)


async def execute(params: Any, ctx: ToolContext) -> ToolResult:
    """Verify every hunk, ask once, then apply them all (or none)."""
    text = params.patchText
    if not text:
        raise ToolError("patchText is required")
    try:
        hunks = parse_patch(text)
    except PatchError as error:
        raise _verification(f"Error: {error}") from None
    if not hunks:
        raise _empty_patch_error(text)

    base = str(ctx.worktree or ctx.directory)
    try:
        changes = await _verify_ask_apply(hunks, ctx, base)
    except AbortedError as aborted:
        if str(aborted) == INTERRUPTED:  # stopped before its commit: say that nothing changed
            raise AbortedError(NOT_APPLIED) from None
        raise

    targets = [
        (change.target, relative(base, change.target)) for change in changes if change.type != "delete"
    ]
    report = await diagnostics(ctx, [path for path, _ in targets])  # applied: an abort only skips it
    output = _summary(changes, base) + report.for_patch(targets)
    return ToolResult(
        title=output,
        output=output,
        metadata={
            "diff": "".join(change.diff + "\n" for change in changes),
            "files": [change.entry(base) for change in changes],
            "diagnostics": lsp.metadata(report),
        },
    )


def init() -> dict[str, Any]:
    """The tool's definition, built on first use. It answers its abort itself (``handles_abort``): an
    abort before the commit ends the call with nothing written, one during the commit waits for its end,
    and the result says which."""
    return {"parameters_from": parameters, "execute": execute, "handles_abort": True}
