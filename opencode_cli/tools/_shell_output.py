"""Collecting a shell command's output in bounded memory (builtin-tools spec §2.4 and §2.5).

:class:`OutputCollector` receives the output piece by piece. It keeps

* a rolling buffer of the latest pieces, at most ``2 × max_bytes`` UTF-8 bytes (older pieces are dropped,
  which marks the output as cut);
* the full text only while it is at most ``max_bytes``: past that, everything so far goes to a new spill
  file (named as the truncator names them) and later pieces are appended to it;
* the live preview: the last 30 000 characters, behind ``...\\n\\n`` when there is more.

So memory stays near ``3 × max_bytes`` whatever the command prints, and the spill file holds all of it.
:meth:`OutputCollector.finish` cuts the kept text to its tail within the limits.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..truncate import Truncator

PREVIEW_CHARS = 30_000
PREVIEW_MARK = "...\n\n"


def preview(text: str) -> str:
    """What the live metadata shows of ``text``: its last 30 000 characters, marked when cut."""
    if len(text) <= PREVIEW_CHARS:
        return text
    return PREVIEW_MARK + text[-PREVIEW_CHARS:]


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def tail(text: str, max_lines: int, max_bytes: int) -> tuple[str, bool]:
    """The last lines of ``text`` that fit both limits, and whether anything was cut.

    When even the last line alone is over ``max_bytes`` (not counting an empty line after a final newline),
    the end of it that fits is kept, starting at a character boundary.
    """
    lines = text.split("\n")
    if len(lines) <= max_lines and _size(text) <= max_bytes:
        return text, False
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        cost = _size(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            if not any(kept):
                # Nothing but empty lines kept so far: keep the end of this long line rather than
                # nothing. (Upstream only does so when nothing at all was kept, so a long last line
                # followed by a newline left an empty result; we keep its end, behind the newline.)
                data = line.encode("utf-8", "surrogatepass")
                room = max_bytes - used - (1 if kept else 0)
                start = max(0, len(data) - room)
                while start < len(data) and data[start] & 0xC0 == 0x80:
                    start += 1
                if room > 0:
                    kept.append(data[start:].decode("utf-8", "surrogatepass"))
            break
        kept.append(line)
        used += cost
    kept.reverse()
    return "\n".join(kept), True


@dataclass
class Collected:
    """The output once the command is over: the text to show, whether it was cut, the spill file."""

    text: str
    cut: bool
    path: Path | None


class OutputCollector:
    """Bounded-memory collection of streamed output (see the module docstring)."""

    def __init__(self, truncator: Truncator) -> None:
        self.truncator = truncator
        self.max_bytes = truncator.max_bytes
        self.max_lines = truncator.max_lines
        self._keep = 2 * self.max_bytes
        self._chunks: deque[tuple[str, int]] = deque()
        self._kept_bytes = 0
        self._full: list[str] = []
        self._full_bytes = 0
        self._sink: TextIO | None = None
        self.path: Path | None = None
        self.cut = False
        self.preview = ""
        self.total_bytes = 0

    def add(self, text: str) -> None:
        """Take the next piece of output."""
        size = _size(text)
        self.total_bytes += size
        self._chunks.append((text, size))
        self._kept_bytes += size
        while self._kept_bytes > self._keep and len(self._chunks) > 1:
            _, dropped = self._chunks.popleft()
            self._kept_bytes -= dropped
            self.cut = True
        self.preview = preview(self.preview + text)
        if self._sink is not None:
            self._sink.write(text)
            return
        self._full.append(text)
        self._full_bytes += size
        if self._full_bytes > self.max_bytes:
            self._spill("".join(self._full))
            self._full, self._full_bytes = [], 0
            self.cut = True

    def _spill(self, text: str) -> None:
        # written through the descriptor that made it: the name is in a directory commands may write
        self.path, self._sink = self.truncator.open_spill()
        self._sink.write(text)

    def finish(self) -> Collected:
        """Close the spill file and cut the kept output to its tail; spill it now if it is cut."""
        raw = "".join(text for text, _ in self._chunks)
        text, cut = tail(raw, self.max_lines, self.max_bytes)
        if cut:
            self.cut = True
        if self.cut and self.path is None:
            self._spill(raw)
        self.close()
        return Collected(text, self.cut, self.path)

    def close(self) -> None:
        """Close the spill file (safe to call twice)."""
        if self._sink is not None:
            self._sink.close()
            self._sink = None
