"""The built-in ``apply_patch`` tool (builtin-tools spec §8; test list "apply_patch.test.ts" in §17)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opencode_cli import Project
from opencode_cli.context import AbortSignal, PermissionRequest
from opencode_cli.errors import RejectedError, ToolError
from opencode_cli.files import file_lock
from opencode_cli.results import ToolResult

# -- helpers --------------------------------------------------------------------------------------------


def patch(*lines: str) -> str:
    """A patch made of ``lines`` between the begin and end markers."""
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"])


class PatchHarness(Harness):
    """The shared harness fed patch text: ``run(text)`` runs apply_patch on ``{"patchText": text}``."""

    def __init__(self, project: Project) -> None:
        super().__init__(project, "apply_patch")

    async def run_async(self, text: str, **changes: Any) -> ToolResult:  # type: ignore[override]
        return await super().run_async({"patchText": text}, **changes)

    def run(self, text: str, **changes: Any) -> ToolResult:  # type: ignore[override]
        return super().run({"patchText": text}, **changes)

    def fails(self, text: str) -> str:
        return self.error(text)  # type: ignore[arg-type]


@pytest.fixture
def harness(project: Project) -> PatchHarness:
    return PatchHarness(project)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (``.git`` left out) with its bytes."""
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = Path(folder, name)
            found[str(path.relative_to(root))] = path.read_bytes()
    return found


# -- apply_patch.test.ts --------------------------------------------------------------------------------


def test_requires_patch_text(harness: Harness) -> None:
    assert harness.fails("") == "patchText is required"
    assert harness.requests == []


def test_rejects_invalid_patch_format(harness: Harness) -> None:
    assert harness.fails("invalid patch") == (
        "apply_patch verification failed: Error: Invalid patch format: missing Begin/End markers"
    )


@pytest.mark.parametrize(
    "text",
    [
        "*** Begin Patch\n*** End Patch",
        "  *** Begin Patch\r\n*** End Patch\r\n",
    ],
)
def test_rejects_empty_patch(harness: Harness, text: str) -> None:
    assert harness.fails(text) == "patch rejected: empty patch"


def test_add_update_delete_in_one_patch(harness: Harness, root: Path) -> None:
    (root / "modify.txt").write_text("line1\nline2\n")
    (root / "delete.txt").write_text("obsolete\n")
    result = harness.run(
        patch(
            "*** Add File: nested/new.txt",
            "+created",
            "*** Delete File: delete.txt",
            "*** Update File: modify.txt",
            "@@",
            "-line2",
            "+changed",
        )
    )
    expected = "Success. Updated the following files:\nA nested/new.txt\nD delete.txt\nM modify.txt"
    assert result.output == expected
    assert result.title == expected
    assert "\\" not in result.output
    assert "Index:" in result.metadata["diff"]
    assert result.metadata["diagnostics"] == {}

    assert len(harness.requests) == 1
    (ask,) = harness.asked("edit")
    assert ask.patterns == ["nested/new.txt", "delete.txt", "modify.txt"]
    assert ask.always == ["*"]
    assert ask.metadata["filepath"] == "nested/new.txt, delete.txt, modify.txt"
    files = ask.metadata["files"]
    assert [f["type"] for f in files] == ["add", "delete", "update"]
    assert files[0]["relativePath"] == "nested/new.txt"
    assert files[0]["filePath"] == str(root / "nested" / "new.txt")
    assert "+created" in files[0]["patch"]
    assert (files[0]["additions"], files[0]["deletions"]) == (1, 0)
    assert (files[1]["additions"], files[1]["deletions"]) == (0, 2)  # "obsolete\n" splits into 2 pieces
    assert (files[2]["additions"], files[2]["deletions"]) == (1, 1)
    assert "movePath" not in files[2]
    assert ask.metadata["diff"] == "".join(f["patch"] + "\n" for f in files)
    assert result.metadata["files"] == files

    assert (root / "nested" / "new.txt").read_text() == "created\n"
    assert (root / "modify.txt").read_text() == "line1\nchanged\n"
    assert not (root / "delete.txt").exists()


def test_move_permission_metadata(harness: Harness, root: Path) -> None:
    (root / "old").mkdir()
    (root / "old" / "name.txt").write_text("old content\n")
    result = harness.run(
        patch(
            "*** Update File: old/name.txt",
            "*** Move to: renamed/dir/name.txt",
            "@@",
            "-old content",
            "+new content",
        )
    )
    (ask,) = harness.asked("edit")
    assert ask.patterns == ["old/name.txt"]
    entry = ask.metadata["files"][0]
    assert entry["type"] == "move"
    assert entry["relativePath"] == "renamed/dir/name.txt"
    assert entry["movePath"] == str(root / "renamed" / "dir" / "name.txt")
    assert entry["filePath"] == str(root / "old" / "name.txt")
    assert "-old content" in entry["patch"]
    assert "+new content" in entry["patch"]
    assert result.output.endswith("\nM renamed/dir/name.txt")


def test_multiple_chunks_in_one_file(harness: Harness, root: Path) -> None:
    (root / "multi.txt").write_text("line1\nline2\nline3\nline4\n")
    harness.run(patch("*** Update File: multi.txt", "@@", "-line2", "+changed2", "@@", "-line4", "+changed4"))
    assert (root / "multi.txt").read_text() == "line1\nchanged2\nline3\nchanged4\n"


def test_bom_file_insertion(harness: Harness, root: Path) -> None:
    target = root / "Program.cs"
    target.write_bytes("\ufeffusing System;\n\nclass Test {}\n".encode())
    harness.run(patch("*** Update File: Program.cs", "@@ class Test {}", "+class Next {}"))
    (ask,) = harness.asked("edit")
    diff = ask.metadata["files"][0]["patch"]
    assert "\ufeff" not in diff
    assert "-using System;" not in diff
    assert "+using System;" not in diff
    assert "+class Next {}" in diff
    assert target.read_bytes() == "\ufeffusing System;\n\nclass Test {}\nclass Next {}\n".encode()


def test_insert_with_context_lines(harness: Harness, root: Path) -> None:
    (root / "insert_only.txt").write_text("alpha\nomega\n")
    harness.run(patch("*** Update File: insert_only.txt", "@@", " alpha", "+beta", " omega"))
    assert (root / "insert_only.txt").read_text() == "alpha\nbeta\nomega\n"


def test_update_adds_trailing_newline(harness: Harness, root: Path) -> None:
    (root / "no_newline.txt").write_text("no newline at end")
    harness.run(
        patch("*** Update File: no_newline.txt", "@@", "-no newline at end", "+first line", "+second line")
    )
    assert (root / "no_newline.txt").read_text() == "first line\nsecond line\n"


def test_move_to_new_directory(harness: Harness, root: Path) -> None:
    (root / "old").mkdir()
    (root / "old" / "name.txt").write_text("old content\n")
    harness.run(
        patch(
            "*** Update File: old/name.txt",
            "*** Move to: renamed/dir/name.txt",
            "@@",
            "-old content",
            "+new content",
        )
    )
    assert not (root / "old" / "name.txt").exists()
    assert (root / "renamed" / "dir" / "name.txt").read_text() == "new content\n"


def test_move_overwrites_destination(harness: Harness, root: Path) -> None:
    (root / "old").mkdir()
    (root / "old" / "name.txt").write_text("from\n")
    (root / "renamed" / "dir").mkdir(parents=True)
    (root / "renamed" / "dir" / "name.txt").write_text("existing\n")
    harness.run(
        patch("*** Update File: old/name.txt", "*** Move to: renamed/dir/name.txt", "@@", "-from", "+new")
    )
    assert not (root / "old" / "name.txt").exists()
    assert (root / "renamed" / "dir" / "name.txt").read_text() == "new\n"


def test_add_overwrites_existing_file(harness: Harness, root: Path) -> None:
    (root / "duplicate.txt").write_text("old content\n")
    result = harness.run(patch("*** Add File: duplicate.txt", "+new content"))
    assert (root / "duplicate.txt").read_text() == "new content\n"
    assert result.output.endswith("\nA duplicate.txt")


def test_update_of_missing_file(harness: Harness, root: Path) -> None:
    message = harness.fails(patch("*** Update File: missing.txt", "@@", "-nope", "+better"))
    assert (
        message == f"apply_patch verification failed: Failed to read file to update: {root / 'missing.txt'}"
    )
    assert harness.asked("edit") == []


def test_update_of_directory(harness: Harness, root: Path) -> None:
    (root / "dir").mkdir()
    message = harness.fails(patch("*** Update File: dir", "@@", "-a", "+b"))
    assert message == f"apply_patch verification failed: Failed to read file to update: {root / 'dir'}"


def test_delete_of_missing_file(harness: Harness, root: Path) -> None:
    message = harness.fails(patch("*** Delete File: missing.txt"))
    assert message == (
        f"apply_patch verification failed: ENOENT: no such file or directory, open '{root / 'missing.txt'}'"
    )


def test_delete_of_directory(harness: Harness, root: Path) -> None:
    (root / "dir").mkdir()
    message = harness.fails(patch("*** Delete File: dir"))
    assert message == "apply_patch verification failed: EISDIR: illegal operation on a directory, read"
    assert (root / "dir").is_dir()


def test_lone_carriage_returns_do_not_split_lines(harness: Harness) -> None:
    # the parser splits on "\n" only; the empty-patch check alone normalises "\r"
    assert harness.fails("*** Begin Patch\r*** End Patch") == (
        "apply_patch verification failed: Error: Invalid patch format: missing Begin/End markers"
    )


def test_unknown_header_means_no_hunks(harness: Harness) -> None:
    assert (
        harness.fails(patch("*** Frobnicate File: foo")) == "apply_patch verification failed: no hunks found"
    )


def test_update_with_missing_lines(harness: Harness, root: Path) -> None:
    (root / "modify.txt").write_text("line1\nline2\n")
    message = harness.fails(patch("*** Update File: modify.txt", "@@", "-missing", "+changed"))
    assert message == (
        "apply_patch verification failed: Error: "
        f"Failed to find expected lines in {root / 'modify.txt'}:\nmissing"
    )
    assert (root / "modify.txt").read_text() == "line1\nline2\n"


def test_update_with_missing_context(harness: Harness, root: Path) -> None:
    (root / "modify.txt").write_text("line1\nline2\n")
    message = harness.fails(patch("*** Update File: modify.txt", "@@ def nowhere():", "-line1", "+x"))
    assert message == (
        "apply_patch verification failed: Error: "
        f"Failed to find context 'def nowhere():' in {root / 'modify.txt'}"
    )


def test_verification_failure_leaves_no_side_effects(harness: Harness, root: Path) -> None:
    before = tree(root)
    harness.fails(
        patch("*** Add File: created.txt", "+hello", "*** Update File: missing.txt", "@@", "-old", "+new")
    )
    assert not (root / "created.txt").exists()
    assert tree(root) == before
    assert harness.asked("edit") == []


def test_end_of_file_anchor(harness: Harness, root: Path) -> None:
    (root / "tail.txt").write_text("alpha\nlast\n")
    harness.run(patch("*** Update File: tail.txt", "@@", "-last", "+end", "*** End of File"))
    assert (root / "tail.txt").read_text() == "alpha\nend\n"


def test_missing_second_chunk_header(harness: Harness, root: Path) -> None:
    (root / "two_chunks.txt").write_text("a\nb\nc\nd\n")
    harness.fails(patch("*** Update File: two_chunks.txt", "@@", "-b", "+B", "", "-d", "+D"))
    assert (root / "two_chunks.txt").read_text() == "a\nb\nc\nd\n"


def test_change_context_disambiguates(harness: Harness, root: Path) -> None:
    (root / "multi_ctx.txt").write_text("fn a\nx=10\ny=2\nfn b\nx=10\ny=20\n")
    harness.run(patch("*** Update File: multi_ctx.txt", "@@ fn b", "-x=10", "+x=11"))
    assert (root / "multi_ctx.txt").read_text() == "fn a\nx=10\ny=2\nfn b\nx=11\ny=20\n"


def test_end_of_file_anchor_takes_the_last_marker(harness: Harness, root: Path) -> None:
    (root / "eof_anchor.txt").write_text("start\nmarker\nmiddle\nmarker\nend\n")
    harness.run(
        patch(
            "*** Update File: eof_anchor.txt",
            "@@",
            "-marker",
            "-end",
            "+marker-changed",
            "+end",
            "*** End of File",
        )
    )
    assert (root / "eof_anchor.txt").read_text() == "start\nmarker\nmiddle\nmarker-changed\nend\n"


def test_end_of_file_anchor_with_repeated_block(harness: Harness, root: Path) -> None:
    # beyond the upstream test: the block occurs twice, the anchored chunk changes the one at the end
    (root / "eof.txt").write_text("marker\nend\nmarker\nend\n")
    harness.run(
        patch("*** Update File: eof.txt", "@@", "-marker", "-end", "+changed", "+end", "*** End of File")
    )
    assert (root / "eof.txt").read_text() == "marker\nend\nchanged\nend\n"


def test_heredoc_with_cat(harness: Harness, root: Path) -> None:
    harness.run(
        "cat <<'EOF'\n*** Begin Patch\n*** Add File: heredoc_test.txt\n+heredoc content\n*** End Patch\nEOF"
    )
    assert (root / "heredoc_test.txt").read_text() == "heredoc content\n"


def test_heredoc_without_cat(harness: Harness, root: Path) -> None:
    harness.run(
        "<<EOF\n*** Begin Patch\n*** Add File: heredoc_no_cat.txt\n+no cat prefix\n*** End Patch\nEOF"
    )
    assert (root / "heredoc_no_cat.txt").read_text() == "no cat prefix\n"


def test_trailing_whitespace_differences(harness: Harness, root: Path) -> None:
    (root / "trailing_ws.txt").write_text("line1  \nline2\nline3   \n")
    harness.run(patch("*** Update File: trailing_ws.txt", "@@", "-line2", "+changed"))
    assert (root / "trailing_ws.txt").read_text() == "line1  \nchanged\nline3   \n"


def test_leading_whitespace_differences(harness: Harness, root: Path) -> None:
    (root / "leading_ws.txt").write_text("  line1\nline2\n  line3\n")
    harness.run(patch("*** Update File: leading_ws.txt", "@@", "-line2", "+changed"))
    assert (root / "leading_ws.txt").read_text() == "  line1\nchanged\n  line3\n"


def test_unicode_punctuation_differences(harness: Harness, root: Path) -> None:
    (root / "unicode.txt").write_text("He said \u201chello\u201d\nsome\u2014dash\nend\n")
    harness.run(patch("*** Update File: unicode.txt", "@@", '-He said "hello"', '+He said "hi"'))
    assert (root / "unicode.txt").read_text() == 'He said "hi"\nsome\u2014dash\nend\n'


# -- permissions and the external-directory guard -------------------------------------------------------


def test_rejected_edit_writes_nothing(harness: Harness, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    before = tree(root)
    harness.reject = {"edit"}
    message = harness.fails(patch("*** Add File: b.txt", "+b", "*** Update File: a.txt", "@@", "-a", "+A"))
    assert message == RejectedError.MESSAGE
    assert tree(root) == before


def test_outside_paths_ask_external_directory(harness: Harness, root: Path, outer: Path) -> None:
    (outer / "src.txt").write_text("x\n")
    dest = outer / "moved" / "dst.txt"
    harness.run(
        patch(
            f"*** Add File: {outer / 'new.txt'}",
            "+n",
            f"*** Update File: {outer / 'src.txt'}",
            f"*** Move to: {dest}",
            "@@",
            "-x",
            "+y",
        )
    )
    external = harness.asked("external_directory")
    assert [r.patterns for r in external] == [[f"{outer}/*"], [f"{outer}/*"], [f"{outer}/moved/*"]]
    assert external[2].metadata == {"filepath": str(dest), "parentDir": str(outer / "moved")}
    (ask,) = harness.asked("edit")
    rel = os.path.relpath(outer, root)
    assert ask.patterns == [f"{rel}/new.txt", f"{rel}/src.txt"]
    # the external checks come before the edit ask
    assert harness.requests[-1].permission == "edit"
    assert dest.read_text() == "y\n"


def test_rejected_external_directory_stops_before_reading(harness: Harness, root: Path, outer: Path) -> None:
    harness.reject = {"external_directory"}
    message = harness.fails(
        patch("*** Add File: inside.txt", "+i", f"*** Delete File: {outer / 'missing.txt'}")
    )
    assert message == RejectedError.MESSAGE
    assert not (root / "inside.txt").exists()
    assert harness.asked("edit") == []


def test_inside_paths_do_not_ask_external(harness: Harness, root: Path) -> None:
    harness.run(patch("*** Add File: sub/a.txt", "+a"))
    assert [r.permission for r in harness.requests] == ["edit"]


def test_patterns_relative_to_worktree_from_subdirectory(make_project: Any, project_dir: Path) -> None:
    sub = project_dir / "pkg"
    sub.mkdir()
    harness = PatchHarness(make_project(sub))
    result = harness.run(patch("*** Add File: a.txt", "+a"))
    assert (sub / "a.txt").read_text() == "a\n"
    assert harness.asked("edit")[0].patterns == ["pkg/a.txt"]
    assert result.output.endswith("\nA pkg/a.txt")


def test_title_without_git(tmp_path: Path, env: dict[str, str]) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    harness = PatchHarness(Project(folder, env=env, autoload_plugins=False))
    result = harness.run(patch("*** Add File: x/y.txt", "+y"))
    assert result.title == "Success. Updated the following files:\nA x/y.txt"


def test_through_a_session_with_default_rules(project: Project, root: Path) -> None:
    result = project.run_tool("apply_patch", {"patchText": patch("*** Add File: s.txt", "+s")})
    assert result.output == "Success. Updated the following files:\nA s.txt"
    assert result.metadata["truncated"] is False
    assert (root / "s.txt").read_text() == "s\n"


# -- documented choices ---------------------------------------------------------------------------------


def test_pure_insert_after_context_line(harness: Harness, root: Path) -> None:
    (root / "a.py").write_text("class A:\n    x = 1\n\n\nclass B:\n    y = 2\n")
    harness.run(patch("*** Update File: a.py", "@@ class A:", "+    z = 0"))
    assert (root / "a.py").read_text() == "class A:\n    z = 0\n    x = 1\n\n\nclass B:\n    y = 2\n"


def test_pure_insert_without_context_appends(harness: Harness, root: Path) -> None:
    (root / "a.txt").write_text("a\nb\n")
    harness.run(patch("*** Update File: a.txt", "@@", "+c"))
    assert (root / "a.txt").read_text() == "a\nb\nc\n"


def test_crlf_file_keeps_crlf(harness: Harness, root: Path) -> None:
    (root / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    harness.run(patch("*** Update File: win.txt", "@@", " one", "-two", "+2", "+2b", " three"))
    assert (root / "win.txt").read_bytes() == b"one\r\n2\r\n2b\r\nthree\r\n"
    diff = harness.asked("edit")[0].metadata["diff"]
    assert "\r" not in diff


def test_crlf_patch_text_on_crlf_file(harness: Harness, root: Path) -> None:
    (root / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    text = "*** Begin Patch\r\n*** Update File: win.txt\r\n@@\r\n-two\r\n+2\r\n*** End Patch\r\n"
    harness.run(text)
    assert (root / "win.txt").read_bytes() == b"one\r\n2\r\n"


def test_add_keeps_bytes_and_bom(harness: Harness, root: Path) -> None:
    harness.run(patch("*** Add File: bom.txt", "+\ufeffhello", "+\tworld  "))
    assert (root / "bom.txt").read_bytes() == "\ufeffhello\n\tworld  \n".encode()
    assert "\ufeff" not in harness.asked("edit")[0].metadata["diff"]


def test_add_empty_file(harness: Harness, root: Path) -> None:
    harness.run(patch("*** Add File: empty.txt"))
    assert (root / "empty.txt").read_bytes() == b""


def test_new_file_mode(harness: Harness, root: Path) -> None:
    harness.run(patch("*** Add File: mode.txt", "+m"))
    assert stat.S_IMODE((root / "mode.txt").stat().st_mode) == 0o644


def test_update_keeps_mode(harness: Harness, root: Path) -> None:
    (root / "run.sh").write_text("echo a\n")
    (root / "run.sh").chmod(0o755)
    harness.run(patch("*** Update File: run.sh", "@@", "-echo a", "+echo b"))
    assert stat.S_IMODE((root / "run.sh").stat().st_mode) == 0o755


def test_move_to_itself_keeps_the_file(harness: Harness, root: Path) -> None:
    (root / "same.txt").write_text("a\n")
    result = harness.run(patch("*** Update File: same.txt", "*** Move to: ./same.txt", "@@", "-a", "+b"))
    assert (root / "same.txt").read_text() == "b\n"
    assert result.output.endswith("\nM same.txt")


def test_two_updates_of_one_file_are_computed_from_disk(harness: Harness, root: Path) -> None:
    # as in OpenCode, each hunk is computed from the file as it was: the last write wins
    (root / "twice.txt").write_text("a\nb\n")
    harness.run(
        patch("*** Update File: twice.txt", "@@", "-a", "+A", "*** Update File: twice.txt", "@@", "-b", "+B")
    )
    assert (root / "twice.txt").read_text() == "a\nB\n"


def test_invalid_utf8_survives(harness: Harness, root: Path) -> None:
    (root / "latin1.txt").write_bytes(b"caf\xe9\nkeep\n")
    harness.run(patch("*** Update File: latin1.txt", "@@", "-keep", "+kept"))
    assert (root / "latin1.txt").read_bytes() == b"caf\xe9\nkept\n"


def test_schema_and_description(project: Project) -> None:
    entry = project.registry.get("apply_patch")
    schema = entry.tool.load().schema()
    assert schema["required"] == ["patchText"]
    assert schema["properties"]["patchText"]["type"] == "string"
    assert schema["properties"]["patchText"]["description"] == (
        "The full patch text that describes all changes to be made"
    )
    description = entry.tool.description
    assert 900 <= len(description) <= 1300
    for needle in (
        "*** Begin Patch",
        "*** End Patch",
        "*** Add File:",
        "*** Delete File:",
        "*** Update File:",
    ):
        assert needle in description
    assert "*** Move to:" in description
    assert "@@ def greet():" in description


def test_missing_patch_text_argument(harness: Harness) -> None:
    with pytest.raises(ToolError, match="The apply_patch tool was called with invalid arguments"):
        asyncio.run(harness.tool.run({}, harness.context()))


# -- going beyond OpenCode: rollback, locks, stale files ------------------------------------------------


def test_rollback_when_a_write_fails(harness: Harness, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "gone.txt").write_text("keep me\n")
    (root / "gone.txt").chmod(0o600)
    (root / "ro.txt").write_text("ro\n")
    (root / "ro.txt").chmod(0o444)
    before = tree(root)
    message = harness.fails(
        patch(
            "*** Add File: fresh/deep/new.txt",
            "+new",
            "*** Update File: a.txt",
            "@@",
            "-a",
            "+A",
            "*** Delete File: gone.txt",
            "*** Add File: a-copy.txt",
            "+copy",
            "*** Update File: ro.txt",
            "@@",
            "-ro",
            "+rw",
        )
    )
    assert message == (
        f"apply_patch failed: could not write ro.txt: EACCES: permission denied, open '{root / 'ro.txt'}'\n"
        "The patch was not applied: no file was modified."  # found while staging, before any commit
    )
    assert tree(root) == before
    assert not (root / "fresh").exists()
    assert stat.S_IMODE((root / "gone.txt").stat().st_mode) == 0o600
    assert stat.S_IMODE((root / "ro.txt").stat().st_mode) == 0o444
    assert len(harness.asked("edit")) == 1


def test_rollback_of_a_move(harness: Harness, root: Path) -> None:
    (root / "src.txt").write_text("s\n")
    (root / "dst.txt").write_text("previous destination\n")
    (root / "ro.txt").write_text("ro\n")
    (root / "ro.txt").chmod(0o444)
    before = tree(root)
    harness.fails(
        patch(
            "*** Update File: src.txt",
            "*** Move to: dst.txt",
            "@@",
            "-s",
            "+S",
            "*** Update File: ro.txt",
            "@@",
            "-ro",
            "+x",
        )
    )
    assert tree(root) == before


def test_rollback_through_a_symlink(harness: Harness, root: Path) -> None:
    (root / "real.txt").write_text("real\n")
    (root / "link.txt").symlink_to("real.txt")
    (root / "ro.txt").write_text("ro\n")
    (root / "ro.txt").chmod(0o444)
    harness.fails(
        patch(
            "*** Update File: link.txt",
            "@@",
            "-real",
            "+changed",
            "*** Delete File: link.txt",
            "*** Update File: ro.txt",
            "@@",
            "-ro",
            "+x",
        )
    )
    assert (root / "link.txt").is_symlink()
    assert os.readlink(root / "link.txt") == "real.txt"
    assert (root / "real.txt").read_text() == "real\n"


def test_update_through_a_symlink_writes_the_target(harness: Harness, root: Path) -> None:
    (root / "real.txt").write_text("real\n")
    (root / "link.txt").symlink_to("real.txt")
    harness.run(patch("*** Update File: link.txt", "@@", "-real", "+changed"))
    assert (root / "link.txt").is_symlink()
    assert (root / "real.txt").read_text() == "changed\n"


def test_file_changed_during_the_ask_is_recomputed(harness: Harness, root: Path) -> None:
    target = root / "shared.txt"
    target.write_text("top = 0\nmiddle\nbottom = 0\n")

    def edit_meanwhile(request: PermissionRequest) -> None:
        if request.permission == "edit":
            target.write_text("top = 1\nmiddle\nbottom = 0\n")

    harness.during_ask = edit_meanwhile
    result = harness.run(patch("*** Update File: shared.txt", "@@", "-bottom = 0", "+bottom = 2"))
    assert target.read_text() == "top = 1\nmiddle\nbottom = 2\n"
    assert "-top = 0" not in result.metadata["diff"]


def test_file_changed_during_the_ask_so_the_patch_no_longer_applies(harness: Harness, root: Path) -> None:
    target = root / "shared.txt"
    target.write_text("a\nb\n")
    other = root / "other.txt"

    def edit_meanwhile(request: PermissionRequest) -> None:
        target.write_text("a\nc\n")

    harness.during_ask = edit_meanwhile
    message = harness.fails(
        patch("*** Add File: other.txt", "+o", "*** Update File: shared.txt", "@@", "-b", "+B")
    )
    assert message.startswith("apply_patch verification failed: Error: Failed to find expected lines in ")
    assert target.read_text() == "a\nc\n"
    assert not other.exists()


def test_file_deleted_during_the_ask(harness: Harness, root: Path) -> None:
    target = root / "doomed.txt"
    target.write_text("x\n")
    harness.during_ask = lambda request: target.unlink()
    message = harness.fails(patch("*** Delete File: doomed.txt"))
    assert message == f"apply_patch verification failed: ENOENT: no such file or directory, open '{target}'"


def test_waits_for_the_edit_lock(harness: Harness, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The patch is started while the test holds the file's edit lock; once the patch has been refused the
    # lock (seen at the flock system call), it must not have written, nor finished, until the lock is let go.
    import fcntl

    target = root / "locked.txt"
    target.write_text("a\n")
    refused = asyncio.Event()
    flock = fcntl.flock

    def watched_flock(descriptor: int, operation: int) -> None:
        try:
            flock(descriptor, operation)
        except BlockingIOError:
            refused.set()
            raise

    monkeypatch.setattr(fcntl, "flock", watched_flock)

    async def scenario() -> None:
        async with file_lock(target, harness.env()):
            task = asyncio.ensure_future(
                harness.run_async(patch("*** Update File: locked.txt", "@@", "-a", "+b"))
            )
            await refused.wait()
            assert not task.done()
            assert target.read_text() == "a\n"
        result = await task
        assert result.output == "Success. Updated the following files:\nM locked.txt"
        assert target.read_text() == "b\n"

    asyncio.run(scenario())


def test_concurrent_patches_of_one_file_both_apply(harness: Harness, root: Path) -> None:
    target = root / "both.txt"
    target.write_text("top = 0\nmiddle\nbottom = 0\n")

    async def slow(request: PermissionRequest) -> None:
        await asyncio.sleep(0.05)

    harness.during_ask = slow

    async def scenario() -> None:
        await asyncio.gather(
            harness.run_async(patch("*** Update File: both.txt", "@@", "-top = 0", "+top = 1")),
            harness.run_async(patch("*** Update File: both.txt", "@@", "-bottom = 0", "+bottom = 2")),
        )

    asyncio.run(scenario())
    assert target.read_text() == "top = 1\nmiddle\nbottom = 2\n"


def test_same_file_by_two_names_takes_one_lock(harness: Harness, root: Path) -> None:
    (root / "real.txt").write_text("r\n")
    (root / "alias.txt").symlink_to("real.txt")
    result = harness.run(
        patch("*** Update File: real.txt", "@@", "-r", "+R", "*** Update File: alias.txt", "@@", "-r", "+R2")
    )
    assert result.output.endswith("M real.txt\nM alias.txt")
    assert (root / "real.txt").read_text() == "R2\n"


# -- properties -----------------------------------------------------------------------------------------

SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8).filter(
    lambda s: s not in (".git",)
)
RELATIVE = st.lists(SEGMENT, min_size=1, max_size=3).map("/".join)
CONTENT_LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=20
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    existing=st.dictionaries(RELATIVE, st.binary(max_size=40), max_size=4),
    name=RELATIVE,
    lines=st.lists(CONTENT_LINE, max_size=6),
)
def test_add_then_delete_leaves_the_tree_unchanged(
    env: dict[str, str], existing: dict[str, bytes], name: str, lines: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "project"
        (root / ".git").mkdir(parents=True)
        for rel, data in existing.items():
            path = root / rel
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            except (NotADirectoryError, FileExistsError, IsADirectoryError):
                continue  # one name is a directory of another: skip it
        before = tree(root)
        taken = set(before) | {str(Path(rel).parent) for rel in before}
        parts = name.split("/")
        prefixes = {"/".join(parts[:i]) for i in range(1, len(parts) + 1)}
        if prefixes & taken or any(rel.startswith(name + "/") for rel in before):
            return  # would overwrite or collide with an existing file
        harness = PatchHarness(Project(root, env=env, autoload_plugins=False))
        added = harness.run(patch(f"*** Add File: {name}", *(f"+{line}" for line in lines)))
        assert added.output.endswith(f"\nA {name}")
        assert (root / name).exists()
        deleted = harness.run(patch(f"*** Delete File: {name}"))
        assert deleted.output.endswith(f"\nD {name}")
        assert tree(root) == before


def test_metadata_is_json(harness: Harness, root: Path) -> None:
    (root / "m.txt").write_text("m\n")
    result = harness.run(patch("*** Update File: m.txt", "@@", "-m", "+n"))
    shown = result.as_dict()
    assert json.loads(json.dumps(shown)) == shown  # plain JSON: nothing is lost or stringified on the way
    (entry,) = shown["metadata"]["files"]
    assert (entry["type"], entry["relativePath"], entry["filePath"]) == (
        "update",
        "m.txt",
        str(root / "m.txt"),
    )
    assert (entry["additions"], entry["deletions"]) == (1, 1)
    assert "-m\n+n" in entry["patch"]
    assert shown["metadata"]["diff"] == entry["patch"] + "\n"
    assert shown["metadata"]["diagnostics"] == {}


# -- all or nothing under interruption (issue 25) ---------------------------------------------------------


def temporaries(root: Path) -> list[str]:
    """Staged temporaries left anywhere under ``root``."""
    return [name for name in tree(root) if Path(name).name.endswith(".tmp")]


def test_an_abort_before_the_commit_changes_nothing_and_says_so(harness: Harness, root: Path) -> None:
    for number in range(20):
        (root / f"f{number}.txt").write_text("old\n")
    before = tree(root)
    signal = AbortSignal()
    harness.during_ask = lambda request: signal.abort("terminated")
    text = patch(*(line for n in range(20) for line in (f"*** Update File: f{n}.txt", "@@", "-old", "+new")))
    message = harness.error(text, abort=signal)  # type: ignore[arg-type]
    assert message == "[Tool execution was interrupted]\nThe patch was not applied: no file was modified."
    assert tree(root) == before and temporaries(root) == []


def test_a_commit_failing_midway_puts_back_what_it_renamed(harness: Harness, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "taken").mkdir()
    (root / "taken" / "inside.txt").write_text("x\n")
    before = tree(root)
    message = harness.fails(
        patch("*** Update File: a.txt", "@@", "-a", "+A", "*** Add File: taken", "+a file where a folder is")
    )
    assert message.startswith("apply_patch failed: could not write taken: ")
    assert message.endswith("The changes already made were undone: no file was modified.")
    assert tree(root) == before and temporaries(root) == []
