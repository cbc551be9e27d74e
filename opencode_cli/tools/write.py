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

import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .. import boundary, files
from ..context import ToolContext
from ..contract import ToolResult
from ..lsp import diagnostics as lsp
from ._paths import worktree_relative
from .edit import finish, read_existing, write_atomically

OUTPUT = "Wrote file successfully."


class WriteParameters(BaseModel):
    """Arguments of the write tool."""

    model_config = ConfigDict(extra="ignore")

    content: str = Field(description="The complete content the file should hold")
    filePath: str = Field(description="Absolute path of the file to write (must be absolute, not relative)")


def _old_content(path: str) -> tuple[bool, str, bool]:
    """``(exists, text without BOM, had a BOM)``."""
    if not os.path.exists(path):
        return False, "", False
    text, bom = read_existing(path)
    return True, text, bom


def _diff(path: str, old: str, new: str) -> str:
    # unlike edit, write shows the diff of the texts as they are (line endings not normalised)
    return files.trim_diff(files.unified_diff(path, old, new))


async def execute(params: WriteParameters, ctx: ToolContext) -> ToolResult:
    """Write the file."""
    path = str(ctx.resolve(params.filePath))
    await boundary.assert_external_directory(ctx, path, kind="file")
    title = worktree_relative(ctx, path)

    async with files.file_lock(path):
        exists, old_text, old_bom = await finish(_old_content, path)
        new_text, new_bom = files.split_bom(params.content)
        diff = await finish(_diff, path, old_text, new_text)
        await ctx.ask("edit", [title], always=["*"], metadata={"filepath": path, "diff": diff})
        await finish(write_atomically, path, new_text, old_bom or new_bom)

    report = await lsp.after_edit(ctx, [path])
    return ToolResult(
        title=title,
        output=OUTPUT + report.for_write(path),
        metadata={"diagnostics": lsp.metadata(report), "filepath": path, "exists": exists},
    )


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    return {"parameters": WriteParameters, "execute": execute}
