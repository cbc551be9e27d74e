"""``read`` judges the file it opened, not the path it looked at (issue 14, item 1).

A symlink inside the project that is flipped between an inside target and an outside one while ``read``
runs must never yield the outside file's bytes without the ``external_directory`` permission.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _flip import Flipper, point
from _harness import Recorder

from opencode_cli import Project
from opencode_cli.errors import RejectedError
from opencode_cli.tools import read as read_module

READS = 300


@pytest.fixture
def files(root: Path, tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    """``(link, inside, secret)``: ``link.txt`` in the project, first leading to ``inside.txt``."""
    inside = root / "inside.txt"
    inside.write_text("INSIDE\n")
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("OUTSIDE-SECRET\n")
    link = root / "link.txt"
    point(link, inside)
    yield link, inside, secret


def read_many(project: Project, link: Path, reply: str, count: int) -> tuple[list[str], int]:
    """Read ``link`` ``count`` times, each in a fresh session; the outputs and the number refused."""
    outputs: list[str] = []
    refused = 0
    for _ in range(count):
        try:
            outputs.append(project.run_tool("read", {"filePath": str(link)}, prompt=Recorder(reply)).output)
        except RejectedError as error:
            assert str(error) == "The user rejected permission to use this specific tool call."
            refused += 1
    return outputs, refused


def test_flipping_link_never_leaks_outside_bytes_when_rejected(
    project: Project, files: tuple[Path, Path, Path]
) -> None:
    link, inside, secret = files
    with Flipper(link, inside, secret) as flipper:
        outputs, refused = read_many(project, link, "reject", READS)
    assert flipper.flips > 0
    assert len(outputs) + refused == READS
    for output in outputs:
        assert "OUTSIDE-SECRET" not in output
        assert "1: INSIDE" in output


def test_flipping_link_can_yield_outside_bytes_when_approved(
    project: Project, files: tuple[Path, Path, Path]
) -> None:
    """The control: with the asks approved the outside file does get read, so the test above can fail."""
    link, inside, secret = files
    seen = False
    with Flipper(link, inside, secret):
        for _ in range(20):
            outputs, refused = read_many(project, link, "once", 50)
            assert refused == 0
            if any("OUTSIDE-SECRET" in output for output in outputs):
                seen = True
                break
    assert seen


def test_flipping_directory_link_never_lists_outside_when_rejected(
    project: Project, root: Path, tmp_path: Path
) -> None:
    mine = root / "mine"
    mine.mkdir()
    (mine / "inside-entry").write_text("x")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "outside-entry").write_text("x")
    link = root / "vendor"
    point(link, mine)
    with Flipper(link, mine, theirs):
        outputs, _ = read_many(project, link, "reject", READS // 3)
    for output in outputs:
        assert "outside-entry" not in output
        assert "inside-entry" in output


# -- the flip landing exactly between the judgement and the open ---------------------------------------


@pytest.fixture
def flip_at_open(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, Path]]:
    """Points each ``(link, target)`` queued here just before ``read`` opens its path."""
    queue: list[tuple[Path, Path]] = []
    original = read_module._open

    def flipping_open(path: str, flags: int = 0) -> Any:
        while queue:
            point(*queue.pop(0))
        return original(path, flags)

    monkeypatch.setattr(read_module, "_open", flipping_open)
    return queue


def test_link_flipped_after_judgement_is_judged_as_opened(
    project: Project, files: tuple[Path, Path, Path], flip_at_open: list[tuple[Path, Path]]
) -> None:
    link, _, secret = files
    flip_at_open.append((link, secret))
    prompt = Recorder("reject")
    with pytest.raises(RejectedError):
        project.run_tool("read", {"filePath": str(link)}, prompt=prompt)
    asks = prompt.asked("external_directory")
    assert [ask.patterns for ask in asks] == [[f"{secret.parent}/*"]]
    assert asks[0].metadata == {"filepath": str(secret), "parentDir": str(secret.parent)}


def test_link_flipped_after_judgement_reads_the_opened_file_once_approved(
    project: Project, files: tuple[Path, Path, Path], flip_at_open: list[tuple[Path, Path]]
) -> None:
    link, _, secret = files
    flip_at_open.append((link, secret))
    prompt = Recorder("once")
    result = project.run_tool("read", {"filePath": str(link)}, prompt=prompt)
    assert "1: OUTSIDE-SECRET" in result.output
    assert [ask.patterns for ask in prompt.asked("external_directory")] == [[f"{secret.parent}/*"]]


def test_link_flipped_back_inside_after_judgement_needs_no_further_ask(
    project: Project, files: tuple[Path, Path, Path], flip_at_open: list[tuple[Path, Path]]
) -> None:
    """Judged outside (asked, approved), opened inside: the inside file is read, nothing more is asked."""
    link, inside, secret = files
    point(link, secret)
    flip_at_open.append((link, inside))
    prompt = Recorder("once")
    result = project.run_tool("read", {"filePath": str(link)}, prompt=prompt)
    assert "1: INSIDE" in result.output
    assert len(prompt.asked("external_directory")) == 1


def test_directory_link_flipped_after_judgement_is_judged_as_opened(
    project: Project, root: Path, tmp_path: Path, flip_at_open: list[tuple[Path, Path]]
) -> None:
    mine = root / "mine"
    mine.mkdir()
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "outside-entry").write_text("x")
    link = root / "vendor"
    point(link, mine)
    flip_at_open.append((link, theirs))
    prompt = Recorder("reject")
    with pytest.raises(RejectedError):
        project.run_tool("read", {"filePath": str(link)}, prompt=prompt)
    assert [ask.patterns for ask in prompt.asked("external_directory")] == [[f"{theirs}/*"]]

    flip_at_open.append((link, theirs))
    point(link, mine)
    result = project.run_tool("read", {"filePath": str(link)}, prompt=Recorder("once"))
    assert "outside-entry" in result.output


def test_bypass_reads_what_it_opens_without_asking(
    project: Project, files: tuple[Path, Path, Path], flip_at_open: list[tuple[Path, Path]]
) -> None:
    link, _, secret = files
    flip_at_open.append((link, secret))
    prompt = Recorder("reject")
    result = project.run_tool("read", {"filePath": str(link)}, prompt=prompt, extra={"bypassCwdCheck": True})
    assert "OUTSIDE-SECRET" in result.output
    assert prompt.asked("external_directory") == []
