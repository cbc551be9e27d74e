"""The window of a text file's lines that ``read`` shows, streamed from the file in fixed-size chunks.

Only the lines that are shown are kept: lines before ``offset`` are counted and dropped, and once
``limit`` lines are collected the rest of the file is only counted (to report the total). Reading stops
at the 50 KB output cap, and a very long line keeps just enough bytes to show its first 2000 characters,
so memory does not grow with the file's size.
"""

from __future__ import annotations

from typing import IO

from ..context import AbortSignal
from ..errors import AbortedError
from ..record import Record

MAX_LINE_LENGTH = 2000
MAX_LINE_SUFFIX = f"... (line truncated to {MAX_LINE_LENGTH} chars)"
MAX_BYTES = 50 * 1024

CHUNK_BYTES = 64 * 1024
# Bytes of one line worth keeping: every character takes at most 4 bytes, so this many bytes always hold
# more than MAX_LINE_LENGTH characters even if the last one is cut in the middle.
LINE_KEEP_BYTES = 4 * MAX_LINE_LENGTH + 8
# Code points a line may have and never need clipping: each is at most two UTF-16 code units.
SHORT_LINE = MAX_LINE_LENGTH // 2


def _clip(text: str) -> str:
    """Cut a line to MAX_LINE_LENGTH UTF-16 code units (JavaScript string length) plus the suffix.

    ``text`` is decoded UTF-8, which never holds surrogates: the only one the cut can leave is half of
    the pair an astral character takes in UTF-16.
    """
    if len(text) <= SHORT_LINE:
        return text
    if text.isascii():  # one unit per character
        return text if len(text) <= MAX_LINE_LENGTH else text[:MAX_LINE_LENGTH] + MAX_LINE_SUFFIX
    # Every character is at least one unit: past MAX_LINE_LENGTH + 1 of them nothing changes the result.
    start = text[: MAX_LINE_LENGTH + 1]
    units = start.encode("utf-16-le", "surrogatepass")
    if len(units) <= 2 * MAX_LINE_LENGTH:
        return text
    if len(units) == 2 * len(start):  # no astral character: one unit each
        return text[:MAX_LINE_LENGTH] + MAX_LINE_SUFFIX
    head = units[: 2 * MAX_LINE_LENGTH].decode("utf-16-le", "surrogatepass")
    if "\ud800" <= head[-1] <= "\udbff":
        # A character split in half leaves half a surrogate pair, which UTF-8 carries as U+FFFD.
        head = head[:-1] + "\ufffd"
    return head + MAX_LINE_SUFFIX


class Window(Record):
    """What streaming a file produced: the shown lines and how the read ended (``count``: the lines seen,
    the file's total unless ``cut``, the output cap, stopped the read early; ``more``: lines exist after
    the last one shown)."""

    __slots__ = ("count", "cut", "lines", "more")

    def __init__(
        self, lines: list[str] | None = None, count: int = 0, cut: bool = False, more: bool = False
    ) -> None:
        self.lines: list[str] = [] if lines is None else lines
        self.count = count
        self.cut = cut
        self.more = more


def stream(
    handle: IO[bytes],
    offset: int,
    limit: int,
    abort: AbortSignal | None = None,
    chunk_size: int | None = None,
) -> Window:
    """Read lines ``offset .. offset+limit-1`` (1-based) from a binary file, chunk by chunk.

    Lines end at ``\\n`` or ``\\r\\n`` (a lone ``\\r`` is kept as text); a last line without a newline
    counts, a trailing newline adds no empty line. Text is decoded as UTF-8 with replacement characters.
    """
    chunk_size = chunk_size or CHUNK_BYTES
    window = Window()
    lines = window.lines
    skip = offset - 1
    count = 0  # lines completed so far
    used = 0  # UTF-8 bytes of the kept lines plus their separators
    pending = bytearray()  # the start of the line being collected
    overflow = False  # the line being collected is longer than what ``pending`` keeps
    open_line = False  # the current line has at least one byte

    def finish() -> bool:
        """Close the collected line; ``False`` when it does not fit under the output cap."""
        nonlocal used, overflow
        raw = bytes(pending)
        pending.clear()
        if not overflow and raw.endswith(b"\r"):
            raw = raw[:-1]
        overflow = False
        line = _clip(raw.decode("utf-8", "replace"))
        cost = len(line.encode("utf-8")) + (1 if lines else 0)
        if used + cost > MAX_BYTES:
            return False
        lines.append(line)
        used += cost
        return True

    while True:
        if abort is not None and abort.aborted:
            raise AbortedError()
        chunk = handle.read(chunk_size)
        if not chunk:
            break
        size = len(chunk)
        ends_open = chunk[-1] != 0x0A
        pos = 0
        while pos < size:
            if count < skip:
                # Before the window: count lines, keep nothing.
                newlines = chunk.count(b"\n", pos)
                if count + newlines < skip:
                    count += newlines
                    open_line = ends_open
                    break
                while count < skip:
                    pos = chunk.index(b"\n", pos) + 1
                    count += 1
                open_line = False
                continue
            if len(lines) >= limit:
                # After the window: the rest is only counted.
                window.more = True
                count += chunk.count(b"\n", pos)
                open_line = ends_open
                break
            newline = chunk.find(b"\n", pos)
            end = size if newline < 0 else newline
            if end > pos:
                open_line = True
                room = LINE_KEEP_BYTES - len(pending)
                if room > 0:
                    pending += chunk[pos : min(end, pos + room)]
                if end - pos > room:
                    overflow = True
            if newline < 0:
                break
            pos = newline + 1
            count += 1
            open_line = False
            if not finish():
                window.count, window.cut, window.more = count, True, True
                return window

    if open_line:
        count += 1
        if count > skip:
            if len(lines) >= limit:
                window.more = True
            elif not finish():
                window.cut = window.more = True
    window.count = count
    return window
