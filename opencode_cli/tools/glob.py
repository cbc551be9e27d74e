"""``glob``: list the files under a directory whose names match a glob, through ``rg --files``.

ripgrep does the walk, so its rules apply: ``.gitignore`` (inside a git repository), ``.ignore`` and
``.rgignore`` are honoured, hidden files and directories are skipped, symbolic links are not followed,
and the pattern has gitignore semantics (without a ``/`` it matches a name at any depth). A path the
pattern itself matches is listed even when it is hidden or ignored, as ``rg --glob`` always does. Paths
come in ripgrep's order (a parallel walk: unsorted); at most 100 are shown.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from .. import boundary
from ..context import ToolContext
from ..errors import ToolError
from ..results import ToolResult
from . import _ripgrep
from ._paths import worktree_relative

if TYPE_CHECKING:
    from pydantic import BaseModel

LIMIT = 100
TRUNCATED_NOTICE = (
    f"(Results are truncated: showing first {LIMIT} results. Consider using a more specific path or pattern.)"
)


@functools.cache
def parameters() -> type[BaseModel]:
    """The glob tool's arguments, as a pydantic model made on first use (see :mod:`.plain_args`)."""
    from pydantic import Field

    from ._arguments import Arguments

    class GlobParameters(Arguments):
        """Arguments of the glob tool."""

        pattern: str = Field(description="The glob to match file paths against")
        path: str | None = Field(
            None,
            description=(
                "The directory to search in; the current working directory when left out. To use that "
                'default, leave this field out entirely: do not pass "undefined" or "null". When given, it '
                "must be the path of a directory."
            ),
        )

    return GlobParameters


def _present(**values: Any) -> dict[str, Any]:
    """The keys whose value is set (as an object with ``undefined`` members reaches JSON)."""
    return {key: value for key, value in values.items() if value is not None}


async def execute(params: Any, ctx: ToolContext) -> ToolResult:
    """List up to 100 files matching ``pattern`` under ``path``."""
    await ctx.ask(
        "glob",
        [params.pattern],
        always=["*"],
        metadata=_present(pattern=params.pattern, path=params.path),
    )
    search = str(ctx.resolve(params.path or "."))
    if os.path.exists(search) and not os.path.isdir(search):
        raise ToolError(f"glob path must be a directory: {search}")  # said before the boundary asks

    def parse(line: bytes) -> str:
        relative = _ripgrep.relative_path(line.decode("utf-8", "replace"))
        return os.path.normpath(os.path.join(search, relative))

    # The directory is opened, judged where it really is, and ripgrep walks that very directory.
    async with boundary.opened(ctx, search) as place:
        if place is not None and not place.is_dir:
            raise ToolError(f"glob path must be a directory: {search}")
        outcome = await _ripgrep.run(
            ["--files", f"--glob={params.pattern}", "--glob=!**/.git/**", "."],
            cwd=search if place is None else place.for_child,
            limit=LIMIT,
            parse=parse,
            abort=ctx.abort,
            env=ctx.env,
            pass_fds=() if place is None else (place.fd,),
        )
    files = _ripgrep.judge(outcome)
    truncated = len(files) == LIMIT
    if not files:
        output = "No files found"
    else:
        output = "\n".join(files)
        if truncated:
            output += "\n\n" + TRUNCATED_NOTICE
    return ToolResult(
        title=worktree_relative(ctx, search),
        output=output,
        metadata={"count": len(files), "truncated": truncated},
    )


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    return {"parameters_from": parameters, "execute": execute}
