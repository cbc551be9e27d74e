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
# In the window, whole lines are decoded a run at a time: at most RUN_BYTES, and about RUN_BYTES_PER_LINE
# per line still wanted (decoding far past the window's last line is wasted work; a run cut short only
# means one more). A run starts at a line shorter than RUN_FIRST_LINE_BYTES: a run's split takes time per
# byte, a line collected on its own time per line, so a long line is as quick alone and a run of a few
# long lines slower.
RUN_BYTES = 4 * 1024
RUN_BYTES_PER_LINE = 256
RUN_FIRST_LINE_BYTES = 1024


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


def _keep(lines: list[str], texts: list[str], used: int, all_ascii: bool) -> tuple[int, bool]:
    """Append ``texts`` (lines without their ends), each clipped, to ``lines`` while the output stays
    within MAX_BYTES; return the new ``used`` and whether every text was kept (``False``: the first one
    left out would pass the cap, the window is cut there).

    ``used`` counts the UTF-8 bytes of the kept lines plus one byte per line: the output puts a
    separator between lines, one fewer than the lines, so the cap on ``used`` is MAX_BYTES + 1.
    ``all_ascii``: every text is ASCII (its size is its length).
    """
    cap = MAX_BYTES + 1
    if all_ascii and len(texts) > 1 and max(map(len, texts)) <= SHORT_LINE:
        # Nothing to clip and every size is a length: all at once, if all fit (else line by line below).
        total = used + sum(map(len, texts)) + len(texts)
        if total <= cap:
            lines.extend(texts)
            return total, True
    for text in texts:
        if len(text) > SHORT_LINE:
            text = _clip(text)
        after = used + (len(text) if text.isascii() else len(text.encode("utf-8"))) + 1
        if after > cap:
            return used, False
        lines.append(text)
        used = after
    return used, True


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

    In the window, short whole lines are taken a run at a time (one decode, one split, see RUN_BYTES); a
    long line, or one that goes on in the next chunk, is collected in ``pending`` instead. Both give the
    same lines: UTF-8 never uses the bytes of ``\\n`` or ``\\r`` inside a character, so decoding a run then
    splitting it equals decoding each line (and dropping the ``\\r`` of each ``\\r\\n`` first equals
    dropping it from each line).
    """
    chunk_size = chunk_size or CHUNK_BYTES
    window = Window()
    lines = window.lines
    skip = offset - 1
    count = 0  # lines completed so far
    used = 0  # UTF-8 bytes of the kept lines plus one per line (see _keep)
    pending = bytearray()  # the start of the line being collected
    overflow = False  # the line being collected is longer than what ``pending`` keeps
    open_line = False  # the current line has at least one byte

    def finish() -> bool:
        """Close the collected line; ``False`` when it does not fit under the output cap."""
        nonlocal used, overflow
        if not overflow and pending.endswith(b"\r"):
            del pending[-1]
        overflow = False
        line = pending.decode("utf-8", "replace")
        pending.clear()
        used, kept = _keep(lines, [line], used, line.isascii())
        return kept

    def cut(seen: int) -> Window:
        """The window stopped by the output cap at line ``seen``, the first one left out."""
        window.count, window.cut, window.more = seen, True, True
        return window

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
            want = limit - len(lines)
            if want <= 0:
                # After the window: the rest is only counted.
                window.more = True
                count += chunk.count(b"\n", pos)
                open_line = ends_open
                break
            newline = chunk.find(b"\n", pos)
            span = want * RUN_BYTES_PER_LINE
            if not pending and 0 <= newline - pos < RUN_FIRST_LINE_BYTES and newline - pos < span:
                # A short line starts here: take the whole lines of a run at once.
                stop = chunk.rfind(b"\n", newline, pos + min(span, RUN_BYTES)) + 1
                run = chunk[pos:stop]
                if b"\r" in run:
                    run = run.replace(b"\r\n", b"\n")
                text = run.decode("utf-8", "replace")
                texts = text.split("\n", want)
                rest = texts.pop()  # empty, or the run's lines after the window
                before = len(lines)
                used, kept = _keep(lines, texts, used, text.isascii())
                if not kept:
                    return cut(count + len(lines) - before + 1)
                count += len(texts) + rest.count("\n")
                if rest:
                    window.more = True
                pos = stop
                continue
            end = size if newline < 0 else newline
            if end > pos:
                open_line = True
                room = LINE_KEEP_BYTES - len(pending)
                if room > 0:
                    pending += chunk[pos : end if end - pos <= room else pos + room]
                if end - pos > room:
                    overflow = True
            if newline < 0:
                break
            pos = newline + 1
            count += 1
            open_line = False
            if not finish():
                return cut(count)

    if open_line:
        count += 1
        if count > skip:
            if len(lines) >= limit:
                window.more = True
            elif not finish():
                return cut(count)
    window.count = count
    return window
