"""``_text_window.stream`` against the window computed the obvious way, on the whole file in memory.

The inputs mix line endings, multi-byte and astral characters (UTF-16 clipping), invalid UTF-8, lines
longer than 2000 characters and than ``LINE_KEEP_BYTES``, windows near the 50 KB output cap and chunk
sizes from one byte up: whatever shortcut ``stream`` takes, its window must be this one.
"""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opencode_cli.context import AbortSignal
from opencode_cli.errors import AbortedError
from opencode_cli.tools import _text_window
from opencode_cli.tools._text_window import LINE_KEEP_BYTES, MAX_LINE_LENGTH, MAX_LINE_SUFFIX

Result = tuple[list[str], int, bool, bool]


def reference_clip(text: str) -> str:
    """JavaScript's ``text.substring(0, 2000)`` plus the suffix: UTF-16 code units, and half a surrogate
    pair left at the cut becomes U+FFFD when written as UTF-8."""
    units = text.encode("utf-16-le")
    if len(units) <= 2 * MAX_LINE_LENGTH:
        return text
    return units[: 2 * MAX_LINE_LENGTH].decode("utf-16-le", "replace") + MAX_LINE_SUFFIX


def reference(data: bytes, offset: int, limit: int, cap: int) -> Result:
    """``(lines, count, cut, more)`` of lines ``offset .. offset+limit-1`` under an output cap of ``cap``."""
    pieces = data.split(b"\n")
    if pieces[-1] == b"":
        pieces.pop()  # a trailing newline adds no line (and an empty file has none)
    # One ``\r`` before each line's end goes: the ``\r`` of ``\r\n``, and (as the streamed reader has it)
    # a ``\r`` that ends the file too.
    lines = [reference_clip((p[:-1] if p.endswith(b"\r") else p).decode("utf-8", "replace")) for p in pieces]
    shown: list[str] = []
    used = 0
    for index in range(offset - 1, len(lines)):
        if len(shown) == limit:
            return shown, len(lines), False, True
        cost = len(lines[index].encode("utf-8")) + (1 if shown else 0)
        if used + cost > cap:
            return shown, index + 1, True, True
        shown.append(lines[index])
        used += cost
    return shown, len(lines), False, False


def streamed(data: bytes, offset: int, limit: int, chunk_size: int | None) -> Result:
    window = _text_window.stream(io.BytesIO(data), offset, limit, chunk_size=chunk_size)
    return window.lines, window.count, window.cut, window.more


SHORT = [
    b"a",
    b"xyz",
    b" ",
    b"\n",
    b"\n",
    b"\n",
    b"\r",
    b"\r\n",
    b"\r\n",
    "\u00e9".encode(),  # two bytes
    "\u20ac".encode(),  # three bytes
    "\U0001f600".encode(),  # four bytes, two UTF-16 units
    b"\xff",  # never valid
    b"\x80",  # a lone continuation byte
    b"\xc3",  # truncated two-byte sequence
    b"\xe2\x82",  # truncated three-byte sequence
    b"\xf0\x9f\x98",  # truncated four-byte sequence
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xc0\xaf",  # overlong
]
LONG = [
    b"a" * 999,
    b"a" * 1000,
    b"a" * 1999,
    b"a" * 2000,
    b"a" * 2001,
    "\U0001f600".encode() * 999,
    "\U0001f600".encode() * 1000,
    "\U0001f600".encode() * 1001,
    b"b" * (LINE_KEEP_BYTES + 1),
    "\U0001f600".encode() * (LINE_KEEP_BYTES // 4 + 1),
    "\u20ac".encode() * 2001,
    b"\xff" * 2001,
    b"\xe2\x82" * 1500,
]

# one piece in four is long
pieces = st.one_of(*[st.sampled_from(SHORT)] * 3, st.sampled_from(LONG))
ascii_pieces = st.one_of(
    *[st.sampled_from([p for p in SHORT if p.isascii()])] * 3,
    st.sampled_from([p for p in LONG if p.isascii()]),
)
# any pieces; short ones only (files of short lines); ASCII only (every size a length)
files = st.one_of(st.lists(pieces, max_size=60), st.lists(st.sampled_from(SHORT)), st.lists(ascii_pieces))
chunk_sizes = st.one_of(st.integers(1, 64), st.none(), st.sampled_from([1000, 4096, LINE_KEEP_BYTES + 3]))
limits = st.one_of(st.integers(0, 12), st.just(2000))


@given(parts=files, offset=st.integers(1, 12), limit=limits, chunk_size=chunk_sizes)
@settings(max_examples=300, deadline=None)
def test_stream_matches_reference(
    parts: list[bytes], offset: int, limit: int, chunk_size: int | None
) -> None:
    data = b"".join(parts)
    expected = reference(data, offset, limit, _text_window.MAX_BYTES)
    assert streamed(data, offset, limit, chunk_size) == expected


@given(
    width=st.integers(100, 1999),
    gap=st.integers(-100, 400),
    parts=files,
    offset=st.integers(1, 3),
    extra=st.one_of(st.integers(0, 12), st.just(2000)),
    chunk_size=chunk_sizes,
)
@settings(max_examples=100, deadline=None)  # each builds a 50 KB file
def test_stream_near_the_output_cap(
    width: int, gap: int, parts: list[bytes], offset: int, extra: int, chunk_size: int | None
) -> None:
    # Lines of ``width`` bytes fill the window to about ``gap`` bytes under the 50 KB cap (or over it),
    # then the rest crosses the cap or not.
    filler = (_text_window.MAX_BYTES + 1 - gap) // (width + 1)
    data = (b"f" * width + b"\n") * filler + b"".join(parts)
    limit = filler + extra
    expected = reference(data, offset, limit, _text_window.MAX_BYTES)
    assert streamed(data, offset, limit, chunk_size) == expected


@given(
    parts=st.lists(st.sampled_from(SHORT), max_size=40),
    offset=st.integers(1, 8),
    limit=st.integers(0, 10),
    chunk_size=st.one_of(st.integers(1, 9), st.none()),
    cap=st.integers(0, 40),
)
@settings(max_examples=300, deadline=None)
def test_stream_under_a_small_cap(
    parts: list[bytes], offset: int, limit: int, chunk_size: int | None, cap: int
) -> None:
    data = b"".join(parts)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_text_window, "MAX_BYTES", cap)
        got = streamed(data, offset, limit, chunk_size)
    assert got == reference(data, offset, limit, cap)


@pytest.mark.parametrize("width", [1000, 1023, 1024, 2000, 2001, 2500, 4095, 4096, 4097, 9000])
@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
@pytest.mark.parametrize("limit", [1, 2, 3, 2000])
def test_long_lines_between_short_ones(width: int, ending: bytes, limit: int) -> None:
    # around the sizes where whole lines stop being taken a run at a time, and where lines get clipped
    data = ending.join([b"short", b"a" * width, b"x" * 100, "\u00e9".encode() * width, b"end", b""])
    for offset in (1, 2):
        for chunk_size in (None, 4096, 5000):
            expected = reference(data, offset, limit, _text_window.MAX_BYTES)
            assert streamed(data, offset, limit, chunk_size) == expected


@pytest.mark.parametrize(
    "text",
    [
        "a" * 1000,
        "a" * 2000,
        "a" * 2001,
        "\u00e9" * 2000,
        "\u00e9" * 2001,
        "\U0001f600" * 1000,
        "\U0001f600" * 1001,
        "a" * 1999 + "\U0001f600",  # the cut falls inside the surrogate pair
        "a" * 1998 + "\U0001f600" * 2,  # the cut falls right after the pair
        "\U0001f600" * 999 + "a" * 3,
        "\U0001f600" + "\u4e2d" * 3000,
    ],
)
def test_clip_counts_utf16_units(text: str) -> None:
    assert _text_window._clip(text) == reference_clip(text)


class _AbortingReader(io.BytesIO):
    """A file that aborts its reader's signal once ``after`` chunks have been read."""

    def __init__(self, data: bytes, signal: AbortSignal, after: int) -> None:
        super().__init__(data)
        self.signal = signal
        self.after = after

    def read(self, size: int | None = -1, /) -> bytes:
        self.after -= 1
        if self.after == 0:
            self.signal.abort()
        return super().read(size)


def test_abort_is_checked_between_chunks() -> None:
    signal = AbortSignal()
    data = b"line\n" * 100
    with pytest.raises(AbortedError):
        _text_window.stream(_AbortingReader(data, signal, 2), 1, 2000, signal, chunk_size=64)
