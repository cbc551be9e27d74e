"""The built-in ``grep`` tool (builtin-tools spec §5; test list "grep.test.ts" in §17).

Every test runs the real ``rg`` (from the ``ripgrep`` package) on real files under ``tmp_path``.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness, Recorder

from opencode_cli import Project
from opencode_cli.context import AbortSignal
from opencode_cli.errors import AbortedError, DeniedError, InvalidArgumentsError, ToolError
from opencode_cli.tools import _ripgrep
from opencode_cli.tools import grep as grep_module

NOTICE = "(Results truncated. Consider using a more specific path or pattern.)"


# -- helpers -------------------------------------------------------------------------------------------


@pytest.fixture
def harness(project: Project) -> Harness:
    return Harness(project, "grep", env=True)


def put(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    return path


def grep(project: Project, args: dict[str, Any], prompt: Recorder | None = None) -> Any:
    return project.run_tool("grep", args, prompt=prompt or Recorder())


def groups(output: str) -> dict[str, list[str]]:
    """``{file: [row, ...]}`` from a result's output, checking the layout on the way."""
    body = output.split("\n", 1)[1]
    if body.endswith("\n\n" + NOTICE):
        body = body[: -len(NOTICE) - 2]
    found: dict[str, list[str]] = {}
    for block in body.split("\n\n"):
        head, *rows = block.split("\n")
        assert head.endswith(":") and head not in found
        assert rows and all(re.fullmatch(r"  Line \d+: .*", row) for row in rows)
        found[head[:-1]] = rows
    return found


# -- grep.test.ts --------------------------------------------------------------------------------------


def test_basic_search(project: Project, root: Path) -> None:
    put(root / "src" / "tool" / "a.ts", "export const a = 1\nconst b = 2\n")
    put(root / "src" / "tool" / "b.ts", "export function f() {}\n")
    put(root / "src" / "tool" / "c.js", "export default 1\n")
    result = grep(project, {"pattern": "export", "path": str(root / "src" / "tool"), "include": "*.ts"})
    assert result.metadata["matches"] > 0
    assert "Found" in result.output
    assert result.metadata == {"matches": 2, "truncated": False}
    assert "c.js" not in result.output


def test_no_matches_returns_correct_output(project: Project, root: Path) -> None:
    put(root / "test.txt", "hello world")
    result = grep(project, {"pattern": "xyznonexistentpatternxyz123", "path": str(root)})
    assert result.metadata == {"matches": 0, "truncated": False}
    assert result.output == "No files found"
    assert result.title == "xyznonexistentpatternxyz123"


def test_finds_matches_in_a_three_line_file(project: Project, root: Path) -> None:
    put(root / "test.txt", "line1\nline2\nline3")
    result = grep(project, {"pattern": "line", "path": str(root)})
    assert result.metadata["matches"] > 0
    assert groups(result.output) == {
        str(root / "test.txt"): ["  Line 1: line1", "  Line 2: line2", "  Line 3: line3"]
    }


def test_truncated_results_report_no_unknown_total(project: Project, root: Path) -> None:
    for index in range(101):
        put(root / f"match-{index}.txt", "needle")
    result = grep(project, {"pattern": "needle", "path": str(root), "include": "*.txt"})
    assert NOTICE in result.output
    assert not re.search(r"showing \d+ of \d+ matches", result.output)


def test_supports_exact_file_paths(project: Project, root: Path) -> None:
    file = put(root / "test.txt", "line1\nline2\nline3")
    result = grep(project, {"pattern": "line2", "path": str(file)})
    assert result.metadata["matches"] == 1
    assert str(file) in result.output
    assert "Line 2: line2" in result.output
    assert result.output == f"Found 1 matches\n{file}:\n  Line 2: line2"


def test_alias_directory_allowed_by_rule_asks_nothing(make_project: Any, root: Path, tmp_path: Path) -> None:
    """Upstream allows ``<alias>/*`` and searches through the link; this framework's external-directory
    guard resolves symlinks (core spec §11.5, newer behaviour), so the rule names the real directory.
    Results still show the path the model asked for."""
    real = tmp_path / "elsewhere" / "real"
    put(real / "test.txt", "needle")
    alias = tmp_path / "elsewhere" / "alias"
    alias.symlink_to(real, target_is_directory=True)
    put(
        root / "opencode.toml",
        f'[permission]\ngrep = "allow"\n[permission.external_directory]\n"{real}/*" = "allow"\n',
    )
    project = make_project()
    prompt = Recorder()
    result = grep(project, {"pattern": "needle", "path": str(alias), "include": "*.txt"}, prompt)
    assert prompt.requests == []
    assert result.metadata["matches"] == 1
    assert str(alias / "test.txt") in result.output
    assert str(real / "test.txt") not in result.output


def test_alias_rule_alone_does_not_cover_the_real_directory(
    make_project: Any, root: Path, tmp_path: Path
) -> None:
    real = tmp_path / "elsewhere" / "real"
    put(real / "test.txt", "needle")
    alias = tmp_path / "elsewhere" / "alias"
    alias.symlink_to(real, target_is_directory=True)
    put(root / "opencode.toml", f'[permission.external_directory]\n"{alias}/*" = "allow"\n')
    prompt = Recorder()
    grep(make_project(), {"pattern": "needle", "path": str(alias)}, prompt)
    assert [r.patterns for r in prompt.asked("external_directory")] == [[f"{real}/*"]]


# -- output format --------------------------------------------------------------------------------------


def test_exact_layout_for_two_files(project: Project, root: Path) -> None:
    a = put(root / "a.py", "import os\nx = 1\nimport sys\n")
    b = put(root / "pkg" / "b.py", "import re\n")
    result = grep(project, {"pattern": "^import"})
    header, body = result.output.split("\n", 1)
    assert header == "Found 3 matches"
    blocks = body.split("\n\n")
    expected = {
        f"{a}:\n  Line 1: import os\n  Line 3: import sys",
        f"{b}:\n  Line 1: import re",
    }
    assert set(blocks) == expected
    assert len(blocks) == 2
    assert result.title == "^import"
    assert result.metadata == {"matches": 3, "truncated": False}


def test_line_terminators_are_stripped(project: Project, root: Path) -> None:
    """Upstream keeps ripgrep's ``\\n`` (and ``\\r\\n``) in the text, which double-spaces the rows; we drop
    the terminator so each row is one line."""
    file = put(root / "crlf.txt", "one\r\ntwo\r\nthree\r\n")
    result = grep(project, {"pattern": "t", "path": str(file)})
    assert result.output == f"Found 2 matches\n{file}:\n  Line 2: two\n  Line 3: three"
    assert "\r" not in result.output


def test_a_lone_carriage_return_inside_a_line_is_kept(project: Project, root: Path) -> None:
    file = put(root / "cr.txt", "a\rb\n")
    result = grep(project, {"pattern": "b", "path": str(file)})
    assert result.output.endswith("  Line 1: a\rb")


def test_long_lines_are_cut_to_2000_characters(project: Project, root: Path) -> None:
    file = put(
        root / "long.txt", "short\n" + "x" * 1990 + "needle" + "y" * 500 + "\n" + "needle" + "z" * 1994 + "\n"
    )
    result = grep(project, {"pattern": "needle", "path": str(file)})
    rows = groups(result.output)[str(file)]
    assert rows[0] == "  Line 2: " + ("x" * 1990 + "needle" + "y" * 4) + "..."
    assert rows[1] == "  Line 3: " + "needle" + "z" * 1994  # exactly 2000: not cut


def test_long_line_cut_never_splits_a_surrogate_pair(project: Project, root: Path) -> None:
    file = put(root / "emoji.txt", "needle" + "a" * 1993 + "😀" * 10 + "\n")
    result = grep(project, {"pattern": "needle", "path": str(file)})
    row = groups(result.output)[str(file)][0]
    assert row == "  Line 1: needle" + "a" * 1993 + "..."


def test_invalid_utf8_lines_are_shown_with_replacement_characters(project: Project, root: Path) -> None:
    file = put(root / "latin1.txt", "café needle\n".encode("latin-1"))
    result = grep(project, {"pattern": "needle", "path": str(file)})
    assert result.output == f"Found 1 matches\n{file}:\n  Line 1: caf\ufffd needle"


def test_relative_path_is_resolved_against_the_project(project: Project, root: Path) -> None:
    put(root / "one" / "a.txt", "needle")
    put(root / "two" / "b.txt", "needle")
    result = grep(project, {"pattern": "needle", "path": "one"})
    assert groups(result.output) == {str(root / "one" / "a.txt"): ["  Line 1: needle"]}


def test_default_path_is_the_project_directory(project: Project, root: Path) -> None:
    put(root / "match.ts", "needle")
    put(root / "sibling.txt", "needle")
    result = grep(project, {"pattern": "needle", "include": "*.ts"})
    assert result.metadata == {"matches": 1, "truncated": False}
    assert str(root / "match.ts") in result.output
    assert "sibling.txt" not in result.output


def test_no_generic_truncation(project: Project, root: Path) -> None:
    put(root / "a.txt", "needle")
    result = grep(project, {"pattern": "needle"})
    assert "outputPath" not in result.metadata


# -- a file as the path --------------------------------------------------------------------------------


def test_file_path_searches_only_that_file(project: Project, root: Path) -> None:
    """Upstream v1.18.3 searched the file's whole directory; we search the file alone."""
    file = put(root / "test.txt", "line1\nline2\nline3")
    put(root / "sibling.txt", "line2\n")
    put(root / "sub" / "deeper.txt", "line2\n")
    result = grep(project, {"pattern": "line2", "path": str(file)})
    assert result.output == f"Found 1 matches\n{file}:\n  Line 2: line2"


def test_file_path_is_searched_whatever_include_says(project: Project, root: Path) -> None:
    file = put(root / "notes.md", "needle\n")
    result = grep(project, {"pattern": "needle", "path": str(file), "include": "*.ts"})
    assert result.metadata["matches"] == 1


def test_symlinked_file_is_reported_under_the_requested_path(project: Project, root: Path) -> None:
    put(root / "data" / "real.txt", "needle\n")
    (root / "link.txt").symlink_to(root / "data" / "real.txt")
    result = grep(project, {"pattern": "needle", "path": "link.txt"})
    assert result.output == f"Found 1 matches\n{root / 'link.txt'}:\n  Line 1: needle"


def test_missing_path_fails_instead_of_searching_elsewhere(project: Project, root: Path) -> None:
    put(root / "sibling.txt", "sibling-marker")
    for target in ("missing-dir", "missing-file.txt", "missing/deeper/target.txt"):
        with pytest.raises(ToolError) as caught:
            grep(project, {"pattern": "sibling-marker", "path": target})
        assert str(caught.value) == f"Search path not found: {target}"


# -- hidden files and ignore files ---------------------------------------------------------------------


def test_hidden_files_and_directories_are_searched(project: Project, root: Path) -> None:
    put(root / ".env", "TOKEN=needle\n")
    put(root / ".config" / "settings.json", '{"needle": 1}\n')
    put(root / "visible.txt", "needle\n")
    result = grep(project, {"pattern": "needle"})
    assert set(groups(result.output)) == {
        str(root / ".env"),
        str(root / ".config" / "settings.json"),
        str(root / "visible.txt"),
    }


def test_gitignored_files_are_not_searched(project: Project, root: Path) -> None:
    put(root / ".gitignore", "build/\n*.log\n")
    put(root / "build" / "out.js", "needle\n")
    put(root / "debug.log", "needle\n")
    put(root / "src.js", "needle\n")
    result = grep(project, {"pattern": "needle"})
    assert set(groups(result.output)) == {str(root / "src.js")}
    result = grep(project, {"pattern": "needle", "include": "*.js"})
    assert set(groups(result.output)) == {str(root / "src.js")}


def test_git_directory_is_never_searched(project: Project, root: Path) -> None:
    put(root / ".git" / "config", "needle\n")
    put(root / ".git" / "refs" / "heads" / "main", "needle\n")
    put(root / "a.txt", "needle\n")
    for include in (None, "*", "**", "config"):
        args = {"pattern": "needle", **({"include": include} if include else {})}
        result = grep(project, args)
        assert "/.git/" not in result.output, include


def test_include_with_brace_alternatives(project: Project, root: Path) -> None:
    put(root / "a.ts", "needle\n")
    put(root / "b.tsx", "needle\n")
    put(root / "c.js", "needle\n")
    put(root / "deep" / "d.ts", "needle\n")
    result = grep(project, {"pattern": "needle", "include": "*.{ts,tsx}"})
    assert set(groups(result.output)) == {
        str(root / "a.ts"),
        str(root / "b.tsx"),
        str(root / "deep" / "d.ts"),
    }


def test_binary_files_are_skipped(project: Project, root: Path) -> None:
    put(root / "blob.bin", b"\x00\x01needle\x00" * 10)
    put(root / "text.txt", "needle\n")
    result = grep(project, {"pattern": "needle"})
    assert set(groups(result.output)) == {str(root / "text.txt")}


def test_user_ripgrep_config_is_ignored(make_project: Any, root: Path, tmp_path: Path) -> None:
    config = tmp_path / "ripgreprc"
    config.write_text("--ignore-case\n--no-ignore\n")
    project = make_project(extra_env={"RIPGREP_CONFIG_PATH": str(config)})
    put(root / ".gitignore", "ignored/\n")
    put(root / "a.txt", "Needle\nneedle\n")
    put(root / "ignored" / "b.txt", "needle\n")
    result = grep(project, {"pattern": "needle"})
    assert groups(result.output) == {str(root / "a.txt"): ["  Line 2: needle"]}


# -- the 100-match limit -------------------------------------------------------------------------------


def test_99_matches_are_not_truncated(project: Project, root: Path) -> None:
    put(root / "many.txt", "needle\n" * 99)
    result = grep(project, {"pattern": "needle"})
    assert result.metadata == {"matches": 99, "truncated": False}
    assert result.output.startswith("Found 99 matches\n")
    assert NOTICE not in result.output


def test_exactly_100_matches_are_flagged_truncated(project: Project, root: Path) -> None:
    """Upstream flags ``rows == 100`` (it cannot tell exactly 100 from more): kept as is."""
    file = put(root / "many.txt", "needle\n" * 100)
    result = grep(project, {"pattern": "needle"})
    assert result.metadata == {"matches": 100, "truncated": True}
    rows = "\n".join(f"  Line {n}: needle" for n in range(1, 101))
    assert result.output == f"Found 100 matches (more matches available)\n{file}:\n{rows}\n\n{NOTICE}"


def test_more_than_100_matches_show_the_first_100(project: Project, root: Path) -> None:
    for index in range(30):
        put(root / f"f{index:02d}.txt", "needle\n" * 10)
    result = grep(project, {"pattern": "needle"})
    assert result.metadata == {"matches": 100, "truncated": True}
    assert result.output.startswith("Found 100 matches (more matches available)\n")
    assert result.output.endswith("\n\n" + NOTICE)
    assert sum(len(rows) for rows in groups(result.output).values()) == 100


# -- errors --------------------------------------------------------------------------------------------


def test_empty_pattern_is_rejected_before_asking(harness: Harness) -> None:
    with pytest.raises(ToolError) as caught:
        harness.run({"pattern": ""})
    assert str(caught.value) == "pattern is required"
    assert harness.requests == []


def test_regex_parse_error_carries_ripgreps_message(project: Project, root: Path) -> None:
    put(root / "a.txt", "x\n")
    with pytest.raises(ToolError) as caught:
        grep(project, {"pattern": "foo(bar"})
    message = str(caught.value)
    assert message.startswith("rg: regex parse error:")
    assert "unclosed group" in message
    assert message == message.strip()


def test_regex_error_even_with_no_files(project: Project, root: Path) -> None:
    (root / "empty").mkdir()
    with pytest.raises(ToolError, match="regex parse error"):
        grep(project, {"pattern": "[z-a]", "path": "empty"})


def test_invalid_include_glob_is_an_error(project: Project, root: Path) -> None:
    put(root / "a.ts", "needle\n")
    with pytest.raises(ToolError) as caught:
        grep(project, {"pattern": "needle", "include": "*.{ts"})
    assert "error parsing glob" in str(caught.value)


def test_a_json_record_over_64_kib_is_an_error(project: Project, root: Path) -> None:
    """Reachable: one matching line longer than 64 KiB (minified or generated files)."""
    put(root / "bundle.min.js", "var a=1;" + "x" * 70_000 + "needle\n")
    with pytest.raises(ToolError) as caught:
        grep(project, {"pattern": "needle"})
    assert str(caught.value) == "Ripgrep JSON record exceeded 65536 bytes"


def test_a_long_line_just_under_the_record_limit_is_fine(project: Project, root: Path) -> None:
    put(root / "wide.txt", "needle" + "x" * 60_000 + "\n")
    result = grep(project, {"pattern": "needle"})
    assert result.metadata["matches"] == 1
    assert result.output.endswith("x" * 1994 + "...")


def test_pattern_is_required(project: Project) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        grep(project, {"path": "."})
    assert '["pattern"]' in str(caught.value)


def test_patterns_starting_with_a_dash_are_patterns(project: Project, root: Path) -> None:
    put(root / "a.txt", "x --version y\n")
    result = grep(project, {"pattern": "--version"})
    assert result.metadata["matches"] == 1


def test_schema_names_and_required(project: Project) -> None:
    schema = project.registry.get("grep").tool.load().schema()
    assert list(schema["properties"]) == ["pattern", "path", "include"]
    assert schema["required"] == ["pattern"]
    assert all(p["type"] == "string" for p in schema["properties"].values())


def test_description_is_read_from_the_text_file(project: Project) -> None:
    tool = project.registry.get("grep").tool
    text = (Path(grep_module.__file__).parent / "grep.txt").read_text()
    assert tool.description == text
    assert 500 < len(text) < 800
    assert "*.{ts,tsx}" in text


# -- permissions and the external-directory guard ------------------------------------------------------


def test_asks_grep_with_the_pattern(harness: Harness, root: Path) -> None:
    put(root / "a.txt", "needle")
    harness.run({"pattern": "needle", "path": ".", "include": "*.txt"})
    [request] = harness.requests
    assert request.permission == "grep"
    assert request.patterns == ["needle"]
    assert request.always == ["*"]
    assert request.metadata == {"pattern": "needle", "path": ".", "include": "*.txt"}


def test_ask_metadata_leaves_out_missing_arguments(harness: Harness) -> None:
    harness.run({"pattern": "needle"})
    assert harness.requests[0].metadata == {"pattern": "needle"}


def test_outside_directory_asks_external_directory_after_grep(harness: Harness, outer: Path) -> None:
    put(outer / "a.txt", "needle")
    result = harness.run({"pattern": "needle", "path": str(outer)})
    assert [r.permission for r in harness.requests] == ["grep", "external_directory"]
    external = harness.requests[1]
    assert external.patterns == external.always == [f"{outer}/*"]
    assert external.metadata == {"filepath": str(outer), "parentDir": str(outer)}
    assert result.metadata["matches"] == 1


def test_outside_file_asks_for_its_directory(harness: Harness, outer: Path) -> None:
    file = put(outer / "notes" / "a.txt", "needle")
    harness.run({"pattern": "needle", "path": str(file)})
    external = harness.requests[1]
    assert external.patterns == [f"{outer / 'notes'}/*"]
    assert external.metadata == {"filepath": str(file), "parentDir": str(outer / "notes")}


def test_outside_directory_through_the_session_asks_the_user(project: Project, outer: Path) -> None:
    put(outer / "a.txt", "needle")
    prompt = Recorder()
    result = grep(project, {"pattern": "needle", "path": str(outer)}, prompt)
    assert [r.patterns for r in prompt.asked("external_directory")] == [[f"{outer}/*"]]
    assert result.metadata["matches"] == 1


def test_rejected_external_directory_stops_the_search(project: Project, outer: Path) -> None:
    put(outer / "a.txt", "needle")
    with pytest.raises(ToolError, match="rejected permission"):
        grep(project, {"pattern": "needle", "path": str(outer)}, Recorder("reject"))


def test_missing_outside_path_asks_before_reporting_it(harness: Harness, outer: Path) -> None:
    with pytest.raises(ToolError, match="Search path not found"):
        harness.run({"pattern": "needle", "path": str(outer / "nope")})
    assert [r.permission for r in harness.requests] == ["grep", "external_directory"]


def test_denied_grep_stops_before_looking_at_the_path(project: Project, root: Path) -> None:
    put(root / "opencode.toml", '[permission]\ngrep = "deny"\n')
    with pytest.raises(DeniedError):
        grep(project, {"pattern": "needle", "path": "missing-dir"})


def test_inside_path_asks_no_external_directory(harness: Harness, root: Path) -> None:
    put(root / "sub" / "a.txt", "needle")
    harness.run({"pattern": "needle", "path": str(root / "sub")})
    assert [r.permission for r in harness.requests] == ["grep"]


# -- abort ---------------------------------------------------------------------------------------------


def rg_processes(cwd: Path) -> list[int]:
    """Live ``rg`` processes whose working directory is ``cwd`` (zombies have none and are not listed)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm") as handle:
                if handle.read().strip() != "rg":
                    continue
            if os.readlink(f"/proc/{entry}/cwd") == str(cwd):
                found.append(int(entry))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see processes")
def test_abort_kills_ripgrep(harness: Harness, root: Path) -> None:
    """rg blocks opening a FIFO nobody writes to; aborting the call must kill it."""
    folder = root / "pipes"
    folder.mkdir()
    os.mkfifo(folder / "fifo")
    abort = AbortSignal()

    async def scenario() -> None:
        call = asyncio.ensure_future(
            harness.tool.run({"pattern": "needle", "path": "pipes/fifo"}, harness.context(abort=abort))
        )
        deadline = time.monotonic() + 60
        while not rg_processes(folder):
            assert time.monotonic() < deadline, "rg never started"
            assert not call.done()
            await asyncio.sleep(0.02)
        abort.abort()
        with pytest.raises(AbortedError):
            await call
        while rg_processes(folder):
            assert time.monotonic() < deadline, "rg was not killed"
            await asyncio.sleep(0.02)

    asyncio.run(scenario())
    assert rg_processes(folder) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see processes")
def test_abort_of_the_runner_itself_kills_ripgrep(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    abort = AbortSignal()

    async def scenario() -> None:
        run = asyncio.ensure_future(
            _ripgrep.run(["--json", "--", "x", "fifo"], cwd=str(tmp_path), limit=100, parse=len, abort=abort)
        )
        deadline = time.monotonic() + 60
        while not rg_processes(tmp_path):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        abort.abort()
        with pytest.raises(AbortedError):
            await run

    asyncio.run(scenario())
    assert rg_processes(tmp_path) == []


def test_stops_reading_at_101_matches(tmp_path: Path) -> None:
    """Much more JSON than a pipe holds: ripgrep is still writing when the 101st match arrives."""
    put(tmp_path / "big.txt", "needle\n" * 20_000)
    parse = grep_module._parser(str(tmp_path), None)
    outcome = asyncio.run(
        _ripgrep.run(["--json", "--", "needle", "."], cwd=str(tmp_path), limit=100, parse=parse)
    )
    assert outcome.truncated and outcome.killed
    assert [m.line for m in outcome.items] == list(range(1, 101))
