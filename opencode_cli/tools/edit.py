"""``edit``: replace a string in a file, tolerating the small slips models make (builtin spec §6).

The replacement itself is :func:`opencode_cli.tools._replace.replace`. This module does the rest of
the call, holding the file's edit lock (so concurrent edits of one file, from any task, thread or
process, are applied one after the other, each on the latest content): it pins the file (its directory
held open, :func:`opencode_cli.boundary.pinned`) and runs the external-directory check on where the
file really is, reads it, keeps its line endings and byte-order mark, asks the ``edit`` permission with
the diff, and writes atomically into the pinned directory, so a symlink changed meanwhile cannot move
the read or the write. An empty ``oldString`` creates a new file.

Once written, the file's language servers are told and their errors appended
(:mod:`opencode_cli.lsp.diagnostics`). Not done yet: formatters do not exist in this package.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .. import boundary, files
from ..context import ToolContext
from ..contract import unless_aborted
from ..errors import INTERRUPTED, AbortedError, ToolError
from ..loops import to_end
from ..lsp import diagnostics as lsp
from ..results import ToolResult
from ._paths import reason, worktree_relative
from ._replace import EMPTY_OLD, IDENTICAL, replace

if TYPE_CHECKING:
    from pydantic import BaseModel

OUTPUT = "Edit applied successfully."
T = TypeVar("T")


@functools.cache
def parameters() -> type[BaseModel]:
    """The edit tool's arguments, as a pydantic model made on first use (see :mod:`.plain_args`)."""
    from pydantic import Field, StrictBool

    from ._arguments import Arguments

    class EditParameters(Arguments):
        """Arguments of the edit tool."""

        filePath: str = Field(description="Absolute path of the file to change")
        oldString: str = Field(description="The exact text to find and replace")
        newString: str = Field(description="The text to put in its place (must differ from oldString)")
        replaceAll: StrictBool | None = Field(
            None, description="Replace every occurrence of oldString instead of exactly one (default false)"
        )

    return EditParameters


# -- helpers shared with write --------------------------------------------------------------------------


def read_existing(target: files.Target) -> tuple[str, bool] | None:
    """The pinned file's text and BOM (``None`` when there is none), OS errors as model-facing errors."""
    try:
        return target.read_text()
    except OSError as error:
        raise ToolError(f"Cannot read {target.path}: {reason(error)}") from None


def write_atomically(target: files.Target, text: str, bom: bool) -> None:
    """Write the pinned file atomically, OS errors as model-facing errors."""
    try:
        target.write(text, bom=bom)
    except OSError as error:
        raise ToolError(f"Cannot write {target.path}: {reason(error)}") from None


@contextlib.asynccontextmanager
async def pinned(ctx: ToolContext, path: str) -> AsyncIterator[files.Target]:
    """Hold ``path``'s edit lock and pin it (:func:`boundary.pinned`): what is read and written is the
    file whose real location was judged, however the path's symlinks change meanwhile."""
    async with files.file_lock(path, ctx.env), contextlib.AsyncExitStack() as stack:
        try:
            target = await stack.enter_async_context(boundary.pinned(ctx, path))
        except OSError as error:
            raise ToolError(f"Cannot write {path}: {reason(error)}") from None
        yield target


#: Said of a write stopped by its abort before the file was touched.
NOT_WRITTEN = "The file was not written."

#: What a preparation gives :func:`guarded_write`: the new text, whether it gets a BOM, and a value of the
#: tool's own to hand back.
Prepared = tuple[str, bool, T]


async def guarded_write(
    ctx: ToolContext, path: str, prepare: Callable[[files.Target], Awaitable[Prepared[T]]]
) -> T:
    """Write one file, all or nothing under interruption: pin ``path`` (its lock held) and run
    ``prepare(target)`` (the reads, the diff, the ask), which ``ctx.abort`` stops (then
    :class:`AbortedError` says that the file was not written); then write atomically, to the end
    whatever comes meanwhile. Returns the preparation's own value."""
    async with contextlib.AsyncExitStack() as stack:

        async def ready() -> tuple[files.Target, Prepared[T]]:
            target = await stack.enter_async_context(pinned(ctx, path))
            prepared = await prepare(target)
            await boundary.ask_config(ctx, [target.location])  # the project's own rules: not edit's alone
            return target, prepared

        try:
            target, (text, bom, value) = await unless_aborted(ready(), ctx)
        except AbortedError as aborted:
            if str(aborted) == INTERRUPTED:
                raise AbortedError(NOT_WRITTEN) from None
            raise
        if ctx.abort.aborted:  # the last look, between the preparation and the write
            raise AbortedError(NOT_WRITTEN)
        await to_end(write_atomically, target, text, bom)
    return value


async def diagnostics(ctx: ToolContext, paths: list[str]) -> lsp.Report:
    """The language servers' report after an edit; none once the call is aborted (the edit is made: an
    abort from here on only skips the wait for the servers)."""
    if ctx.abort.aborted:
        return lsp.Report()
    try:
        return await unless_aborted(lsp.after_edit(ctx, paths), ctx)
    except AbortedError:
        return lsp.Report()


# -- the tool -------------------------------------------------------------------------------------------


def _line_ending(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _to_ending(text: str, ending: str) -> str:
    text = text.replace("\r\n", "\n")
    return text if ending == "\n" else text.replace("\n", "\r\n")


def _prepare(target: files.Target, params: Any) -> tuple[str, str, bool]:
    """``(old text, new text, BOM)`` of an edit of an existing file, raising the model-facing errors."""
    path = target.path
    try:
        existing = target.read_text()
    except IsADirectoryError:
        raise ToolError(f"Path is a directory, not a file: {path}") from None
    except OSError as error:
        raise ToolError(f"Cannot read {path}: {reason(error)}") from None
    if existing is None:
        raise ToolError(f"File {path} not found")
    old_text, had_bom = existing
    ending = _line_ending(old_text)
    old = _to_ending(params.oldString, ending)
    new = _to_ending(params.newString, ending)
    replaced = replace(old_text, old, new, bool(params.replaceAll))
    new_text, new_bom = files.split_bom(replaced)
    return old_text, new_text, had_bom or new_bom


async def execute(params: Any, ctx: ToolContext) -> ToolResult:
    """Apply one edit (or create a file when ``oldString`` is empty)."""
    if not params.filePath:
        raise ToolError("filePath is required")
    if params.oldString == params.newString:
        raise ToolError(IDENTICAL)
    path = str(ctx.resolve(params.filePath))
    title = worktree_relative(ctx, path)

    async def prepare(target: files.Target) -> Prepared[tuple[str, str, str]]:
        if params.oldString == "":
            if await to_end(target.exists):
                raise ToolError(EMPTY_OLD)
            old_text = ""
            new_text, bom = files.split_bom(params.newString)
        else:
            old_text, new_text, bom = await to_end(_prepare, target, params)
        diff = await to_end(files.diff_for, path, old_text, new_text)
        await ctx.ask("edit", [title], always=["*"], metadata={"filepath": path, "diff": diff})
        return new_text, bom, (old_text, new_text, diff)

    old_text, new_text, diff = await guarded_write(ctx, path, prepare)
    additions, deletions = await to_end(files.count_changes, old_text, new_text)
    filediff = {"file": path, "patch": diff, "additions": additions, "deletions": deletions}
    ctx.metadata(metadata={"diff": diff, "filediff": filediff, "diagnostics": {}})
    report = await diagnostics(ctx, [path])
    return ToolResult(
        title=title,
        output=OUTPUT + report.for_edit(path),
        metadata={"diagnostics": lsp.metadata(report), "diff": diff, "filediff": filediff},
    )


def init() -> dict[str, Any]:
    """The tool's definition, built on first use. It answers its abort itself (see
    :func:`guarded_write`): stopped before the write, the file is untouched and the result says so."""
    return {"parameters_from": parameters, "execute": execute, "handles_abort": True}
