"""The built-in ``edit`` tool (builtin-tools spec §6; test list "edit.test.ts" in §17).

Not applicable yet: the "watcher Updated event" cases of edit.test.ts (this package publishes no file
events) and LSP diagnostics (none exist; ``diagnostics`` is always ``{}``).
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from opencode_cli import Project
from opencode_cli.context import PermissionRequest
from opencode_cli.errors import AbortedError, InvalidArgumentsError, RejectedError, ToolError
from opencode_cli.permission import Rule
from opencode_cli.session import Decision

BOM = "\ufeff"


@pytest.fixture
def harness(project: Project) -> Harness:
    return Harness(project, "edit")


def edit(
    harness: Harness, path: Path | str, old: str, new: str, replace_all: bool | None = None, **changes: Any
) -> Any:
    args: dict[str, Any] = {"filePath": str(path), "oldString": old, "newString": new}
    if replace_all is not None:
        args["replaceAll"] = replace_all
    return harness.run(args, **changes)


def edit_error(harness: Harness, path: Path | str, old: str, new: str, **options: Any) -> str:
    with pytest.raises(ToolError) as caught:
        edit(harness, path, old, new, **options)
    return str(caught.value)


# -- edit.test.ts: creating files with an empty oldString ------------------------------------------------


def test_empty_old_string_creates_file(harness: Harness, root: Path) -> None:
    path = root / "fresh.txt"
    result = edit(harness, path, "", "new content")
    assert path.read_text() == "new content"
    assert "new content" in result.metadata["diff"]
    assert result.output == "Edit applied successfully."
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_empty_old_string_on_existing_bom_file_fails(harness: Harness, root: Path) -> None:
    path = root / "Program.cs"
    data = (BOM + "using System;\n").encode()
    path.write_bytes(data)
    message = edit_error(harness, path, "", "replacement")
    assert "oldString cannot be empty" in message
    assert message == (
        "oldString cannot be empty when editing an existing file. Provide the exact text to replace, or use "
        "write for an intentional full-file replacement."
    )
    assert path.read_bytes() == data


def test_empty_old_string_creates_parent_directories(harness: Harness, root: Path) -> None:
    path = root / "deep" / "er" / "file.txt"
    edit(harness, path, "", "nested")
    assert path.read_text() == "nested"


def test_empty_old_string_new_file_with_bom(harness: Harness, root: Path) -> None:
    path = root / "bom.txt"
    result = edit(harness, path, "", BOM + "hello\n")
    assert path.read_bytes() == (BOM + "hello\n").encode()
    assert BOM not in result.metadata["diff"]
    assert "+hello" in result.metadata["diff"]


def test_empty_old_string_keeps_line_endings_as_given(harness: Harness, root: Path) -> None:
    path = root / "crlf.txt"
    edit(harness, path, "", "a\r\nb\n")
    assert path.read_bytes() == b"a\r\nb\n"


# -- edit.test.ts: replacing -----------------------------------------------------------------------------


def test_replaces_text(harness: Harness, root: Path) -> None:
    path = root / "file.txt"
    path.write_text("old content")
    result = edit(harness, path, "old content", "new content here")
    assert "Edit applied successfully" in result.output
    assert path.read_text() == "new content here"


def test_bom_file_keeps_bom_and_diff_has_none(harness: Harness, root: Path) -> None:
    path = root / "Program.cs"
    path.write_bytes((BOM + "using System;\nclass Program {}\n").encode())
    result = edit(harness, path, "using System;", "using Up;")
    assert path.read_bytes() == (BOM + "using Up;\nclass Program {}\n").encode()
    diff = result.metadata["diff"]
    assert "-using System;" in diff
    assert "+using Up;" in diff
    assert BOM not in diff


def test_new_string_starting_with_bom_adds_one(harness: Harness, root: Path) -> None:
    path = root / "plain.txt"
    path.write_text("first\nsecond\n")
    edit(harness, path, "first", BOM + "first")
    assert path.read_bytes() == (BOM + "first\nsecond\n").encode()


def test_bom_not_doubled(harness: Harness, root: Path) -> None:
    path = root / "bom.txt"
    path.write_bytes((BOM + "first\n").encode())
    edit(harness, path, "first", BOM + "one")
    assert path.read_bytes() == (BOM + "one\n").encode()


def test_missing_file(harness: Harness, root: Path) -> None:
    path = root / "missing.txt"
    message = edit_error(harness, path, "a", "b")
    assert "not found" in message
    assert message == f"File {path} not found"


def test_identical_strings(harness: Harness, root: Path) -> None:
    path = root / "file.txt"
    path.write_text("same")
    message = edit_error(harness, path, "same", "same")
    assert "identical" in message
    assert message == "No changes to apply: oldString and newString are identical."
    assert harness.requests == []


def test_empty_identical_strings(harness: Harness, root: Path) -> None:
    assert "identical" in edit_error(harness, root / "whatever.txt", "", "")


def test_old_string_not_found(harness: Harness, root: Path) -> None:
    path = root / "file.txt"
    path.write_text("alpha\nbeta\n")
    message = edit_error(harness, path, "gamma", "delta")
    assert message.startswith("Could not find oldString")
    assert path.read_text() == "alpha\nbeta\n"
    assert harness.asked("edit") == []


def test_multiple_matches(harness: Harness, root: Path) -> None:
    path = root / "file.txt"
    path.write_text("x = 1\nx = 1\n")
    assert edit_error(harness, path, "x = 1", "x = 2").startswith("Found multiple matches for oldString")


BLOCK_FILE = textwrap.dedent(
    """\
    function compute(a, b) {
      const sum = a + b;
      const product = a * b;
      const ratio = a / b;
      log(sum, product, ratio);
      return sum;
    }
    """
)


def test_block_anchor_rejects_far_longer_function(harness: Harness, root: Path) -> None:
    path = root / "compute.js"
    path.write_text(BLOCK_FILE)
    old = "function compute(a, b) {\n  throw new Error('unrelated');\n  return sum;"
    message = edit_error(harness, path, old, "function compute() {}")
    assert message.startswith("Could not find oldString")
    assert path.read_text() == BLOCK_FILE


def test_block_anchor_rejects_unrelated_middle_line(harness: Harness, root: Path) -> None:
    path = root / "small.js"
    content = "function small() {\n  return computeTheAnswer(42);\n}\n"
    path.write_text(content)
    old = "function small() {\n  console.log('zzz');\n}"
    assert edit_error(harness, path, old, "function small() {}").startswith("Could not find oldString")
    assert path.read_text() == content


def test_block_anchor_accepts_similar_middle(harness: Harness, root: Path) -> None:
    path = root / "compute.js"
    path.write_text(BLOCK_FILE)
    old = (
        "function compute(a, b) {\n  const sum = a + b;\n  const product = a * b;\n"
        "  const ratio = a / c;\n  log(sum, product, ratio);\n  return sum;\n}"
    )
    edit(harness, path, old, "function compute() {}")
    assert path.read_text() == "function compute() {}\n"


def test_replace_all(harness: Harness, root: Path) -> None:
    path = root / "file.txt"
    path.write_text("foo bar foo baz foo")
    edit(harness, path, "foo", "qux", replace_all=True)
    assert path.read_text() == "qux bar qux baz qux"


def test_replace_all_is_literal(harness: Harness, root: Path) -> None:
    path = root / "file.txt"
    path.write_text("a-a")
    edit(harness, path, "a", "[$&]", replace_all=True)
    assert path.read_text() == "[$&]-[$&]"


def test_multi_line_replacement(harness: Harness, root: Path) -> None:
    path = root / "file.txt"
    path.write_text("line1\nline2\nline3")
    edit(harness, path, "line2", "new line 2\nextra line")
    assert path.read_text() == "line1\nnew line 2\nextra line\nline3"


def test_crlf_file(harness: Harness, root: Path) -> None:
    path = root / "file.txt"
    path.write_bytes(b"line1\r\nold\r\nline3")
    edit(harness, path, "old", "new")
    assert path.read_bytes() == b"line1\r\nnew\r\nline3"


def test_directory_path(harness: Harness, root: Path) -> None:
    (root / "folder").mkdir()
    message = edit_error(harness, root / "folder", "a", "b")
    assert "directory" in message
    assert message == f"Path is a directory, not a file: {root / 'folder'}"


def test_filediff_metadata(harness: Harness, root: Path) -> None:
    path = root / "file.txt"
    path.write_text("one\ntwo\nthree\n")
    result = edit(harness, path, "two", "2a\n2b")
    filediff = result.metadata["filediff"]
    assert filediff["file"] == str(path)
    assert filediff["additions"] == 2
    assert filediff["deletions"] == 1
    assert filediff["patch"] == result.metadata["diff"]
    assert result.metadata["diagnostics"] == {}


def test_disproportionate_match_refused(harness: Harness, root: Path) -> None:
    path = root / "file.txt"
    content = "x\na" + " " * 600 + "\nb\ny\n"
    path.write_text(content)
    message = edit_error(harness, path, "a\nb", "c")
    assert message.startswith("Refusing replacement because the matched span is much larger than oldString.")
    assert path.read_text() == content


# -- edit.test.ts: line endings matrix -------------------------------------------------------------------

LF = "alpha\nbeta\ngamma\n"
CRLF = "alpha\r\nbeta\r\ngamma\r\n"


@pytest.mark.parametrize(
    ("file_text", "old", "new", "expected"),
    [
        pytest.param(LF, "alpha\nbeta", "one\ntwo", "one\ntwo\ngamma\n", id="lf-file-lf-strings"),
        pytest.param(
            CRLF, "alpha\r\nbeta", "one\r\ntwo", "one\r\ntwo\r\ngamma\r\n", id="crlf-file-crlf-strings"
        ),
        pytest.param(LF, "alpha\r\nbeta", "one\r\ntwo", "one\ntwo\ngamma\n", id="lf-file-crlf-strings"),
        pytest.param(CRLF, "alpha\nbeta", "one\ntwo", "one\r\ntwo\r\ngamma\r\n", id="crlf-file-lf-strings"),
        pytest.param(LF, "beta", "x\r\ny", "alpha\nx\ny\ngamma\n", id="lf-file-only-new-crlf"),
        pytest.param(CRLF, "beta", "x\ny", "alpha\r\nx\r\ny\r\ngamma\r\n", id="crlf-file-only-new-lf"),
        pytest.param(LF, "alpha\r\nbeta\ngamma", "a\nb\r\nc", "a\nb\nc\n", id="lf-file-mixed-strings"),
        pytest.param(
            CRLF, "alpha\r\nbeta\ngamma", "a\nb\r\nc", "a\r\nb\r\nc\r\n", id="crlf-file-mixed-strings"
        ),
    ],
)
def test_line_endings_matrix(
    harness: Harness, root: Path, file_text: str, old: str, new: str, expected: str
) -> None:
    path = root / "endings.txt"
    path.write_bytes(file_text.encode())
    result = edit(harness, path, old, new)
    assert path.read_bytes() == expected.encode()
    assert "\r" not in result.metadata["diff"]


@pytest.mark.parametrize(("ending"), ["\n", "\r\n"], ids=["lf", "crlf"])
def test_replace_all_multi_line_block_keeps_endings(harness: Harness, root: Path, ending: str) -> None:
    path = root / "repeat.txt"
    path.write_bytes("x\ny\nmid\nx\ny\n".replace("\n", ending).encode())
    edit(harness, path, "x\ny", "z\nw", replace_all=True)
    assert path.read_bytes() == "z\nw\nmid\nz\nw\n".replace("\n", ending).encode()


# -- permissions, titles, live metadata ------------------------------------------------------------------


def test_permission_request(harness: Harness, root: Path) -> None:
    path = root / "src" / "app.py"
    path.parent.mkdir()
    path.write_text("value = 1\n")
    result = edit(harness, path, "value = 1", "value = 2")
    assert [r.permission for r in harness.requests] == ["edit"]
    request = harness.requests[0]
    assert request.patterns == ["src/app.py"]
    assert request.always == ["*"]
    assert request.metadata == {"filepath": str(path), "diff": result.metadata["diff"]}
    assert result.title == "src/app.py"


def test_diff_shape(harness: Harness, root: Path) -> None:
    path = root / "app.py"
    path.write_text("def f():\n    a = 1\n    return a\n")
    result = edit(harness, path, "    a = 1", "    a = 2")
    assert result.metadata["diff"] == (
        f"Index: {path}\n"
        + "=" * 67
        + f"\n--- {path}\n+++ {path}\n@@ -1,3 +1,3 @@\n"
        + " def f():\n-    a = 1\n+    a = 2\n     return a\n"
    )


def test_diff_hunk_in_a_long_file(harness: Harness, root: Path) -> None:
    path = root / "long.txt"
    path.write_text("".join(f"line {n}\n" for n in range(1, 2001)))
    result = edit(harness, path, "line 1000\n", "line one thousand\n")
    diff = result.metadata["diff"]
    assert "@@ -996,9 +996,9 @@\n line 996\n" in diff
    assert "-line 1000\n+line one thousand\n line 1001\n" in diff
    assert diff.endswith(" line 1004\n")
    assert result.metadata["filediff"]["additions"] == 1
    assert result.metadata["filediff"]["deletions"] == 1


def test_live_metadata_update(harness: Harness, root: Path) -> None:
    path = root / "file.txt"
    path.write_text("a\n")
    result = edit(harness, path, "a", "b")
    assert harness.updates == [
        (
            None,
            {
                "diff": result.metadata["diff"],
                "filediff": result.metadata["filediff"],
                "diagnostics": {},
            },
        )
    ]


def test_rejected_permission_leaves_file(project: Project, root: Path) -> None:
    path = root / "file.txt"
    path.write_text("before")

    async def reject(request: PermissionRequest) -> Decision:
        return Decision("reject")

    with pytest.raises(RejectedError):
        project.run_tool(
            "edit",
            {"filePath": str(path), "oldString": "before", "newString": "after"},
            prompt=reject,
            rules=[Rule("edit", "*", "ask")],
        )
    assert path.read_text() == "before"


def test_outside_file_asks_external_directory_first(harness: Harness, root: Path, tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    path = outer / "f.txt"
    path.write_text("x")
    result = edit(harness, path, "x", "y")
    assert [r.permission for r in harness.requests] == ["external_directory", "edit"]
    assert harness.requests[0].patterns == [f"{outer}/*"]
    assert harness.requests[0].always == [f"{outer}/*"]
    assert harness.requests[1].patterns == ["../outer/f.txt"]
    assert result.title == "../outer/f.txt"
    assert path.read_text() == "y"


def test_inside_file_does_not_ask_external_directory(harness: Harness, root: Path) -> None:
    (root / "f.txt").write_text("x")
    edit(harness, root / "f.txt", "x", "y")
    assert harness.asked("external_directory") == []


def test_relative_path_resolved_against_directory(harness: Harness, root: Path) -> None:
    (root / "rel.txt").write_text("x")
    result = edit(harness, "rel.txt", "x", "y")
    assert (root / "rel.txt").read_text() == "y"
    assert result.title == "rel.txt"


def test_title_without_git(tmp_path: Path, env: dict[str, str]) -> None:
    plain = tmp_path / "plain"
    (plain / "a").mkdir(parents=True)
    (plain / "a" / "b.txt").write_text("b")
    harness = Harness(Project(plain, env=env, autoload_plugins=False), "edit")
    result = edit(harness, "a/b.txt", "b", "c")
    assert result.title == "a/b.txt"
    assert harness.asked("edit")[0].patterns == ["a/b.txt"]


# -- validation ------------------------------------------------------------------------------------------


def test_empty_file_path(harness: Harness) -> None:
    assert harness.error({"filePath": "", "oldString": "a", "newString": "b"}) == "filePath is required"


def test_missing_argument(harness: Harness) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        harness.run({"filePath": "x", "oldString": "a"})
    assert '["newString"]' in str(caught.value)


def test_replace_all_must_be_a_boolean(harness: Harness, root: Path) -> None:
    (root / "f.txt").write_text("a a")
    with pytest.raises(InvalidArgumentsError):
        harness.run(
            {"filePath": str(root / "f.txt"), "oldString": "a", "newString": "b", "replaceAll": "true"}
        )


def test_unknown_arguments_ignored(harness: Harness, root: Path) -> None:
    (root / "f.txt").write_text("a")
    harness.run({"filePath": str(root / "f.txt"), "oldString": "a", "newString": "b", "bogus": 1})
    assert (root / "f.txt").read_text() == "b"


def test_parameter_names(harness: Harness) -> None:
    schema = harness.tool.schema()
    assert list(schema["properties"]) == ["filePath", "oldString", "newString", "replaceAll"]
    assert schema["required"] == ["filePath", "oldString", "newString"]


# -- files: modes, read-only, symlinks, bytes ------------------------------------------------------------


def test_read_only_file_fails_even_as_root(harness: Harness, root: Path) -> None:
    path = root / "locked.txt"
    path.write_text("keep")
    path.chmod(0o444)
    try:
        message = edit_error(harness, path, "keep", "lose")
        assert message == f"Cannot write {path}: Permission denied"
        assert path.read_text() == "keep"
        assert stat.S_IMODE(path.stat().st_mode) == 0o444
    finally:
        path.chmod(0o644)


@pytest.mark.parametrize("mode", [0o600, 0o755, 0o640])
def test_existing_mode_kept(harness: Harness, root: Path, mode: int) -> None:
    path = root / "script.sh"
    path.write_text("echo a\n")
    path.chmod(mode)
    edit(harness, path, "echo a", "echo b")
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_text() == "echo b\n"


def test_new_file_mode_ignores_umask(harness: Harness, root: Path) -> None:
    previous = os.umask(0o077)
    try:
        edit(harness, root / "new.txt", "", "x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((root / "new.txt").stat().st_mode) == 0o644


def test_symlink_written_through(harness: Harness, root: Path) -> None:
    target = root / "real.txt"
    target.write_text("value = 1\n")
    link = root / "link.txt"
    link.symlink_to(target)
    edit(harness, link, "value = 1", "value = 2")
    assert link.is_symlink()
    assert os.readlink(link) == str(target)
    assert target.read_text() == "value = 2\n"


def test_symlink_to_outside_asks_for_the_real_directory(harness: Harness, root: Path, tmp_path: Path) -> None:
    outer = tmp_path / "elsewhere"
    outer.mkdir()
    (outer / "t.txt").write_text("a")
    (root / "l.txt").symlink_to(outer / "t.txt")
    edit(harness, root / "l.txt", "a", "b")
    assert harness.asked("external_directory")[0].patterns == [f"{outer}/*"]
    assert (outer / "t.txt").read_text() == "b"


def test_non_utf8_bytes_survive(harness: Harness, root: Path) -> None:
    path = root / "latin1.txt"
    path.write_bytes(b"caf\xe9 = 1\nname = 'x'\n")
    edit(harness, path, "name = 'x'", "name = 'y'")
    assert path.read_bytes() == b"caf\xe9 = 1\nname = 'y'\n"


def test_no_temporary_files_left(harness: Harness, root: Path) -> None:
    path = root / "f.txt"
    path.write_text("a")
    edit(harness, path, "a", "b")
    assert sorted(p.name for p in root.iterdir()) == [".git", "f.txt"]


# -- concurrency -----------------------------------------------------------------------------------------


def test_concurrent_edits_with_slow_ask_both_apply(project: Project, root: Path) -> None:
    path = root / "counter.py"
    path.write_text("top = 0\nmiddle = 0\nbottom = 0\n")
    windows: list[tuple[float, float]] = []

    async def slow(request: PermissionRequest) -> Decision:
        started = time.monotonic()
        await asyncio.sleep(0.2)
        windows.append((started, time.monotonic()))
        return Decision("once")

    async def main() -> None:
        async with project:  # a language server an edit of counter.py starts is stopped on this loop
            await both()

    async def both() -> None:
        session = project.session(prompt=slow, rules=[Rule("edit", "*", "ask")])
        await asyncio.gather(
            session.execute("edit", {"filePath": str(path), "oldString": "top = 0", "newString": "top = 1"}),
            session.execute(
                "edit", {"filePath": str(path), "oldString": "bottom = 0", "newString": "bottom = 2"}
            ),
        )

    asyncio.run(main())
    assert path.read_text() == "top = 1\nmiddle = 0\nbottom = 2\n"
    # the lock covers the ask: the second prompt only started after the first was answered
    assert len(windows) == 2
    first, second = sorted(windows)
    assert second[0] >= first[1]


def test_aborted_edit_releases_the_lock(harness: Harness, root: Path) -> None:
    path = root / "f.txt"
    path.write_text("one\ntwo\n")

    async def never(request: PermissionRequest) -> None:
        await asyncio.Event().wait()

    async def main() -> None:
        ctx = harness.context(asker=never)
        call = asyncio.ensure_future(
            harness.tool.run({"filePath": str(path), "oldString": "one", "newString": "1"}, ctx)
        )
        await asyncio.sleep(0.05)
        ctx.abort.abort()
        with pytest.raises(AbortedError):
            await call
        await asyncio.wait_for(
            harness.tool.run(
                {"filePath": str(path), "oldString": "two", "newString": "2"}, harness.context()
            ),
            timeout=60,  # a lock left held would block it for good: a generous bound, never reached otherwise
        )

    asyncio.run(main())
    assert path.read_text() == "one\n2\n"


def test_edits_from_threads_are_serialised(harness: Harness, root: Path) -> None:
    path = root / "shared.txt"
    count = 25
    path.write_text("".join(f"{m}{i:02d}: todo\n" for m in "ab" for i in range(count)))
    errors: list[BaseException] = []

    def worker(marker: str) -> None:
        async def run() -> None:
            for i in range(count):
                await harness.tool.run(
                    {
                        "filePath": str(path),
                        "oldString": f"{marker}{i:02d}: todo",
                        "newString": f"{marker}{i:02d}: done",
                    },
                    harness.context(),
                )

        try:
            asyncio.run(run())
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(m,)) for m in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert path.read_text() == "".join(f"{m}{i:02d}: done\n" for m in "ab" for i in range(count))


CHILD_EDITS = """
import asyncio, sys
from pathlib import Path
from opencode_cli import Project
from opencode_cli.contract import define

root, marker, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
tool = define("edit", "opencode_cli.tools.edit:init").load()
session = Project(root, autoload_plugins=False).session()
print("ready", flush=True)
sys.stdin.readline()

async def main():
    for i in range(count):
        ctx = session.context("edit", None)
        await tool.run(
            {"filePath": str(root / "shared.txt"), "oldString": f"{marker}{i:02d}: todo",
             "newString": f"{marker}{i:02d}: done"},
            ctx,
        )

asyncio.run(main())
print("done", flush=True)
"""


@pytest.mark.slow
def test_edits_from_processes_are_serialised(root: Path) -> None:
    path = root / "shared.txt"
    count = 50
    path.write_text("".join(f"{m}{i:02d}: todo\n" for m in "ab" for i in range(count)))
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD_EDITS, str(root), marker, str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for marker in "ab"
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    for child in children:  # start both at once
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    for child in children:
        out, _ = child.communicate(timeout=120)
        assert child.returncode == 0
        assert out.strip() == "done"
    assert path.read_text() == "".join(f"{m}{i:02d}: done\n" for m in "ab" for i in range(count))


# -- property: a unique substring is replaced exactly like str.replace ----------------------------------

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\ufeff"),
    max_size=120,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT, data=st.data(), crlf=st.booleans(), bom=st.booleans())
def test_unique_substring_edit_equals_str_replace(
    harness: Harness, root: Path, text: str, data: st.DataObject, crlf: bool, bom: bool
) -> None:
    assume(text)
    start = data.draw(st.integers(0, len(text) - 1), label="start")
    end = data.draw(st.integers(start + 1, len(text)), label="end")
    old = text[start:end]
    assume(text.find(old) == text.rfind(old))  # once, overlapping occurrences included
    new = data.draw(TEXT, label="new")
    assume(new != old)

    file_text = text.replace("\n", "\r\n") if crlf else text
    path = root / "prop.txt"
    path.write_bytes((BOM if bom else "").encode() + file_text.encode())
    edit(harness, path, old, new)

    ending = "\r\n" if "\r\n" in file_text else "\n"
    expected = text.replace(old, new, 1).replace("\n", ending)
    assert path.read_bytes() == (BOM if bom else "").encode() + expected.encode()
