"""``write``: create a file or replace its whole content (builtin spec §7).

The content is written exactly as given (no line-ending conversion), except that a byte-order mark is
kept when the old file had one and never doubled. Parent directories are created, the write is atomic
(a new file gets mode 0644, an existing one keeps its mode, a symlink is written through), and the
``edit`` permission is asked with the diff, all under the file's edit lock so a concurrent ``edit`` of
the same file cannot interleave.

Once written, the file's language servers are told and their errors appended
(:mod:`opencode_cli.lsp.diagnostics`). Not done yet: formatters do not exist in this package.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from .. import files
from ..context import ToolContext
from ..loops import to_end
from ..lsp import diagnostics as lsp
from ..results import ToolResult
from ._paths import worktree_relative
from .edit import Prepared, diagnostics, guarded_write, read_existing

if TYPE_CHECKING:
    from pydantic import BaseModel

OUTPUT = "Wrote file successfully."


@functools.cache
def parameters() -> type[BaseModel]:
    """The write tool's arguments, as a pydantic model made on first use (see :mod:`.plain_args`)."""
    from pydantic import Field

    from ._arguments import Arguments

    class WriteParameters(Arguments):
        """Arguments of the write tool."""

        content: str = Field(description="The complete content the file should hold")
        filePath: str = Field(
            description="Absolute path of the file to write (must be absolute, not relative)"
        )

    return WriteParameters


def _old_content(target: files.Target) -> tuple[bool, str, bool]:
    """``(exists, text without BOM, had a BOM)``."""
    existing = read_existing(target)
    if existing is None:
        return False, "", False
    return True, *existing


def _diff(path: str, old: str, new: str) -> str:
    # unlike edit, write shows the diff of the texts as they are (line endings not normalised)
    return files.trim_diff(files.unified_diff(path, old, new))


async def execute(params: Any, ctx: ToolContext) -> ToolResult:
    """Write the file."""
    path = str(ctx.resolve(params.filePath))
    title = worktree_relative(ctx, path)

    async def prepare(target: files.Target) -> Prepared[bool]:
        exists, old_text, old_bom = await to_end(_old_content, target)
        new_text, new_bom = files.split_bom(params.content)
        diff = await to_end(_diff, path, old_text, new_text)
        await ctx.ask("edit", [title], always=["*"], metadata={"filepath": path, "diff": diff})
        return new_text, old_bom or new_bom, exists

    exists = await guarded_write(ctx, path, prepare)
    report = await diagnostics(ctx, [path])
    return ToolResult(
        title=title,
        output=OUTPUT + report.for_write(path),
        metadata={"diagnostics": lsp.metadata(report), "filepath": path, "exists": exists},
    )


def init() -> dict[str, Any]:
    """The tool's definition, built on first use. It answers its abort itself (see
    :func:`~.edit.guarded_write`): stopped before the write, the file is untouched and the result says so."""
    return {"parameters_from": parameters, "execute": execute, "handles_abort": True}
