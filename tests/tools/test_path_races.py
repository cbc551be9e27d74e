"""write, edit, apply_patch, glob, grep and the AGENTS.md lookup judge what they open (issue 14, item 1).

A symlink inside the project is flipped between an inside target and an outside one by a thread while
hundreds of calls run with the ``external_directory`` ask rejected (everything else approved): no write
lands outside, no outside byte comes back. Each family has a control run with the asks approved, which
does reach the outside, so the guarded runs could fail.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from _flip import Flipper, point
from _harness import Harness

from opencode_cli import Project
from opencode_cli.context import PermissionRequest
from opencode_cli.errors import RejectedError, ToolError
from opencode_cli.session import Decision

CALLS = 200


class Selective:
    """A host prompt that rejects the ``external_directory`` ask (unless ``approve_all``) and approves
    every other ask; it counts the rejections."""

    def __init__(self, approve_all: bool = False) -> None:
        self.approve_all = approve_all
        self.rejected = 0

    async def __call__(self, request: PermissionRequest) -> Decision:
        if request.permission == "external_directory" and not self.approve_all:
            self.rejected += 1
            return Decision("reject")
        return Decision("once")


def call(project: Project, tool: str, args: dict[str, Any], prompt: Selective) -> Any:
    """Run one call; ``None`` when it was refused or failed as a tool error (both are fine here)."""
    try:
        return project.run_tool(tool, args, prompt=prompt)
    except (RejectedError, ToolError):
        return None


def listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


@pytest.fixture
def places(root: Path, tmp_path: Path) -> tuple[Path, Path]:
    """``(inside, outside)`` directories, each holding ``note.txt`` with its own words."""
    inside = root / "mine"
    inside.mkdir()
    (inside / "note.txt").write_text("alpha INSIDE\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "note.txt").write_text("alpha OUTSIDE-SECRET\n")
    return inside, outside


@pytest.fixture
def dir_link(root: Path, places: tuple[Path, Path]) -> Path:
    link = root / "vendor"
    point(link, places[0])
    return link


@pytest.fixture
def file_link(root: Path, places: tuple[Path, Path]) -> Path:
    link = root / "link.txt"
    point(link, places[0] / "note.txt")
    return link


# -- writes never land outside ---------------------------------------------------------------------------


def test_write_through_a_flipping_directory_link_never_lands_outside(
    project: Project, dir_link: Path, places: tuple[Path, Path]
) -> None:
    inside, outside = places
    before = listing(outside)
    prompt = Selective()
    with Flipper(dir_link, inside, outside) as flipper:
        for number in range(CALLS):
            call(project, "write", {"filePath": str(dir_link / "new.txt"), "content": f"{number}\n"}, prompt)
    assert flipper.flips > 0
    assert listing(outside) == before  # no new file, no temporary file left behind
    assert (outside / "note.txt").read_text() == "alpha OUTSIDE-SECRET\n"
    assert (inside / "new.txt").exists()


def test_write_through_a_flipping_file_link_never_replaces_the_outside_file(
    project: Project, file_link: Path, places: tuple[Path, Path]
) -> None:
    inside, outside = places
    prompt = Selective()
    with Flipper(file_link, inside / "note.txt", outside / "note.txt"):
        for number in range(CALLS):
            call(project, "write", {"filePath": str(file_link), "content": f"alpha {number}\n"}, prompt)
    assert (outside / "note.txt").read_text() == "alpha OUTSIDE-SECRET\n"
    assert listing(outside) == ["note.txt"]
    assert prompt.rejected > 0


def test_write_control_reaches_the_outside_when_approved(
    project: Project, dir_link: Path, places: tuple[Path, Path]
) -> None:
    """With the asks approved the outside directory does get written, so the tests above can fail."""
    inside, outside = places
    prompt = Selective(approve_all=True)
    with Flipper(dir_link, inside, outside):
        for number in range(20 * CALLS):
            call(project, "write", {"filePath": str(dir_link / "new.txt"), "content": f"{number}\n"}, prompt)
            if (outside / "new.txt").exists():
                break
    assert (outside / "new.txt").exists()


def test_edit_through_a_flipping_link_never_changes_or_shows_the_outside_file(
    project: Project, file_link: Path, places: tuple[Path, Path]
) -> None:
    inside, outside = places
    prompt = Selective()
    words = ("alpha", "beta")
    with Flipper(file_link, inside / "note.txt", outside / "note.txt"):
        for number in range(CALLS):
            old, new = words[number % 2], words[(number + 1) % 2]
            args = {"filePath": str(file_link), "oldString": old, "newString": new}
            result = call(project, "edit", args, prompt)
            if result is not None:
                assert "OUTSIDE-SECRET" not in result.output
                assert "OUTSIDE-SECRET" not in result.metadata["diff"]
    assert (outside / "note.txt").read_text() == "alpha OUTSIDE-SECRET\n"
    assert listing(outside) == ["note.txt"]


def test_apply_patch_through_a_flipping_link_never_changes_the_outside_file(
    project: Project, file_link: Path, places: tuple[Path, Path]
) -> None:
    inside, outside = places
    prompt = Selective()
    words = ("alpha", "beta")
    with Flipper(file_link, inside / "note.txt", outside / "note.txt"):
        for number in range(CALLS):
            old, new = words[number % 2], words[(number + 1) % 2]
            hunk = f"*** Update File: link.txt\n@@\n-{old} INSIDE\n+{new} INSIDE"
            text = f"*** Begin Patch\n{hunk}\n*** End Patch"
            result = call(project, "apply_patch", {"patchText": text}, prompt)
            if result is not None:
                assert "OUTSIDE-SECRET" not in result.output
                assert "OUTSIDE-SECRET" not in result.metadata["diff"]
    assert (outside / "note.txt").read_text() == "alpha OUTSIDE-SECRET\n"
    assert listing(outside) == ["note.txt"]


def test_apply_patch_adding_through_a_flipping_directory_link_never_lands_outside(
    project: Project, dir_link: Path, places: tuple[Path, Path]
) -> None:
    inside, outside = places
    prompt = Selective()
    with Flipper(dir_link, inside, outside):
        for number in range(CALLS):
            text = f"*** Begin Patch\n*** Add File: vendor/added-{number}.txt\n+x\n*** End Patch"
            call(project, "apply_patch", {"patchText": text}, prompt)
    assert listing(outside) == ["note.txt"]
    assert any(name.startswith("added-") for name in listing(inside))


# -- searches never show the outside ----------------------------------------------------------------------


def test_glob_and_grep_through_a_flipping_directory_link_never_show_the_outside(
    project: Project, dir_link: Path, places: tuple[Path, Path]
) -> None:
    inside, outside = places
    (outside / "outside-entry.txt").write_text("needle OUTSIDE-SECRET\n")
    (inside / "inside-entry.txt").write_text("needle inside\n")
    prompt = Selective()
    found = 0
    with Flipper(dir_link, inside, outside):
        for _ in range(CALLS // 2):
            listed = call(project, "glob", {"pattern": "*.txt", "path": str(dir_link)}, prompt)
            if listed is not None:
                assert "outside-entry" not in listed.output
                found += "inside-entry" in listed.output
            matched = call(project, "grep", {"pattern": "needle", "path": str(dir_link)}, prompt)
            if matched is not None:
                assert "OUTSIDE-SECRET" not in matched.output
                assert "outside-entry" not in matched.output
                found += "inside-entry" in matched.output
    assert found > 0
    assert prompt.rejected > 0


def test_grep_of_a_flipping_file_link_never_shows_the_outside(
    project: Project, file_link: Path, places: tuple[Path, Path]
) -> None:
    inside, outside = places
    prompt = Selective()
    with Flipper(file_link, inside / "note.txt", outside / "note.txt"):
        for _ in range(CALLS):
            matched = call(project, "grep", {"pattern": "alpha", "path": str(file_link)}, prompt)
            if matched is not None:
                assert "OUTSIDE-SECRET" not in matched.output


def test_grep_control_reaches_the_outside_when_approved(
    project: Project, dir_link: Path, places: tuple[Path, Path]
) -> None:
    inside, outside = places
    prompt = Selective(approve_all=True)
    seen = False
    with Flipper(dir_link, inside, outside):
        for _ in range(20 * CALLS):
            matched = call(project, "grep", {"pattern": "alpha", "path": str(dir_link)}, prompt)
            if matched is not None and "OUTSIDE-SECRET" in matched.output:
                seen = True
                break
    assert seen


# -- instruction files are judged as opened ---------------------------------------------------------------


def test_an_instruction_file_leading_outside_is_never_shown(
    project: Project, root: Path, places: tuple[Path, Path]
) -> None:
    inside, outside = places
    (inside / "rules.md").write_text("inside rules\n")
    (outside / "rules.md").write_text("OUTSIDE RULES\n")
    sub = root / "sub"
    sub.mkdir()
    (sub / "code.py").write_text("x = 1\n")
    instructions = sub / "AGENTS.md"
    point(instructions, outside / "rules.md")
    result = project.run_tool("read", {"filePath": str(sub / "code.py")})
    assert "OUTSIDE RULES" not in result.output
    point(instructions, inside / "rules.md")
    result = project.run_tool("read", {"filePath": str(sub / "code.py")})
    assert "inside rules" in result.output

    shown = 0
    with Flipper(instructions, inside / "rules.md", outside / "rules.md"):
        for _ in range(CALLS):
            output = project.run_tool("read", {"filePath": str(sub / "code.py")}).output
            assert "OUTSIDE RULES" not in output
            shown += "inside rules" in output
    assert shown > 0


# -- the flip landing exactly while the edit permission is asked ------------------------------------------


def flip_during_edit_ask(harness: Harness, link: Path, target: Path) -> None:
    """Point ``link`` at ``target`` while the ``edit`` ask waits for its answer (after the judgement)."""

    def flip(request: PermissionRequest) -> None:
        if request.permission == "edit":
            point(link, target)

    harness.during_ask = flip


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_link_flipped_while_asked_does_not_move_the_write(
    project: Project, file_link: Path, places: tuple[Path, Path], tool: str
) -> None:
    """The file written is the one judged, not where the link leads once the human has answered."""
    inside, outside = places
    harness = Harness(project, tool)
    flip_during_edit_ask(harness, file_link, outside / "note.txt")
    args = {
        "write": {"filePath": str(file_link), "content": "beta INSIDE\n"},
        "edit": {"filePath": str(file_link), "oldString": "alpha", "newString": "beta"},
    }[tool]
    harness.run(args)
    assert harness.asked("external_directory") == []
    assert (inside / "note.txt").read_text() == "beta INSIDE\n"
    assert (outside / "note.txt").read_text() == "alpha OUTSIDE-SECRET\n"


def test_apply_patch_refuses_a_link_flipped_outside_while_asked(
    project: Project, file_link: Path, places: tuple[Path, Path]
) -> None:
    """apply_patch re-reads every path under its locks: one that now leads outside what was judged is
    refused, and nothing is modified."""
    inside, outside = places
    harness = Harness(project, "apply_patch")
    flip_during_edit_ask(harness, file_link, outside / "note.txt")
    hunk = "*** Update File: link.txt\n@@\n-alpha INSIDE\n+beta INSIDE"
    message = harness.error({"patchText": f"*** Begin Patch\n{hunk}\n*** End Patch"})
    assert message == (
        "apply_patch failed: link.txt changed while the permission was asked and now leads outside the "
        "project\nNo file was modified."
    )
    assert (inside / "note.txt").read_text() == "alpha INSIDE\n"
    assert (outside / "note.txt").read_text() == "alpha OUTSIDE-SECRET\n"


def test_a_directory_link_flipped_while_asked_does_not_move_a_new_file(
    project: Project, dir_link: Path, places: tuple[Path, Path]
) -> None:
    inside, outside = places
    harness = Harness(project, "write")
    flip_during_edit_ask(harness, dir_link, outside)
    harness.run({"filePath": str(dir_link / "deep" / "new.txt"), "content": "made\n"})
    assert (inside / "deep" / "new.txt").read_text() == "made\n"
    assert listing(outside) == ["note.txt"]
