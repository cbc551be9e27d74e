"""``grep``: search file contents with a regular expression, through ``rg --json``.

Hidden files are searched, ``.gitignore`` (inside a git repository), ``.ignore`` and ``.rgignore`` are
honoured and ``.git`` directories are skipped; ``include`` is handed to ripgrep as a ``--glob``. The
first 100 matching lines are shown in ripgrep's order, grouped by file. ripgrep is killed as soon as the
101st match arrives, so a pattern that matches everywhere costs little.
"""

from __future__ import annotations

import base64
import functools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import boundary
from ..context import ToolContext
from ..errors import ToolError
from ..results import ToolResult
from . import _ripgrep

if TYPE_CHECKING:
    from pydantic import BaseModel

LIMIT = 100
MAX_LINE_LENGTH = 2000
MAX_RECORD_BYTES = 64 * 1024
NO_MATCHES = "No files found"
TRUNCATED_NOTICE = "(Results truncated. Consider using a more specific path or pattern.)"


@functools.cache
def parameters() -> type[BaseModel]:
    """The grep tool's arguments, as a pydantic model made on first use (see :mod:`.plain_args`)."""
    from pydantic import Field

    from ._arguments import Arguments

    class GrepParameters(Arguments):
        """Arguments of the grep tool."""

        pattern: str = Field(description="The regular expression to look for in the contents of files")
        path: str | None = Field(
            None, description="The directory to search in; the current working directory when left out."
        )
        include: str | None = Field(
            None, description='A glob naming the files to search (e.g. "*.js", "*.{ts,tsx}")'
        )

    return GrepParameters


@dataclass(frozen=True)
class Match:
    """One matching line: the file (absolute), its 1-based number and its text."""

    path: str
    line: int
    text: str


def _text(value: Any) -> str:
    """A ripgrep JSON string: ``{"text": ...}``, or ``{"bytes": base64}`` for data that is not UTF-8."""
    if "text" in value:
        return str(value["text"])
    return base64.b64decode(value["bytes"]).decode("utf-8", "replace")


def _clip(text: str) -> str:
    """The line without its terminator, cut to 2000 UTF-16 code units (JavaScript length) plus ``...``."""
    if text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    if len(text) <= MAX_LINE_LENGTH // 2:
        return text
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) <= 2 * MAX_LINE_LENGTH:
        return text
    # A surrogate pair cut in half leaves a lone high surrogate, which "ignore" drops.
    return units[: 2 * MAX_LINE_LENGTH].decode("utf-16-le", "ignore") + "..."


def _parser(base: str, single_file: str | None) -> Callable[[bytes], Match | None]:
    """A parser of ``rg --json`` lines into :class:`Match` rows, paths made absolute under ``base``."""

    def parse(line: bytes) -> Match | None:
        if b'"match"' not in line:
            return None  # begin, end, context and summary records
        try:
            record = json.loads(line)
        except ValueError:
            raise ToolError("Invalid ripgrep JSON output") from None
        if not isinstance(record, dict) or record.get("type") != "match":
            return None
        try:
            data = record["data"]
            number = data["line_number"]
            text = _text(data["lines"])
            path = single_file or os.path.normpath(
                os.path.join(base, _ripgrep.relative_path(_text(data["path"])))
            )
        except (KeyError, TypeError, ValueError):
            raise ToolError("Invalid ripgrep match output") from None
        if not isinstance(number, int):
            raise ToolError("Invalid ripgrep match output")
        return Match(path, number, _clip(text))

    return parse


def _format(rows: list[Match], truncated: bool) -> str:
    lines = [f"Found {len(rows)} matches" + (" (more matches available)" if truncated else "")]
    current = None
    for row in rows:
        if row.path != current:
            if current is not None:
                lines.append("")
            current = row.path
            lines.append(f"{row.path}:")
        lines.append(f"  Line {row.line}: {row.text}")
    if truncated:
        lines += ["", TRUNCATED_NOTICE]
    return "\n".join(lines)


def _present(**values: Any) -> dict[str, Any]:
    """The keys whose value is set (as an object with ``undefined`` members reaches JSON)."""
    return {key: value for key, value in values.items() if value is not None}


async def execute(params: Any, ctx: ToolContext) -> ToolResult:
    """Search for ``pattern`` under ``path`` (a directory or one file); show up to 100 matching lines."""
    if not params.pattern:
        raise ToolError("pattern is required")
    await ctx.ask(
        "grep",
        [params.pattern],
        always=["*"],
        metadata=_present(pattern=params.pattern, path=params.path, include=params.include),
    )

    requested = str(ctx.resolve(params.path)) if params.path is not None else str(ctx.directory)
    args = ["--json", "--hidden", "--no-messages"]
    if params.include:
        args.append(f"--glob={params.include}")
    args += ["--glob=!**/.git/**", "--", params.pattern]

    # The path is opened, judged where it really is, and ripgrep searches that very file or directory.
    async with boundary.opened(ctx, requested) as place:
        if place is None:
            try:
                os.stat(requested)
            except (FileNotFoundError, NotADirectoryError):
                shown = params.path if params.path is not None else requested
                raise ToolError(f"Search path not found: {shown}") from None
            except OSError as error:
                raise ToolError(f"Cannot access {requested}: {error.strerror or error}") from None
            raise ToolError(f"Cannot access {requested}: it cannot be opened")
        if place.is_dir:
            cwd, target, parse = place.for_child, ".", _parser(requested, None)
        else:
            # Only the named file is searched (upstream v1.18.3 searched its whole directory).
            cwd, target, parse = os.path.dirname(place.location), place.for_child, _parser("", requested)
        outcome = await _ripgrep.run(
            [*args, target],
            cwd=cwd,
            limit=LIMIT,
            parse=parse,
            abort=ctx.abort,
            env=ctx.env,
            max_record=MAX_RECORD_BYTES,
            pass_fds=(place.fd,),
        )
    rows = _ripgrep.judge(outcome, pattern=params.pattern)
    if not rows:
        return ToolResult(
            title=params.pattern, output=NO_MATCHES, metadata={"matches": 0, "truncated": False}
        )
    truncated = len(rows) == LIMIT
    return ToolResult(
        title=params.pattern,
        output=_format(rows, truncated),
        metadata={"matches": len(rows), "truncated": truncated},
    )


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    return {"parameters_from": parameters, "execute": execute}
