"""``read``: show a window of a text file with line numbers, list a directory, or attach an image/PDF.

The path is judged (``external_directory``) and asked for (``read``), then opened once and judged again
as it was opened: only that descriptor is read. What the file's first bytes and extension say decides
what the tool does: an image or a PDF is attached, a binary file is refused, any other file is text,
whose lines are streamed by :mod:`._text_window` (memory does not grow with the file's size).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import io
import os
import stat as stat_module
from typing import IO, TYPE_CHECKING, Any

from .. import boundary, files
from ..context import AbortSignal, ToolContext
from ..errors import ToolError
from ..results import Attachment, ToolResult
from . import _instructions
from ._paths import stat_or_none, worktree_relative
from ._text_window import MAX_BYTES, stream

if TYPE_CHECKING:
    from pydantic import BaseModel

DEFAULT_READ_LIMIT = 2000
MAX_BYTES_LABEL = f"{MAX_BYTES // 1024} KB"
SAMPLE_BYTES = 4096
PREVIEW_LINES = 20

BINARY_EXTENSIONS = frozenset(
    {
        # archives and executables
        ".zip", ".tar", ".gz", ".7z", ".exe", ".dll", ".so", ".class", ".jar", ".war", ".wasm",
        # office documents
        ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp",
        # object files and raw data
        ".bin", ".dat", ".obj", ".o", ".a", ".lib", ".pyc", ".pyo",
    }
)  # fmt: skip
ATTACHABLE = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf"})
# Only the extensions whose type changes what the tool does; anything else reads as text.
EXTENSION_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".jpe": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": "application/pdf",
}


@functools.cache
def parameters() -> type[BaseModel]:
    """The read tool's arguments, as a pydantic model made on first use (see :mod:`.plain_args`)."""
    from pydantic import Field, field_validator
    from pydantic_core import PydanticCustomError

    from ._arguments import Arguments

    class ReadParameters(Arguments):
        """Arguments of the read tool."""

        filePath: str = Field(description="Absolute path of the file or directory to read")
        offset: int | None = Field(
            None, ge=0, description="Line (or directory entry) number to start from, counting from 1"
        )
        limit: int | None = Field(
            None, ge=0, description="Maximum number of lines (or entries) to return (default 2000)"
        )

        @field_validator("offset", "limit", mode="before")
        @classmethod
        def _numbers_only(cls, value: Any) -> Any:
            """Numbers are not parsed out of strings (nor taken from booleans)."""
            if isinstance(value, str | bool | bytes):
                raise PydanticCustomError("int_type", "Input should be a valid integer")
            return value

    return ReadParameters


# -- paths -------------------------------------------------------------------------------------------


def _stat_later(path: str) -> tuple[os.stat_result | None, ToolError | None]:
    """:func:`stat_or_none`, with its error returned instead of raised."""
    try:
        return stat_or_none(path), None
    except ToolError as error:
        return None, error


def _not_found(path: str) -> str:
    """The not-found message, with up to three similarly named siblings."""
    directory, name = os.path.split(path)
    wanted = name.lower()
    try:
        siblings = os.listdir(directory)
    except OSError:
        siblings = []
    siblings.sort(key=lambda entry: entry.encode("utf-8", "surrogateescape"))
    similar = [
        os.path.join(directory, entry)
        for entry in siblings
        if wanted in entry.lower() or entry.lower() in wanted
    ][:3]
    if not similar:
        return f"File not found: {path}"
    return f"File not found: {path}\n\nDid you mean one of these?\n" + "\n".join(similar)


# -- directories ---------------------------------------------------------------------------------------


def _entries(path: str, fd: int | None = None) -> list[str]:
    """Entry names, directories (and links to directories) with a trailing ``/``, in collation order.

    With ``fd`` (a descriptor open on the directory) the listing is of that very directory; ``path`` only
    names it in messages.
    """
    from ..collate import sort

    names = []
    try:
        with os.scandir(path if fd is None else fd) as listing:
            for entry in listing:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                names.append(entry.name + "/" if is_dir else entry.name)
    except OSError as error:
        raise ToolError(f"Cannot read directory {path}: {error.strerror or error}") from None
    return sort(names)


def _read_directory(path: str, title: str, offset: int, limit: int, fd: int | None = None) -> ToolResult:
    entries = _entries(path, fd)
    start = offset - 1
    shown = entries[start : start + limit]
    truncated = start + len(shown) < len(entries)
    if truncated:
        footer = (
            f"(Showing {len(shown)} of {len(entries)} entries. "
            f"Use 'offset' parameter to read beyond entry {offset + len(shown)})"
        )
    else:
        footer = f"({len(entries)} entries)"
    output = "\n".join(
        [
            f"<path>{path}</path>",
            "<type>directory</type>",
            "<entries>",
            "\n".join(shown),
            f"\n{footer}",
            "</entries>",
        ]
    )
    return ToolResult(
        title=title,
        output=output,
        metadata={
            "preview": "\n".join(shown[:PREVIEW_LINES]),
            "truncated": truncated,
            "loaded": [],
            "display": {
                "type": "directory",
                "path": path,
                "entries": shown,
                "offset": offset,
                "totalEntries": len(entries),
                "truncated": truncated,
            },
        },
    )


# -- file type ----------------------------------------------------------------------------------------


def _sniff(sample: bytes) -> str | None:
    """The MIME type given away by a file's first bytes, if any we know."""
    if sample.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if sample.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if sample.startswith(b"GIF8"):
        return "image/gif"
    if sample.startswith(b"BM"):
        return "image/bmp"
    if sample.startswith(b"%PDF-"):
        return "application/pdf"
    if len(sample) >= 12 and sample[:4] == b"RIFF" and sample[8:12] == b"WEBP":
        return "image/webp"
    return None


def _mime(path: str, sample: bytes) -> str:
    sniffed = _sniff(sample)
    if sniffed is not None:
        return sniffed
    return EXTENSION_TYPES.get(os.path.splitext(path)[1].lower(), "text/plain")


#: The bytes that are not control characters (below 9, or between 13 and 32), which ``_is_binary`` counts.
_NOT_CONTROL = bytes(byte for byte in range(256) if not (byte < 9 or 13 < byte < 32))


def _is_binary(path: str, sample: bytes) -> bool:
    if os.path.splitext(path)[1].lower() in BINARY_EXTENSIONS:
        return True
    if not sample:
        return False
    if 0 in sample:
        return True
    control = len(sample.translate(None, _NOT_CONTROL))  # what is left: the control bytes
    return control / len(sample) > 0.3


# -- the tool ------------------------------------------------------------------------------------------


def _read_file(
    path: str,
    title: str,
    offset: int,
    limit: int,
    loaded: list[Any],
    abort: AbortSignal | None,
    handle: IO[bytes],
) -> ToolResult:
    """Read the file from ``handle`` (its bytes from the start; ``path`` only names it)."""
    loaded_paths = [item.path for item in loaded]
    sample = handle.read(SAMPLE_BYTES)
    mime = _mime(path, sample)
    if mime in ATTACHABLE:
        message = "PDF read successfully" if mime == "application/pdf" else "Image read successfully"
        handle.seek(0)
        data = base64.b64encode(handle.read()).decode("ascii")
        return ToolResult(
            title=title,
            output=message,
            metadata={"preview": message, "truncated": False, "loaded": loaded_paths},
            attachments=[Attachment(mime=mime, url=f"data:{mime};base64,{data}")],
        )
    if _is_binary(path, sample):
        raise ToolError(f"Cannot read binary file: {path}")
    handle.seek(0)
    window = stream(handle, offset, limit, abort)

    total = window.count
    if total < offset and not (total == 0 and offset == 1):
        raise ToolError(f"Offset {offset} is out of range for this file ({total} lines)")

    lines = window.lines
    last = offset + len(lines) - 1
    truncated = window.more or window.cut
    if window.cut:
        footer = (
            f"(Output capped at {MAX_BYTES_LABEL}. Showing lines {offset}-{last}. "
            f"Use offset={last + 1} to continue.)"
        )
    elif window.more:
        footer = f"(Showing lines {offset}-{last} of {total}. Use offset={last + 1} to continue.)"
    else:
        footer = f"(End of file - total {total} lines)"
    numbered = "\n".join(f"{offset + index}: {line}" for index, line in enumerate(lines))
    output = f"<path>{path}</path>\n<type>file</type>\n<content>\n{numbered}\n\n{footer}\n</content>"
    if loaded:
        reminders = "\n\n".join(item.content for item in loaded)
        output += f"\n\n<system-reminder>\n{reminders}\n</system-reminder>"
    text = "\n".join(lines)
    return ToolResult(
        title=title,
        output=output,
        metadata={
            "preview": "\n".join(lines[:PREVIEW_LINES]),
            "truncated": truncated,
            "loaded": loaded_paths,
            "display": {
                "type": "file",
                "path": path,
                "text": text,
                "lineStart": offset,
                "lineEnd": last,
                "totalLines": total,
                "truncated": truncated,
            },
        },
    )


async def execute(params: Any, ctx: ToolContext) -> ToolResult:
    """Read a file window, a directory page, or an image/PDF attachment."""
    path = str(ctx.resolve(params.filePath))
    title = worktree_relative(ctx, path)
    bypass = bool(ctx.extra.get("bypassCwdCheck"))
    # A path that cannot be examined (name too long, no permission) is reported only after the guard
    # has had its say, so nothing about an outside path is revealed without the external_directory ask.
    info, stat_error = _stat_later(path)
    is_dir = info is not None and stat_module.S_ISDIR(info.st_mode)

    kind: boundary.Kind = "directory" if is_dir else "file"
    # Judged once, at one resolved location: the ask is about exactly the location that was judged.
    judged = boundary.real(path)
    if not bypass:
        await boundary.assert_external_location(ctx, judged, kind=kind)
    await ctx.ask("read", [title], always=["*"], metadata={})

    if stat_error is not None:
        raise stat_error
    if info is None:
        raise ToolError(await asyncio.to_thread(_not_found, path))

    # The path may still change between the judgement and the open (a symlink flipped in between, also
    # while the asks waited for a human), so what is read is judged as it was opened: its real location
    # is taken from the descriptor, judged when it is not the location already judged, and only that
    # descriptor is read from. A small regular file is read here, on the loop (see READ_HERE_BYTES);
    # any other read's blocking work is one hop to a worker thread, a second one only when the opened
    # location must be judged first.
    offset = params.offset or 1
    limit = DEFAULT_READ_LIMIT if params.limit is None else params.limit
    expected = None if bypass else judged
    if _small(info):
        done = await _read_small(ctx, path, expected, title, offset, limit)
    else:
        done = await asyncio.to_thread(_open_and_read, ctx, path, expected, title, offset, limit)
    if isinstance(done, ToolResult):
        return done
    fd, opened, is_dir = done
    try:
        if opened is None:
            raise ToolError(f"Cannot read {path}: it changed while it was being opened")
        await boundary.assert_external_location(ctx, opened, kind="directory" if is_dir else "file")
    except BaseException:
        os.close(fd)
        raise
    return await asyncio.to_thread(_read_opened, ctx, path, fd, is_dir, title, offset, limit)


#: A regular file of at most this many bytes, no deeper than :data:`READ_HERE_DEPTH` directories below
#: the project directory, is read on the event loop: a handful of local system calls, over sooner than a
#: worker thread would wake up. Its open never waits (``O_NONBLOCK``: a FIFO swapped in for it opens at
#: once and is handed on), no more than this is read (a file that grew meanwhile is handed on), and an
#: instruction file found near it is read in a worker thread with the rest. Anything else (a larger file,
#: a directory, a FIFO, a device) is read in a worker thread.
READ_HERE_BYTES = 64 * 1024
#: Directories below the project directory, at most, of a file read on the loop: each is looked at for
#: instruction files (a stat per name), which bounds the walk done there.
READ_HERE_DEPTH = 16


def _small(info: os.stat_result | None) -> bool:
    """Whether the stat taken before the asks shows a regular file small enough to read on the loop."""
    return info is not None and stat_module.S_ISREG(info.st_mode) and info.st_size <= READ_HERE_BYTES


async def _read_small(
    ctx: ToolContext, path: str, expected: str | None, title: str, offset: int, limit: int
) -> ToolResult | tuple[int, str | None, bool]:
    """:func:`_open_and_read` for a file that was small and regular when looked at: opened, judged and,
    when it still is one, read on the loop; handed to a worker thread as soon as it proves otherwise."""
    fd, opened, is_dir = _open(path, os.O_NONBLOCK)
    try:
        judged = expected is None or opened == expected
        data = _contents(fd, READ_HERE_BYTES) if judged and not _too_deep(ctx, path) else None
        found = None if data is None else _instructions.nearby(ctx, path)
        here = data is not None and not found
        if not here:
            os.set_blocking(fd, True)  # read in a worker thread, as any open file is there
    except BaseException:
        os.close(fd)
        raise
    if not judged:
        return fd, opened, is_dir
    if not here:
        return await asyncio.to_thread(_read_opened, ctx, path, fd, is_dir, title, offset, limit, found)
    os.close(fd)
    assert data is not None
    return _read_file(path, title, offset, limit, [], ctx.abort, io.BytesIO(data))


def _too_deep(ctx: ToolContext, path: str) -> bool:
    """Whether ``path`` lies more than :data:`READ_HERE_DEPTH` directories below the project directory."""
    root = os.path.normpath(str(ctx.directory))
    return path.count(os.sep) - root.count(os.sep) > READ_HERE_DEPTH


def _contents(fd: int, most: int) -> bytes | None:
    """The bytes of the regular file open on ``fd``; ``None`` when it is not one or holds more than
    ``most`` bytes (the descriptor is then left at the file's start)."""
    if not stat_module.S_ISREG(os.fstat(fd).st_mode):
        return None
    chunks: list[bytes] = []
    size = 0
    while size <= most:
        chunk = os.read(fd, most + 1 - size)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
    os.lseek(fd, 0, os.SEEK_SET)
    return None


def _open_and_read(
    ctx: ToolContext, path: str, expected: str | None, title: str, offset: int, limit: int
) -> ToolResult | tuple[int, str | None, bool]:
    """In a worker thread: open ``path`` and, when it opened at ``expected`` (or ``expected`` is
    ``None``: no boundary to keep), read it; else hand back the open descriptor, its location and
    whether it is a directory, for that location to be judged before anything is read."""
    fd, opened, is_dir = _open(path)
    if expected is not None and opened != expected:
        return fd, opened, is_dir
    return _read_opened(ctx, path, fd, is_dir, title, offset, limit)


def _read_opened(
    ctx: ToolContext,
    path: str,
    fd: int,
    is_dir: bool,
    title: str,
    offset: int,
    limit: int,
    found: list[str] | None = None,
) -> ToolResult:
    """In a worker thread: read the directory or file open at ``fd`` (closed here, whatever happens);
    ``found``: the instruction files near it, when already looked for."""
    if is_dir:
        try:
            return _read_directory(path, title, offset, limit, fd)
        finally:
            os.close(fd)
    try:
        handle = open(fd, "rb")  # noqa: SIM115 - closed by the with-block below
    except BaseException:
        os.close(fd)
        raise
    with handle:
        loaded = _instructions.resolve(ctx, path, found=found)
        return _read_file(path, title, offset, limit, loaded, ctx.abort, handle)


def _open(path: str, flags: int = 0) -> tuple[int, str | None, bool]:
    """Open ``path`` (following its symlinks as they are at this instant) for reading, with ``flags``
    besides: the descriptor, the opened file's real location (``None`` when it cannot be told) and
    whether it is a directory."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | flags)
    except OSError as error:
        raise ToolError(f"Cannot read {path}: {error.strerror or error}") from None
    try:
        is_dir = stat_module.S_ISDIR(os.fstat(fd).st_mode)
        return fd, files.opened_location(fd, path), is_dir
    except BaseException:
        os.close(fd)
        raise


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    return {"parameters_from": parameters, "execute": execute}
