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
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TypeVar

from .. import boundary, files
from ..context import ToolContext
from ..contract import ToolResult
from ..errors import ToolError
from ..loops import to_end
from ..lsp import diagnostics as lsp
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
    async with files.file_lock(path), contextlib.AsyncExitStack() as stack:
        try:
            target = await stack.enter_async_context(boundary.pinned(ctx, path))
        except OSError as error:
            raise ToolError(f"Cannot write {path}: {reason(error)}") from None
        yield target


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

    async with pinned(ctx, path) as target:
        if params.oldString == "":
            if await to_end(target.exists):
                raise ToolError(EMPTY_OLD)
            old_text = ""
            new_text, bom = files.split_bom(params.newString)
        else:
            old_text, new_text, bom = await to_end(_prepare, target, params)
        diff = await to_end(files.diff_for, path, old_text, new_text)
        await ctx.ask("edit", [title], always=["*"], metadata={"filepath": path, "diff": diff})
        await to_end(write_atomically, target, new_text, bom)

    additions, deletions = await to_end(files.count_changes, old_text, new_text)
    filediff = {"file": path, "patch": diff, "additions": additions, "deletions": deletions}
    ctx.metadata(metadata={"diff": diff, "filediff": filediff, "diagnostics": {}})
    report = await lsp.after_edit(ctx, [path])
    return ToolResult(
        title=title,
        output=OUTPUT + report.for_edit(path),
        metadata={"diagnostics": lsp.metadata(report), "diff": diff, "filediff": filediff},
    )


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    return {"parameters_from": parameters, "execute": execute}
