"""The host never acts through a link a sandboxed command planted (issue 35, finding 1).

A sandboxed command may write the project, the temporary directory and the spill directory, so it may put
a symbolic link at any name there. Each place where the host keeps a file of its own in such a directory
gets a test here: a link to a place outside is planted where the host will look, the host does its work,
and nothing outside has changed. The first test is the issue's reproduction, end to end through bash in the
sandbox (it created the link's target on the old code).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness

from opencode_cli import builder, files, nofollow, paths, truncate
from opencode_cli.sandbox import landlock

needs_landlock = pytest.mark.skipif(landlock.kernel_abi()[0] < 1, reason="needs Landlock")


class ProjectHarness(Harness):
    def context(self, **changes: Any) -> Any:
        return super().context(**{"project": self.project, **changes})


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory no command may write, with a file in it that must stay as it is."""
    path = tmp_path / "elsewhere"
    path.mkdir()
    (path / "kept").write_text("original")
    os.utime(path / "kept", (1_000_000, 1_000_000))
    return path


def _unchanged(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["kept"]
    assert (outside / "kept").read_text() == "original"
    assert (outside / "kept").stat().st_mtime == 1_000_000


def _bash(make_project: Any, project_dir: Path, tmp_path: Path) -> Harness:
    (project_dir / "opencode.toml").write_text('[sandbox]\nmode = "workspace-write"\nread = "project"\n')
    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    project = make_project(extra_env={"SHELL": shutil.which("bash") or "/bin/bash", "TMPDIR": str(temp)})
    return ProjectHarness(project, "bash", env=True)


@needs_landlock
@pytest.mark.parametrize("target", ["x", "kept"])
def test_a_stamp_replaced_by_a_link_moves_nothing_outside(
    make_project: Any, project_dir: Path, tmp_path: Path, outside: Path, target: str
) -> None:
    """The issue's reproduction: the sandboxed command swaps the cleanup stamp for a link, then prints
    enough to be spilled; the host used to ``touch`` through the link (making ``x``, or resetting the
    time of ``kept``)."""
    bash = _bash(make_project, project_dir, tmp_path)
    first = bash.run({"command": "seq 5000"})
    assert first.metadata["truncated"]
    spill = Path(first.metadata["outputPath"]).parent
    stamp = spill / ".last-cleanup"
    assert stamp.is_file()
    os.utime(stamp, (time.time() - 2 * truncate.CLEANUP_INTERVAL_SECONDS,) * 2)  # a sweep is due
    plant = f"import os; p = {str(stamp)!r}; os.remove(p); os.symlink({str(outside / target)!r}, p)"
    second = bash.run({"command": f"{sys.executable} -c {plant!r} && seq 5000"})
    assert second.metadata["exit"] == 0, second.output
    assert stamp.is_symlink()  # the command did plant it (inside its writable roots)
    assert second.metadata["truncated"]
    _unchanged(outside)


@needs_landlock
def test_a_spill_file_replaced_by_a_link_while_written_moves_nothing_outside(
    make_project: Any, project_dir: Path, tmp_path: Path, outside: Path
) -> None:
    """The command prints past the spill limit, waits for its spill file to appear, swaps it for a link
    to an outside file, and goes on printing: the rest still goes to the descriptor the host made."""
    bash = _bash(make_project, project_dir, tmp_path)
    spill = paths.tool_output_dir(bash.env())
    spill.mkdir(parents=True, exist_ok=True)
    before = set(os.listdir(spill))
    script = (
        "import os, sys, time\n"
        f"spill, before, target = {str(spill)!r}, {sorted(before)!r}, {str(outside / 'kept')!r}\n"
        "sys.stdout.write('a' * 80 + '\\n'); [sys.stdout.write('line %d\\n' % i) for i in range(9000)]\n"
        "sys.stdout.flush()\n"
        "deadline = time.monotonic() + 20\n"
        "while time.monotonic() < deadline:\n"
        "    new = [n for n in os.listdir(spill) if n.startswith('tool_') and n not in before]\n"
        "    if new:\n"
        "        path = os.path.join(spill, new[0]); os.remove(path); os.symlink(target, path)\n"
        "        print('PLANTED'); break\n"
        "    time.sleep(0.01)\n"
        "[sys.stdout.write('more %d\\n' % i) for i in range(9000)]\n"
    )
    (project_dir / "plant.py").write_text(script)
    result = bash.run({"command": f"{sys.executable} plant.py"})
    assert result.metadata["exit"] == 0, result.output
    assert Path(result.metadata["outputPath"]).is_symlink()  # the command did swap it
    _unchanged(outside)


def test_cleanup_removes_an_old_link_itself_never_its_target(tmp_path: Path, outside: Path) -> None:
    spill = tmp_path / "tool-output"
    spill.mkdir()
    (spill / "tool_link").symlink_to(outside / "kept")
    (spill / "tool_dir").symlink_to(outside)
    for name in ("tool_link", "tool_dir"):
        os.utime(spill / name, (1_000_000, 1_000_000), follow_symlinks=False)
    removed = truncate.cleanup(spill)
    assert sorted(p.name for p in removed) == ["tool_dir", "tool_link"]
    _unchanged(outside)


def test_a_spill_is_never_written_through_a_link(tmp_path: Path, outside: Path) -> None:
    """A link planted at a spill name the host then picks (names are time-ordered, so guessable) makes
    the spill fail, not write outside."""
    spill = tmp_path / "tool-output"
    spill.mkdir()
    fd = nofollow.open_dir(spill)
    try:
        os.symlink(str(outside / "kept"), "tool_guess", dir_fd=fd)
        with pytest.raises(FileExistsError):
            nofollow.create(fd, "tool_guess")
    finally:
        os.close(fd)
    _unchanged(outside)


def test_a_stamp_that_is_a_link_or_not_a_file_starts_no_sweep(tmp_path: Path, outside: Path) -> None:
    spill = tmp_path / "tool-output"
    spill.mkdir()
    (spill / ".last-cleanup").symlink_to(outside / "kept")
    assert truncate.schedule_cleanup(spill, interval=0) is None
    (spill / ".last-cleanup").unlink()
    os.mkfifo(spill / ".last-cleanup")  # would block an open for reading
    assert truncate.schedule_cleanup(spill, interval=0) is None
    _unchanged(outside)


def test_edit_locks_replace_what_was_planted_and_never_go_through_it(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The edit locks live in the host's runtime directory, which no command is given to write; what an
    unsandboxed one put there anyway — a link or a file at ``run``, at ``locks`` or at the lock file — is
    replaced, never followed: the lock works, and nothing is made or touched outside."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    edited = tmp_path / "file.txt"
    lock = files.lock_path(edited)
    run = tmp_path / "data" / "opencode" / "run"
    assert lock.parent == run / "locks"

    async def take() -> None:
        async with files.file_lock(edited):
            pass

    asyncio.run(take())
    for planted in (run, run / "locks", lock):
        for kind in ("link", "file"):
            shutil.rmtree(planted) if planted.is_dir() and not planted.is_symlink() else planted.unlink()
            if kind == "link":
                planted.symlink_to(outside / "kept" if planted == lock else outside)
            else:
                planted.write_text("planted")
            asyncio.run(take())
            assert lock.is_file() and not lock.is_symlink() and run.is_dir() and not run.is_symlink()
    _unchanged(outside)


def test_the_scratch_directory_is_not_made_through_a_link(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bash makes ``<tmp>/opencode`` before a call; a dangling link there makes nothing where it points."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    (temp / "opencode").symlink_to(outside / "made")
    monkeypatch.setenv("TMPDIR", str(temp))
    with pytest.raises(FileExistsError):
        paths.tmp_dir().mkdir(parents=True, exist_ok=True)
    _unchanged(outside)


def test_caches_replace_a_link_at_their_name_never_write_through_it(tmp_path: Path, outside: Path) -> None:
    """The plugin-tools, entry-point and language-server caches are written with :func:`nofollow.replace`
    (a cache directory may be made a writable root by the configuration)."""
    cache = tmp_path / "cache" / "plugin-tools.json"
    cache.parent.mkdir()
    cache.symlink_to(outside / "kept")
    nofollow.replace(cache, b"{}")
    assert not cache.is_symlink() and cache.read_bytes() == b"{}"
    _unchanged(outside)


def test_nothing_is_removed_through_a_linked_directory(tmp_path: Path, outside: Path) -> None:
    (tmp_path / "linked").symlink_to(outside)
    with pytest.raises(OSError):
        nofollow.unlink(tmp_path, ["linked"], "kept")
    _unchanged(outside)


def test_dropped_bytecode_is_never_removed_through_a_linked_pycache(tmp_path: Path, outside: Path) -> None:
    """The builder drops a changed tool file's bytecode; a ``__pycache__`` that is a link to elsewhere
    is left alone (what it leads to is not removed)."""
    tools = tmp_path / ".opencode" / "tools"
    tools.mkdir(parents=True)
    source = tools / "kept.py"
    source.write_text("x = 1\n")
    cached = Path(__import__("importlib.util").util.cache_from_source(str(source)))
    (outside / cached.name).write_text("outside bytecode")
    (tools / "__pycache__").symlink_to(outside)
    builder._drop_bytecode(str(source))
    assert (outside / cached.name).read_text() == "outside bytecode"


def test_tool_files_write_no_bytecode_beside_them(
    make_project: Any, project_dir: Path, outside: Path
) -> None:
    """Loading a project's tool file writes nothing in its directory (a ``__pycache__`` planted as a
    link would otherwise receive the compiled file)."""
    tools = project_dir / ".opencode" / "tools"
    tools.mkdir(parents=True)
    (tools / "hello.py").write_text(
        "from opencode_cli import tool\n\n@tool\ndef hello() -> str:\n    '''Say hello.'''\n    return 'hi'\n"
    )
    (tools / "__pycache__").symlink_to(outside)
    project = make_project()
    assert project.registry.get("hello_hello").loaded().id == "hello_hello"
    _unchanged(outside)


@needs_landlock
@pytest.mark.parametrize("mode", ["off", "workspace-write"])
@pytest.mark.parametrize("place", ["scratch", "runtime", "locks"])
@pytest.mark.parametrize("kind", ["link", "file"])
def test_write_and_edit_work_after_a_command_replaced_the_bookkeeping(
    make_project: Any,
    project_dir: Path,
    tmp_path: Path,
    outside: Path,
    mode: str,
    place: str,
    kind: str,
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The issue's reproduction: a command (sandboxed or not) replaces ``$TMPDIR/opencode`` — or the
    runtime directory the edit locks now live in, or its ``locks`` — with a link to an outside directory
    or with a file; ``write`` and ``edit`` go on working, in this project and a new one, and nothing is
    made outside."""
    (project_dir / "opencode.toml").write_text(f'[sandbox]\nmode = "{mode}"\n')
    temp = tmp_path / "tmp"
    temp.mkdir()
    for name, value in (("TMPDIR", str(temp)), ("XDG_DATA_HOME", env["XDG_DATA_HOME"])):
        monkeypatch.setenv(name, value)  # the host's own environment is the project's, as in the CLI
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    project = make_project(extra_env={"SHELL": shutil.which("bash") or "/bin/bash", "TMPDIR": str(temp)})
    bash = ProjectHarness(project, "bash", env=True)
    (project_dir / "notes.txt").write_text("alpha\n")
    edit = ProjectHarness(project, "edit", env=True)
    edit.run({"filePath": "notes.txt", "oldString": "alpha", "newString": "beta"})  # the locks exist now
    runtime = paths.runtime_dir(bash.env())
    target = {"scratch": temp / "opencode", "runtime": runtime, "locks": runtime / "locks"}[place]
    plant = f"ln -s {outside} {target}" if kind == "link" else f"echo planted > {target}"
    planted = bash.run({"command": f"rm -rf {target}; {plant}"})
    if mode == "off" or place == "scratch":
        assert target.is_symlink() if kind == "link" else target.is_file(), planted.output
    else:  # the sandbox walls the runtime directory off: the command could not even plant it
        assert target.is_dir() and not target.is_symlink(), planted.output
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    for harness in (edit, ProjectHarness(make_project(other), "edit", env=True)):
        written = ProjectHarness(harness.project, "write", env=True)
        assert written.run({"filePath": "new.txt", "content": "one\n"}).output == "Wrote file successfully."
        result = harness.run({"filePath": "new.txt", "oldString": "one", "newString": "two"})
        assert "Edit applied successfully" in result.output, result.output
        assert (Path(harness.project.directory) / "new.txt").read_text() == "two\n"
    _unchanged(outside)
