"""The built-in ``write`` tool (builtin-tools spec §7; test list "write.test.ts" in §17), and the crash test
of the shared write pipeline.

Not applicable yet: the formatter case of write.test.ts (a formatter that strips the BOM; no formatters
exist in this package) and LSP diagnostics (``diagnostics`` is always ``{}``).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness

from opencode_cli import Project
from opencode_cli.context import PermissionRequest
from opencode_cli.errors import InvalidArgumentsError, RejectedError, ToolError
from opencode_cli.permission import Rule
from opencode_cli.session import Decision

BOM = "\ufeff"


@pytest.fixture
def harness(project: Project) -> Harness:
    return Harness(project, "write")


def write(harness: Harness, path: Path | str, content: str) -> Any:
    return harness.run({"filePath": str(path), "content": content})


def write_error(harness: Harness, path: Path | str, content: str) -> str:
    with pytest.raises(ToolError) as caught:
        write(harness, path, content)
    return str(caught.value)


# -- write.test.ts ---------------------------------------------------------------------------------------


def test_new_file(harness: Harness, root: Path) -> None:
    path = root / "new.txt"
    result = write(harness, path, "hello world")
    assert "Wrote file successfully" in result.output
    assert result.output == "Wrote file successfully."
    assert result.metadata["exists"] is False
    assert path.read_text() == "hello world"


def test_nested_new_path_creates_parents(harness: Harness, root: Path) -> None:
    path = root / "a" / "b" / "c" / "deep.txt"
    write(harness, path, "deep")
    assert path.read_text() == "deep"


def test_relative_path_written_under_directory(harness: Harness, root: Path) -> None:
    result = write(harness, "relative.txt", "rel")
    assert (root / "relative.txt").read_text() == "rel"
    assert result.title == "relative.txt"


def test_overwrite_existing(harness: Harness, root: Path) -> None:
    path = root / "old.txt"
    path.write_text("old")
    result = write(harness, path, "new")
    assert result.metadata["exists"] is True
    assert path.read_text() == "new"


def test_existing_bom_preserved(harness: Harness, root: Path) -> None:
    path = root / "Program.cs"
    path.write_bytes((BOM + "using System;\n").encode())
    write(harness, path, "using Up;\n")
    assert path.read_bytes() == (BOM + "using Up;\n").encode()


def test_bom_in_content_not_doubled(harness: Harness, root: Path) -> None:
    path = root / "Program.cs"
    path.write_bytes((BOM + "a\n").encode())
    write(harness, path, BOM + "b\n")
    assert path.read_bytes() == (BOM + "b\n").encode()


def test_bom_in_content_of_new_file(harness: Harness, root: Path) -> None:
    path = root / "new.cs"
    result = write(harness, path, BOM + "x\n")
    assert path.read_bytes() == (BOM + "x\n").encode()
    assert BOM not in harness.asked("edit")[0].metadata["diff"]
    assert result.metadata["exists"] is False


def test_metadata(harness: Harness, root: Path) -> None:
    path = root / "meta.txt"
    path.write_text("x")
    result = write(harness, path, "y")
    assert result.metadata["filepath"] == str(path)
    assert result.metadata["exists"] is True
    assert result.metadata["diagnostics"] == {}


def test_new_file_mode_0644(harness: Harness, root: Path) -> None:
    previous = os.umask(0o077)
    try:
        write(harness, root / "mode.txt", "x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((root / "mode.txt").stat().st_mode) == 0o644


def test_json_round_trip(harness: Harness, root: Path) -> None:
    data = {"name": "demo", "list": [1, 2, 3], "nested": {"ok": True, "none": None}, "text": "é ü 漢字"}
    content = json.dumps(data, indent=2, ensure_ascii=False)
    write(harness, root / "data.json", content)
    assert json.loads((root / "data.json").read_text(encoding="utf-8")) == data


def test_control_characters_verbatim(harness: Harness, root: Path) -> None:
    write(harness, root / "bin.txt", "Hello\x00World\x01\x02\x03")
    assert (root / "bin.txt").read_bytes() == b"Hello\x00World\x01\x02\x03"


def test_empty_content(harness: Harness, root: Path) -> None:
    write(harness, root / "empty.txt", "")
    assert (root / "empty.txt").read_bytes() == b""


def test_multi_line_with_trailing_newline(harness: Harness, root: Path) -> None:
    content = "line 1\nline 2\nline 3\n"
    write(harness, root / "lines.txt", content)
    assert (root / "lines.txt").read_bytes() == content.encode()


def test_crlf_preserved_byte_for_byte(harness: Harness, root: Path) -> None:
    content = "a\r\nb\r\nc\n\rd"
    write(harness, root / "crlf.txt", content)
    assert (root / "crlf.txt").read_bytes() == content.encode()


def test_crlf_file_overwritten_with_lf(harness: Harness, root: Path) -> None:
    path = root / "win.txt"
    path.write_bytes(b"a\r\nb\r\n")
    write(harness, path, "a\nb\n")
    assert path.read_bytes() == b"a\nb\n"


def test_read_only_file_fails(harness: Harness, root: Path) -> None:
    path = root / "readonly.txt"
    path.write_text("keep")
    path.chmod(0o444)
    try:
        message = write_error(harness, path, "lose")
        assert message == f"Cannot write {path}: Permission denied"
        assert path.read_text() == "keep"
        assert stat.S_IMODE(path.stat().st_mode) == 0o444
    finally:
        path.chmod(0o644)


def test_title_is_worktree_relative(harness: Harness, root: Path) -> None:
    result = write(harness, root / "src" / "components" / "Button.tsx", "export {}\n")
    assert result.title.endswith("src/components/Button.tsx")
    assert result.title == "src/components/Button.tsx"


# -- permissions -----------------------------------------------------------------------------------------


def test_permission_request(harness: Harness, root: Path) -> None:
    path = root / "src" / "x.py"
    write(harness, path, "a = 1\n")
    assert [r.permission for r in harness.requests] == ["edit"]
    request = harness.requests[0]
    assert request.patterns == ["src/x.py"]
    assert request.always == ["*"]
    assert request.metadata["filepath"] == str(path)
    assert "+a = 1" in request.metadata["diff"]
    assert request.metadata["diff"].startswith(f"Index: {path}\n")


def test_diff_keeps_carriage_returns(harness: Harness, root: Path) -> None:
    # unlike edit, write diffs the texts as given
    path = root / "w.txt"
    path.write_bytes(b"a\r\n")
    write(harness, path, "b\r\n")
    assert "-a\r\n+b\r" in harness.asked("edit")[0].metadata["diff"]


def test_outside_file_asks_external_directory_first(harness: Harness, tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    result = write(harness, outer / "f.txt", "x")
    assert [r.permission for r in harness.requests] == ["external_directory", "edit"]
    assert harness.requests[0].patterns == [f"{outer}/*"]
    assert harness.requests[1].patterns == ["../outer/f.txt"]
    assert result.title == "../outer/f.txt"


def test_rejected_write_leaves_nothing(project: Project, root: Path) -> None:
    async def reject(request: PermissionRequest) -> Decision:
        return Decision("reject")

    with pytest.raises(RejectedError):
        project.run_tool(
            "write",
            {"filePath": str(root / "no" / "x.txt"), "content": "x"},
            prompt=reject,
            rules=[Rule("edit", "*", "ask")],
        )
    assert not (root / "no").exists()


# -- validation and failures -----------------------------------------------------------------------------


def test_parameter_names(harness: Harness) -> None:
    schema = harness.tool.schema()
    assert list(schema["properties"]) == ["content", "filePath"]
    assert schema["required"] == ["content", "filePath"]


def test_missing_content(harness: Harness, root: Path) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        harness.run({"filePath": str(root / "x")})
    assert '["content"]' in str(caught.value)


def test_directory_path_fails(harness: Harness, root: Path) -> None:
    (root / "folder").mkdir()
    message = write_error(harness, root / "folder", "x")
    assert message == f"Cannot read {root / 'folder'}: Is a directory"


def test_parent_is_a_file_fails(harness: Harness, root: Path) -> None:
    (root / "plain").write_text("x")
    assert write_error(harness, root / "plain" / "child.txt", "y").startswith("Cannot write ")


# -- files: modes, symlinks ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o600, 0o755])
def test_existing_mode_kept(harness: Harness, root: Path, mode: int) -> None:
    path = root / "run.sh"
    path.write_text("#!/bin/sh\n")
    path.chmod(mode)
    write(harness, path, "#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_symlink_written_through(harness: Harness, root: Path) -> None:
    target = root / "target.txt"
    target.write_text("old")
    link = root / "link.txt"
    link.symlink_to(target)
    result = write(harness, link, "new")
    assert link.is_symlink()
    assert target.read_text() == "new"
    assert result.metadata["exists"] is True


def test_no_temporary_files_left(harness: Harness, root: Path) -> None:
    write(harness, root / "f.txt", "a")
    write(harness, root / "f.txt", "b")
    assert sorted(p.name for p in root.iterdir()) == [".git", "f.txt"]


def test_write_and_edit_share_the_lock(project: Project, root: Path) -> None:
    path = root / "shared.txt"
    path.write_text("a = 0\n")

    async def slow(request: PermissionRequest) -> Decision:
        await asyncio.sleep(0.1)
        return Decision("once")

    async def main() -> None:
        session = project.session(prompt=slow, rules=[Rule("edit", "*", "ask")])
        await asyncio.gather(
            session.execute("write", {"filePath": str(path), "content": "a = 0\nb = 1\n"}),
            session.execute("edit", {"filePath": str(path), "oldString": "a = 0", "newString": "a = 2"}),
        )

    asyncio.run(main())
    # the write takes the lock first; the edit waits (its ask too) and then edits the written text.
    # Without a shared lock the edit would read the old text and its write would drop "b = 1".
    assert path.read_text() == "a = 2\nb = 1\n"


# -- crash test: SIGKILL in the middle of large writes and edits ---------------------------------------

CONTENTS = """
def make(k, v):
    # a distinct 1-4 MB text per (file, version); every line distinct so diffs stay cheap
    size = 1_000_000 + ((k * 2 + v) * 737_531) % 3_000_000
    head = f"file {k} version {v} line "
    out, total, n = [], 0, 0
    while total < size:
        line = f"{head}{n:08d} " + "abcdefghij" * 4 + "\\n"
        out.append(line)
        total += len(line)
        n += 1
    return "".join(out)


def versions(k):
    # file 1 is edited: one body, a last line that flips between two states
    if k == 1:
        body = make(1, 0)
        return body + "state: A\\n", body + "state: B\\n"
    return make(k, 0), make(k, 1)
"""

CRASH_CHILD = (
    CONTENTS
    + """
import asyncio, sys
from pathlib import Path
from opencode_cli import files
from opencode_cli import Project
from opencode_cli.contract import define

root, operations = Path(sys.argv[1]), int(sys.argv[2])
write_tool = define("write", "opencode_cli.tools.write:init").load()
edit_tool = define("edit", "opencode_cli.tools.edit:init").load()
texts = {k: versions(k) for k in range(4)}
state = {k: 0 for k in range(4)}
session = Project(root, autoload_plugins=False).session()
print("ready", flush=True)

async def main():
    for i in range(operations):
        k = (2, 1, 3, 0)[i % 4]  # a direct write, the edit tool, a direct write, the write tool
        path = root / f"f{k}.txt"
        ctx = session.context("write", None)
        after = 1 - state[k]
        if k == 0:  # the write tool
            await write_tool.run({"filePath": str(path), "content": texts[k][after]}, ctx)
        elif k == 1:  # the edit tool
            old, new = ("state: A", "state: B") if after else ("state: B", "state: A")
            await edit_tool.run({"filePath": str(path), "oldString": old, "newString": new}, ctx)
        else:  # the pipeline the tools write through, without the tools' diffing in between
            files.atomic_write(path, texts[k][after])
        state[k] = after
        print(i, flush=True)

asyncio.run(main())
print("finished", flush=True)
"""
)


def _versions() -> dict[int, tuple[bytes, bytes]]:
    namespace: dict[str, Any] = {}
    exec(CONTENTS, namespace)
    return {k: tuple(text.encode() for text in namespace["versions"](k)) for k in range(4)}  # type: ignore[misc]


@pytest.mark.slow
def test_sigkill_during_large_writes_leaves_old_or_new_content(tmp_path: Path) -> None:
    root = tmp_path / "crash"
    root.mkdir()
    versions = _versions()
    sizes = {len(v) for pair in versions.values() for v in pair}
    assert min(sizes) >= 1_000_000 and max(sizes) <= 4_000_100
    rng = random.Random(20240717)
    completed = 0
    leftovers = []
    for _ in range(6):
        for k, (first, _second) in versions.items():
            (root / f"f{k}.txt").write_bytes(first)
        child = subprocess.Popen(
            [sys.executable, "-c", CRASH_CHILD, str(root), "200"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.02, 0.3))
        os.kill(child.pid, signal.SIGKILL)
        out, _ = child.communicate(timeout=30)
        assert child.returncode == -signal.SIGKILL
        completed += len([line for line in out.split() if line.isdigit()])

        for k, pair in versions.items():
            data = (root / f"f{k}.txt").read_bytes()
            assert data in pair, f"f{k}.txt holds neither version ({len(data)} bytes)"
        # a temporary file may survive a SIGKILL: at most the one that was being written, named
        # ".f<k>.txt.<random>.tmp", never the file itself
        temporary = sorted(p.name for p in root.iterdir() if p.name.endswith(".tmp"))
        assert len(temporary) <= 1, temporary
        assert all(name.startswith(".f") and name.count(".txt.") == 1 for name in temporary)
        leftovers += temporary
        for name in temporary:
            (root / name).unlink()
        assert sorted(p.name for p in root.iterdir() if p.name.startswith("f")) == [
            "f0.txt",
            "f1.txt",
            "f2.txt",
            "f3.txt",
        ]
    assert completed > 0  # the child got somewhere before being killed


# -- an abort is answered, never thrown into the write (issue 25) -------------------------------------


@pytest.mark.parametrize("tool_id", ["write", "edit"])
def test_an_abort_before_the_write_leaves_the_file_and_says_so(
    project: Project, root: Path, tool_id: str
) -> None:
    from opencode_cli.context import AbortSignal

    (root / "notes.txt").write_text("old line\n")
    harness = Harness(project, tool_id)
    signal_ = AbortSignal()
    harness.during_ask = lambda request: signal_.abort("cancelled")
    args = {"filePath": "notes.txt"}
    args |= {"content": "new\n"} if tool_id == "write" else {"oldString": "old line", "newString": "new line"}
    message = harness.error(args, abort=signal_)
    assert message == "[Tool execution was interrupted]\nThe file was not written."
    assert (root / "notes.txt").read_text() == "old line\n"
    assert sorted(p.name for p in root.iterdir() if p.name != ".git") == ["notes.txt"]


def test_an_abort_after_the_write_returns_the_result(project: Project, root: Path) -> None:
    """Written is written: an abort that comes once the file is replaced (edit reports its diff then)
    only skips the diagnostics, and the result says the edit was applied."""
    from opencode_cli.context import AbortSignal

    (root / "notes.txt").write_text("old line\n")
    harness = Harness(project, "edit")
    signal_ = AbortSignal()

    async def main() -> Any:
        ctx = harness.context(abort=signal_)
        ctx.on_metadata = lambda title, metadata: signal_.abort("cancelled")
        return await harness.tool.run({"filePath": "notes.txt", "oldString": "old", "newString": "new"}, ctx)

    result = asyncio.run(main())
    assert result.output.startswith("Edit applied successfully.")
    assert (root / "notes.txt").read_text() == "new line\n"
