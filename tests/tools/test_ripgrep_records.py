"""ripgrep's output cut into records (``_ripgrep._Records``), and the same run with and without an event
loop: however the output arrives in chunks, the items, the limit and the record-size check are the same."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.tools import _ripgrep
from opencode_cli.tools._ripgrep import Outcome, RecordTooLargeError, _Records

LINES = st.lists(st.text(alphabet="ab\r x", max_size=6), max_size=12)


def _parse(line: bytes) -> str | None:
    text = line.decode()
    return None if text.startswith("x") else text


def _expected(lines: list[str], limit: int) -> tuple[list[str], bool]:
    items = [line for line in lines if line and not line.startswith("x")]
    return items[: limit + 1], len(items) > limit


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    pieces, start = [], 0
    for point in [*points, len(data)]:
        pieces.append(data[start:point])
        start = point
    return [piece for piece in pieces if piece]


@given(LINES, st.booleans(), st.lists(st.integers(min_value=0, max_value=80)), st.integers(0, 6))
def test_any_chunking_gives_the_same_records(
    lines: list[str], final_newline: bool, cuts: list[int], limit: int
) -> None:
    data = "\n".join(lines).encode() + (b"\n" if final_newline and lines else b"")
    outcome: Outcome[str] = Outcome()
    records = _Records(outcome, limit, _parse, None)
    full = False
    for chunk in _cut(data, cuts):
        if records.feed(chunk):
            full = True
            break
    if not full:
        full = records.end()
    items, over = _expected(lines, limit)
    assert (outcome.items, full) == (items, over)


def test_a_record_over_the_size_limit_is_refused_even_before_its_newline() -> None:
    records = _Records(Outcome(), 10, _parse, 4)
    assert records.feed(b"abcd\nab") is False
    with pytest.raises(RecordTooLargeError):
        records.feed(b"cdef")


@pytest.mark.parametrize("limit", [2, 50])
def test_a_run_stops_at_the_limit(tmp_path: Path, limit: int) -> None:
    for number in range(5):
        (tmp_path / f"file{number}.txt").write_text("x\n")
    outcome = asyncio.run(
        _ripgrep.run(["--files", "--sort", "path"], cwd=str(tmp_path), limit=limit, parse=bytes.decode)
    )
    assert outcome.items == [f"file{n}.txt" for n in range(min(limit, 5))]
    assert outcome.truncated == (limit < 5)
