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

Beyond OpenCode: phase 3 is transactional (the writing is :mod:`._patch_write`'s). Before anything is
written, the bytes, mode and symlink of every touched path are kept in memory; if a write or delete
fails part way (a read-only file, a full disk), every path already touched is put back as it was,
directories the call created are removed again, and the call fails with a message that says so. A
``Move to`` naming the file itself is an update (OpenCode would delete the file after writing it).

LSP diagnostics come from :mod:`opencode_cli.lsp.diagnostics`. Not here yet: formatters and file-watcher
events.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

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
from ._patch_write import NOT_APPLIED, Allowed, FileWrite, hold_locks, take_snapshots, write_all
from ._paths import node_message, relative
from .edit import diagnostics

if TYPE_CHECKING:
    from pydantic import BaseModel

VERIFICATION_FAILED = "apply_patch verification failed"
SUCCESS = "Success. Updated the following files:"
EMPTY_PATCH = "*** Begin Patch\n*** End Patch"

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

    def write(self) -> FileWrite:
        """What phase 3 writes and removes for this change."""
        if self.type == "delete":
            return FileWrite(None, remove=self.path)
        removed = self.path if self.type == "move" else None
        return FileWrite(self.target, files.encode(self.new, self.bom), removed)


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
    if isinstance(source, files.Target):
        try:
            data = _read_pinned(source)
        except OSError as error:
            raise _verification(node_message(error, "open", path)) from None
    else:
        data = source
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
            raise _verification(node_message(OSError(errno.EISDIR, ""), "read", None)) from None
        except OSError as error:
            raise _verification(node_message(error, "open", path)) from None
        if found is None:
            raise _verification(node_message(OSError(errno.ENOENT, ""), "open", path))
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
            raise _verification(node_message(error, "open", path)) from None
        changes.append(change)
    return Verified(changes, judged)


# -- phase 3: applying, all or nothing (:mod:`._patch_write`) -------------------------------------------


def _touched(changes: Iterable[Change]) -> list[str]:
    """Every path a change writes or removes, each once, in patch order."""
    seen: dict[str, None] = {}
    for change in changes:
        seen.setdefault(change.path)
        if change.move_path is not None:
            seen.setdefault(change.move_path)
    return list(seen)


def _refresh(change: Change, data: bytes | None) -> Change:
    """``change`` computed again from ``data``, what its source file holds now (``None``: no file)."""
    if data is None:
        if change.type == "delete":
            raise _verification(node_message(OSError(errno.ENOENT, ""), "open", change.path))
        raise _verification(f"Failed to read file to update: {change.path}")
    if isinstance(change.hunk, UpdateFile):
        return _plan_update(change.hunk, change.path, change.move_path, data)
    assert isinstance(change.hunk, DeleteFile)
    return _plan_delete(change.hunk, change.path, data)


def _apply(changes: list[Change], base: str, allowed: Allowed, abort: AbortSignal) -> list[Change]:
    """Phase 3, the locks held: keep a copy of every touched path, redo stale changes, apply all (or
    none: see :func:`._patch_write.write_all`)."""
    snapshots = take_snapshots(_touched(changes), base, abort)
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
    write_all([change.write() for change in fresh], snapshots, base, allowed, abort)
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
        await unless_aborted(locks.enter_async_context(hold_locks(_touched(changes), ctx.env)), ctx)
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
