"""The apply_patch format: parser and applier (builtin-tools spec §8.1–§8.2, "test/patch/patch.test.ts" §17).

The standalone-applier cases of patch.test.ts run through the apply_patch tool at the end of this file:
this package has no separate applier (the tool is the only thing that writes patches).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _harness import Harness
from hypothesis import given, settings
from hypothesis import strategies as st

from opencode_cli import Project
from opencode_cli.errors import ToolError
from opencode_cli.patch import (
    AddFile,
    DeleteFile,
    PatchError,
    UpdateChunk,
    UpdateFile,
    derive_new_contents,
    js_trim,
    maybe_parse_apply_patch,
    normalise_punctuation,
    parse_patch,
    seek_sequence,
    unwrap_heredoc,
)


def patch(*lines: str) -> str:
    """A patch made of ``lines`` between the begin and end markers."""
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"])


# -- patch.test.ts: parsePatch ---------------------------------------------------------------------------


def test_parse_simple_add_file() -> None:
    hunks = parse_patch(patch("*** Add File: test.txt", "+Hello World"))
    assert hunks == [AddFile(path="test.txt", contents="Hello World")]
    assert hunks[0].type == "add"


def test_parse_delete_file() -> None:
    hunks = parse_patch(patch("*** Delete File: old.txt"))
    assert hunks == [DeleteFile("old.txt")]
    assert hunks[0].type == "delete"


def test_parse_several_hunks() -> None:
    hunks = parse_patch(
        patch(
            "*** Add File: new.txt",
            "+This is a new file",
            "*** Update File: existing.txt",
            "@@",
            " old line",
            "-new line",
            "+updated line",
        )
    )
    assert [hunk.type for hunk in hunks] == ["add", "update"]
    assert hunks[1] == UpdateFile(
        "existing.txt",
        [UpdateChunk(["old line", "new line"], ["old line", "updated line"])],
    )


def test_parse_move() -> None:
    hunks = parse_patch(
        patch(
            "*** Update File: old-name.txt", "*** Move to: new-name.txt", "@@", "-Old content", "+New content"
        )
    )
    assert len(hunks) == 1
    assert isinstance(hunks[0], UpdateFile)
    assert hunks[0].path == "old-name.txt"
    assert hunks[0].move_path == "new-name.txt"
    assert hunks[0].chunks == [UpdateChunk(["Old content"], ["New content"])]


def test_not_a_patch_is_invalid_format() -> None:
    with pytest.raises(PatchError, match="Invalid patch format") as caught:
        parse_patch("This is not a valid patch")
    assert str(caught.value) == "Invalid patch format: missing Begin/End markers"


# -- patch.test.ts: maybeParseApplyPatch -------------------------------------------------------------------


ADD_TEST = patch("*** Add File: test.txt", "+Content")


def test_maybe_parse_direct_apply_patch() -> None:
    found = maybe_parse_apply_patch(["apply_patch", ADD_TEST])
    assert found.kind == "body"
    assert found.patch == ADD_TEST
    assert found.hunks == [AddFile("test.txt", "Content")]


def test_maybe_parse_applypatch_spelling() -> None:
    assert maybe_parse_apply_patch(["applypatch", ADD_TEST]).kind == "body"


def test_maybe_parse_bash_heredoc() -> None:
    script = f"apply_patch <<'PATCH'\n{ADD_TEST}\nPATCH"
    found = maybe_parse_apply_patch(["bash", "-lc", script])
    assert found.kind == "body"
    assert found.patch == ADD_TEST
    assert len(found.hunks) == 1


def test_maybe_parse_other_command() -> None:
    assert maybe_parse_apply_patch(["echo", "hello"]).kind == "not_apply_patch"
    assert maybe_parse_apply_patch(["apply_patch"]).kind == "not_apply_patch"
    assert maybe_parse_apply_patch(["bash", "-lc", "echo hi"]).kind == "not_apply_patch"


def test_maybe_parse_reports_parse_errors() -> None:
    found = maybe_parse_apply_patch(["apply_patch", "no markers"])
    assert found.kind == "patch_parse_error"
    assert isinstance(found.error, PatchError)


# -- grammar details (spec §8.1) -------------------------------------------------------------------------


def test_markers_are_found_by_trimmed_line() -> None:
    text = "  *** Begin Patch  \n*** Add File: a.txt\n+x\n\t*** End Patch\t"
    assert parse_patch(text) == [AddFile("a.txt", "x")]


@pytest.mark.parametrize(
    "text",
    [
        "*** Begin Patch\n*** Add File: a\n+x",
        "*** Add File: a\n+x\n*** End Patch",
        "*** End Patch\n*** Begin Patch",
        "",
    ],
)
def test_missing_or_misordered_markers(text: str) -> None:
    with pytest.raises(PatchError, match=r"^Invalid patch format: missing Begin/End markers$"):
        parse_patch(text)


def test_first_end_marker_counts() -> None:
    # the first "*** End Patch" comes before "*** Begin Patch": the patch is invalid
    with pytest.raises(PatchError):
        parse_patch("*** End Patch\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch")


def test_heredoc_wrappers() -> None:
    body = patch("*** Add File: a.txt", "+x")
    assert unwrap_heredoc(f"cat <<'EOF'\n{body}\nEOF") == body
    assert unwrap_heredoc(f'cat <<"EOF"\n{body}\nEOF') == body
    assert unwrap_heredoc(f"<<EOF\n{body}\nEOF") == body
    assert unwrap_heredoc(f"<<EOF\n{body}\nEOF  ") == body
    assert unwrap_heredoc(f"cat <<'EOF'\n{body}\nEND") == f"cat <<'EOF'\n{body}\nEND"
    assert parse_patch(f"cat <<'EOF'\n{body}\nEOF") == [AddFile("a.txt", "x")]


def test_unknown_headers_and_stray_lines_are_skipped() -> None:
    assert parse_patch(patch("*** Frobnicate File: foo")) == []
    hunks = parse_patch(patch("garbage", "*** Frobnicate File: foo", "+x", "*** Delete File: d.txt", "junk"))
    assert hunks == [DeleteFile("d.txt")]


def test_header_without_path_is_ignored() -> None:
    assert parse_patch(patch("*** Add File:   ", "+x", "*** Delete File:")) == []


def test_header_path_is_trimmed_and_space_is_optional() -> None:
    assert parse_patch(patch("*** Delete File:a b.txt  ")) == [DeleteFile("a b.txt")]


def test_add_file_lines() -> None:
    hunks = parse_patch(patch("*** Add File: a.txt", "+one", "ignored", "", "+", "+three", "+"))
    # the final newline of the joined "+" lines is removed (here the last "+" line was empty)
    assert hunks == [AddFile("a.txt", "one\n\nthree\n")]
    assert parse_patch(patch("*** Add File: empty.txt")) == [AddFile("empty.txt", "")]


def test_move_only_right_after_the_header() -> None:
    hunks = parse_patch(patch("*** Update File: a.txt", "@@", "-x", "+y", "*** Move to: b.txt"))
    assert isinstance(hunks[0], UpdateFile)
    assert hunks[0].move_path is None
    blank_move = parse_patch(patch("*** Update File: a.txt", "*** Move to:  ", "@@", "-x", "+y"))
    assert isinstance(blank_move[0], UpdateFile)
    assert blank_move[0].move_path is None


def test_chunk_lines() -> None:
    hunks = parse_patch(
        patch(
            "*** Update File: a.txt",
            "before the first chunk: ignored",
            "@@   def f():  ",
            " keep",
            "-gone",
            "+new",
            "no marker: ignored",
            "",
            "@@",
            "-x",
        )
    )
    assert isinstance(hunks[0], UpdateFile)
    assert hunks[0].chunks == [
        UpdateChunk(["keep", "gone"], ["keep", "new"], change_context="def f():"),
        UpdateChunk(["x"], [], change_context=None),
    ]


def test_update_without_chunks() -> None:
    assert parse_patch(patch("*** Update File: a.txt")) == [UpdateFile("a.txt", [])]


def test_empty_line_inside_a_chunk_is_ignored() -> None:
    hunks = parse_patch(patch("*** Update File: t.txt", "@@", "-b", "+B", "", "-d", "+D"))
    assert isinstance(hunks[0], UpdateFile)
    assert hunks[0].chunks == [UpdateChunk(["b", "d"], ["B", "D"])]


def test_crlf_patch_keeps_carriage_returns_in_lines() -> None:
    text = "*** Begin Patch\r\n*** Update File: a.txt\r\n@@\r\n-x\r\n+y\r\n*** End Patch\r\n"
    hunks = parse_patch(text)
    assert hunks == [UpdateFile("a.txt", [UpdateChunk(["x\r"], ["y\r"])])]


def test_sections_stop_at_the_end_marker() -> None:
    text = "*** Begin Patch\n*** Add File: a.txt\n+in\n  *** End Patch\n+after"
    assert parse_patch(text) == [AddFile("a.txt", "in")]


# -- "*** End of File" (the documented choice: honoured) ----------------------------------------------------


EOF_PATCH = patch(
    "*** Update File: a.txt",
    "@@",
    "-last",
    "+end",
    "*** End of File",
    "@@ later",
    "-x",
    "+y",
)


def test_end_of_file_marks_the_chunk_and_later_chunks_are_kept() -> None:
    (hunk,) = parse_patch(EOF_PATCH)
    assert isinstance(hunk, UpdateFile)
    assert hunk.chunks == [
        UpdateChunk(["last"], ["end"], is_end_of_file=True),
        UpdateChunk(["x"], ["y"], change_context="later"),
    ]


def test_end_of_file_inert_like_opencode() -> None:
    (hunk,) = parse_patch(EOF_PATCH, honour_end_of_file=False)
    assert isinstance(hunk, UpdateFile)
    assert hunk.chunks == [UpdateChunk(["last"], ["end"])]


def test_end_of_file_then_next_file() -> None:
    hunks = parse_patch(
        patch("*** Update File: a.txt", "@@", "-a", "+b", "*** End of File", "*** Delete File: c.txt")
    )
    assert [hunk.type for hunk in hunks] == ["update", "delete"]


# -- applying chunks (spec §8.2) --------------------------------------------------------------------------


def chunk(old: list[str], new: list[str], context: str | None = None, eof: bool = False) -> UpdateChunk:
    return UpdateChunk(old, new, context, eof)


def test_replace_one_line() -> None:
    assert derive_new_contents("a\nb\nc\n", [chunk(["b"], ["B"])], "f") == "a\nB\nc\n"


def test_two_chunks_in_order() -> None:
    text = "line 1\nline 2\nline 3\nline 4\n"
    chunks = [
        chunk(["line 1", "line 2"], ["line 1", "LINE 2"]),
        chunk(["line 3", "line 4"], ["line 3", "LINE 4"]),
    ]
    assert derive_new_contents(text, chunks, "f") == "line 1\nLINE 2\nline 3\nLINE 4\n"


def test_second_chunk_is_sought_after_the_first() -> None:
    text = "x\ny\nx\n"
    chunks = [chunk(["y"], ["Y"]), chunk(["x"], ["X"])]
    assert derive_new_contents(text, chunks, "f") == "x\nY\nX\n"


def test_change_context_disambiguates() -> None:
    text = "fn a\nx=10\ny=2\nfn b\nx=10\ny=20\n"
    result = derive_new_contents(text, [chunk(["x=10"], ["x=11"], "fn b")], "f")
    assert result == "fn a\nx=10\ny=2\nfn b\nx=11\ny=20\n"


def test_missing_context_error() -> None:
    with pytest.raises(PatchError) as caught:
        derive_new_contents("a\n", [chunk(["a"], ["b"], "nowhere")], "/p/f.txt")
    assert str(caught.value) == "Failed to find context 'nowhere' in /p/f.txt"


def test_missing_lines_error_lists_the_old_lines() -> None:
    with pytest.raises(PatchError) as caught:
        derive_new_contents("a\nb\n", [chunk(["x", "y"], ["z"])], "/p/f.txt")
    assert str(caught.value) == "Failed to find expected lines in /p/f.txt:\nx\ny"


def test_lines_must_be_contiguous() -> None:
    with pytest.raises(PatchError, match="Failed to find expected lines"):
        derive_new_contents("a\nb\nc\nd\n", [chunk(["b", "d"], ["B", "D"])], "f")


def test_trailing_empty_old_line_is_retried_without_it() -> None:
    result = derive_new_contents("a\nb\n", [chunk(["b", ""], ["B", ""])], "f")
    assert result == "a\nB\n"


def test_result_always_ends_with_a_newline() -> None:
    assert derive_new_contents("no newline", [chunk(["no newline"], ["has newline now"])], "f") == (
        "has newline now\n"
    )
    assert derive_new_contents("x", [], "f") == "x\n"


def test_empty_file_and_insertion() -> None:
    assert derive_new_contents("", [chunk([], ["First line"])], "f") == "First line\n"


def test_trailing_blank_lines_are_kept() -> None:
    assert derive_new_contents("a\n\n", [chunk(["a"], ["b"])], "f") == "b\n\n"
    assert derive_new_contents("a\n\n", [], "f") == "a\n\n"


def test_pure_insert_without_context_appends_at_the_end() -> None:
    result = derive_new_contents("a\nb\n", [chunk([], ["c"])], "f")
    assert result == "a\nb\nc\n"


def test_pure_insert_after_context_goes_right_after_that_line() -> None:
    text = "class A:\n    x = 1\nclass B:\n    y = 2\n"
    result = derive_new_contents(text, [chunk([], ["    z = 3"], "class A:")], "f")
    assert result == "class A:\n    z = 3\n    x = 1\nclass B:\n    y = 2\n"


def test_pure_insert_after_last_line_context() -> None:
    text = "using System;\n\nclass Test {}\n"
    result = derive_new_contents(text, [chunk([], ["class Next {}"], "class Test {}")], "f")
    assert result == "using System;\n\nclass Test {}\nclass Next {}\n"


def test_insert_with_context_lines() -> None:
    assert derive_new_contents(
        "alpha\nomega\n", [chunk(["alpha", "omega"], ["alpha", "beta", "omega"])], "f"
    ) == ("alpha\nbeta\nomega\n")


def test_end_of_file_chunk_prefers_the_last_window() -> None:
    text = "start\nmarker\nend\nmarker\nend\n"
    result = derive_new_contents(text, [chunk(["marker", "end"], ["marker-changed", "end"], eof=True)], "f")
    assert result == "start\nmarker\nend\nmarker-changed\nend\n"
    # without the flag the first occurrence is taken
    plain = derive_new_contents(text, [chunk(["marker", "end"], ["marker-changed", "end"])], "f")
    assert plain == "start\nmarker-changed\nend\nmarker\nend\n"


def test_end_of_file_chunk_falls_back_to_forward_search() -> None:
    text = "a\nb\nc\n"
    assert derive_new_contents(text, [chunk(["a"], ["A"], eof=True)], "f") == "A\nb\nc\n"


def test_end_of_file_window_uses_looser_passes_too() -> None:
    text = "x  \ny\nx  \n"
    assert derive_new_contents(text, [chunk(["x"], ["X"], eof=True)], "f") == "x  \ny\nX\n"


def test_end_of_file_window_never_goes_before_the_cursor() -> None:
    # the last window ("b", "ctx", "c") starts before the line after the context: it is not taken
    with pytest.raises(PatchError, match="Failed to find expected lines"):
        derive_new_contents("a\nb\nctx\nc\n", [chunk(["b", "ctx", "c"], ["B"], "ctx", eof=True)], "f")


def test_seek_passes_in_order() -> None:
    # an exact match later in the file wins over a looser match earlier
    assert seek_sequence(["foo  ", "foo"], ["foo"], 0) == 1
    assert seek_sequence(["  foo", "foo  "], ["foo"], 0) == 1
    assert seek_sequence(["\u201cq\u201d", " \u201cq\u201d "], ['"q"'], 0) == 0
    assert seek_sequence(["a"], [], 0) == -1
    assert seek_sequence(["a", "b"], ["a"], 1) == -1


def test_whitespace_fallbacks() -> None:
    assert derive_new_contents("line1  \nline2\nline3   \n", [chunk(["line2"], ["changed"])], "f") == (
        "line1  \nchanged\nline3   \n"
    )
    assert derive_new_contents(
        "alpha   \n  beta\n", [chunk(["alpha"], ["ALPHA"]), chunk(["beta"], ["BETA"])], "f"
    ) == ("ALPHA\nBETA\n")


def test_punctuation_fallback_uses_the_patch_text() -> None:
    text = "He said \u201chello\u201d\nsome\u2014dash\nend\n"
    result = derive_new_contents(text, [chunk(['He said "hello"'], ['He said "hi"'])], "f")
    assert result == 'He said "hi"\nsome\u2014dash\nend\n'


def test_punctuation_table() -> None:
    assert normalise_punctuation("\u2018\u2019\u201a\u201b") == "''''"
    assert normalise_punctuation("\u201c\u201d\u201e\u201f") == '""""'
    assert normalise_punctuation("\u2010\u2011\u2012\u2013\u2014\u2015") == "------"
    assert normalise_punctuation("wait\u2026\u00a0x") == "wait... x"


def test_javascript_whitespace() -> None:
    assert js_trim("\ufeff\u00a0 x \u3000") == "x"
    assert js_trim("\x1cx\x85") == "\x1cx\x85"  # Python's strip() would remove these; JavaScript keeps them


def test_bom_is_kept() -> None:
    assert derive_new_contents("\ufeffa\nb\n", [chunk(["a"], ["A"])], "f") == "\ufeffA\nb\n"


def test_crlf_file_stays_crlf() -> None:
    text = "one\r\ntwo\r\nthree\r\n"
    assert derive_new_contents(text, [chunk(["two"], ["2", "2b"])], "f") == "one\r\n2\r\n2b\r\nthree\r\n"
    # a CRLF patch against a CRLF file too
    assert derive_new_contents(text, [chunk(["two\r"], ["2\r"])], "f") == "one\r\n2\r\nthree\r\n"
    # without a final line break, one is added (CRLF)
    assert derive_new_contents("a\r\nb", [chunk(["b"], ["B"])], "f") == "a\r\nB\r\n"


def test_mixed_endings_behave_like_opencode() -> None:
    # not every break is CRLF: lines keep their "\r", replaced lines take the patch's text
    text = "one\r\ntwo\r\nthree\n"
    assert derive_new_contents(text, [chunk(["two"], ["2"])], "f") == "one\r\n2\nthree\n"


def test_unchanged_lines_are_byte_identical() -> None:
    text = "\tkeep me  \n\u00e9t\u00e9\nx\n"
    assert derive_new_contents(text, [chunk(["x"], ["y"])], "f") == "\tkeep me  \n\u00e9t\u00e9\ny\n"


# -- properties ----------------------------------------------------------------------------------------------

PATCH_LINES = st.one_of(
    st.sampled_from(
        [
            "*** Begin Patch",
            "*** End Patch",
            "*** Add File: a.txt",
            "*** Add File:",
            "*** Delete File: b.txt",
            "*** Update File: c.txt",
            "*** Move to: d.txt",
            "*** End of File",
            "@@",
            "@@ ctx",
            "",
            " ",
            "-",
            "+",
        ]
    ),
    st.text(max_size=12).map(lambda s: s.replace("\n", "")),
    st.builds(lambda p, s: p + s, st.sampled_from([" ", "-", "+", "@@", "***"]), st.text(max_size=8)),
)


@settings(max_examples=300)
@given(st.one_of(st.text(), st.lists(PATCH_LINES, max_size=30).map("\n".join)))
def test_parse_raises_only_patch_errors(text: str) -> None:
    for honour in (True, False):
        try:
            hunks = parse_patch(text, honour_end_of_file=honour)
        except PatchError as error:
            assert str(error) == "Invalid patch format: missing Begin/End markers"
            continue
        assert all(isinstance(hunk, AddFile | DeleteFile | UpdateFile) for hunk in hunks)


LINE = st.text(alphabet="ab \t", max_size=4)


@settings(max_examples=300)
@given(
    lines=st.lists(LINE, min_size=1, max_size=25),
    data=st.data(),
)
def test_single_line_replacement_with_context(lines: list[str], data: Any) -> None:
    index = data.draw(st.integers(0, len(lines) - 1), label="index")
    before = data.draw(st.integers(0, 3), label="context before")
    after = data.draw(st.integers(0, 3), label="context after")
    replacement = data.draw(st.text(alphabet="abcXY \t", max_size=5), label="replacement")
    start = max(0, index - before)
    end = min(len(lines), index + 1 + after)
    body = [f" {line}" for line in lines[start:index]]
    body += [f"-{lines[index]}", f"+{replacement}"]
    body += [f" {line}" for line in lines[index + 1 : end]]
    (hunk,) = parse_patch(patch("*** Update File: f.txt", "@@", *body))
    assert isinstance(hunk, UpdateFile)

    # the oracle: the first place where the window occurs exactly is the one changed
    window = lines[start:end]
    first = next(i for i in range(len(lines)) if lines[i : i + len(window)] == window)
    expected = list(lines)
    expected[first + (index - start)] = replacement
    result = derive_new_contents("\n".join(lines) + "\n", hunk.chunks, "f.txt")
    assert result == "\n".join(expected) + "\n"


# -- patch.test.ts: the applier (through the tool) -----------------------------------------------------------


def apply(project: Project, text: str) -> Any:
    return Harness(project, "apply_patch").run({"patchText": text})


def test_applier_adds_a_file(project: Project) -> None:
    target = project.directory / "new-file.txt"
    result = apply(project, patch(f"*** Add File: {target}", "+Hello World", "+This is a new file"))
    assert result.output.endswith("\nA new-file.txt")
    # the tool ends the file with a newline (OpenCode's standalone applier would not)
    assert target.read_text() == "Hello World\nThis is a new file\n"


def test_applier_deletes_a_file(project: Project) -> None:
    target = project.directory / "to-delete.txt"
    target.write_text("This file will be deleted")
    result = apply(project, patch(f"*** Delete File: {target}"))
    assert result.output.endswith("\nD to-delete.txt")
    assert not target.exists()


def test_applier_updates_a_file(project: Project) -> None:
    target = project.directory / "to-update.txt"
    target.write_text("line 1\nline 2\nline 3\n")
    apply(
        project, patch(f"*** Update File: {target}", "@@", " line 1", "-line 2", "+line 2 updated", " line 3")
    )
    assert target.read_text() == "line 1\nline 2 updated\nline 3\n"


def test_applier_moves_and_updates(project: Project) -> None:
    old, new = project.directory / "old-name.txt", project.directory / "new-name.txt"
    old.write_text("old content\n")
    result = apply(
        project, patch(f"*** Update File: {old}", f"*** Move to: {new}", "@@", "-old content", "+new content")
    )
    assert result.output.endswith("\nM new-name.txt")
    assert not old.exists()
    assert new.read_text() == "new content\n"


def test_applier_several_operations(project: Project) -> None:
    root = project.directory
    (root / "file1.txt").write_text("content 1")
    (root / "file2.txt").write_text("content 2")
    result = apply(
        project,
        patch(
            f"*** Add File: {root / 'file3.txt'}",
            "+new file content",
            f"*** Update File: {root / 'file1.txt'}",
            "@@",
            "-content 1",
            "+updated content 1",
            f"*** Delete File: {root / 'file2.txt'}",
        ),
    )
    assert result.output.split("\n")[1:] == ["A file3.txt", "M file1.txt", "D file2.txt"]
    assert (root / "file1.txt").read_text() == "updated content 1\n"
    assert not (root / "file2.txt").exists()
    assert (root / "file3.txt").read_text() == "new file content\n"


def test_applier_creates_parent_directories(project: Project) -> None:
    nested = project.directory / "deep" / "nested" / "file.txt"
    apply(project, patch(f"*** Add File: {nested}", "+Deep nested content"))
    assert nested.read_text() == "Deep nested content\n"


@pytest.mark.parametrize("header", ["*** Update File: {}\n@@\n-old line\n+new line", "*** Delete File: {}"])
def test_applier_fails_on_missing_file(project: Project, header: str) -> None:
    missing = project.directory / "does-not-exist.txt"
    with pytest.raises(ToolError, match=r"^apply_patch verification failed: "):
        apply(project, patch(header.format(missing)))


def test_applier_empty_file(project: Project) -> None:
    target = project.directory / "empty.txt"
    target.write_text("")
    apply(project, patch(f"*** Update File: {target}", "@@", "+First line"))
    assert target.read_text() == "First line\n"


def test_applier_no_trailing_newline(project: Project) -> None:
    target = project.directory / "no-newline.txt"
    target.write_text("no newline")
    apply(project, patch(f"*** Update File: {target}", "@@", "-no newline", "+has newline now"))
    assert target.read_text() == "has newline now\n"


def test_applier_two_chunks(project: Project, tmp_path: Path) -> None:
    target = project.directory / "multi-chunk.txt"
    target.write_text("line 1\nline 2\nline 3\nline 4\n")
    apply(
        project,
        patch(
            f"*** Update File: {target}",
            "@@",
            " line 1",
            "-line 2",
            "+LINE 2",
            "@@",
            " line 3",
            "-line 4",
            "+LINE 4",
        ),
    )
    assert target.read_text() == "line 1\nLINE 2\nline 3\nLINE 4\n"
