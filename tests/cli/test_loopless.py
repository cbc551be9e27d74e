"""A plainly valid one-shot call of a built-in that never waits runs without an event loop (issue 19):
``tools run`` of read, glob, grep, write, edit and apply_patch, and ``tools call`` of a read, import no
asyncio, print what they printed before, and still end on SIGINT/SIGTERM with the project closed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

#: Runs the CLI in-process; on the way out it says which modules were imported, and whether the
#: project's ``async with`` was left (``PROJECT CLOSED``). ``OPENING`` is printed when read opens a path.
PROBE = """
import sys
from opencode_cli.project import Project
import opencode_cli.tools.read as read

exit_project = Project.__aexit__
async def traced_exit(self, *exc):
    await exit_project(self, *exc)
    print("PROJECT CLOSED", file=sys.stderr, flush=True)
Project.__aexit__ = traced_exit

open_path = read._open
def traced_open(path):
    print("OPENING", file=sys.stderr, flush=True)
    return open_path(path)
read._open = traced_open

from opencode_cli.cli.app import app
try:
    app({args!r}, standalone_mode=False)
finally:
    print("MODULES", " ".join(sorted(sys.modules)), file=sys.stderr, flush=True)
"""


def _env(cli_env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in cli_env.items() if k != "project"}


def start_probe(args: list[str], cli_env: dict[str, str]) -> subprocess.Popen[str]:
    """The CLI on ``args`` in a fresh process, through :data:`PROBE`, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-c", PROBE.format(args=args)],
        cwd=cli_env["project"],
        env=_env(cli_env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def probe(args: list[str], cli_env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    process = start_probe(args, cli_env)
    try:
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES "))
    return done, set(line.split()[1:])


def cli(args: list[str], cli_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "opencode_cli", *args],
        cwd=cli_env["project"],
        env=_env(cli_env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["tools", "run", "read", "filePath=README.md"],
        ["tools", "run", "read", "filePath=README.md", "--json"],
        ["tools", "run", "glob", "pattern=*.md"],
        ["tools", "run", "grep", "pattern=Guide"],
        ["tools", "call", '{"name": "read", "arguments": {"filePath": "README.md"}}'],
    ],
    ids=" ".join,
)
def test_a_plain_call_of_a_builtin_imports_no_asyncio(args: list[str], cli_env: dict[str, str]) -> None:
    project = Path(cli_env["project"])
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text("# Guide\n")
    done, modules = probe(args, cli_env)
    assert done.returncode == 0, done.stderr
    assert "asyncio" not in modules
    assert "pydantic" not in modules  # the recorded facts still settle the call
    assert "PROJECT CLOSED" in done.stderr
    if "glob" in args:
        assert sorted(done.stdout.splitlines()) == [
            str(project / "README.md"),
            str(project / "docs" / "guide.md"),
        ]
    elif "grep" in args:
        assert done.stdout.startswith("Found 1 matches") and "guide.md" in done.stdout
    elif "--json" in args:
        assert "1: # Demo" in json.loads(done.stdout)["output"]
    else:
        assert "<content>\n1: # Demo\n2: \n3: A small project.\n" in done.stdout
    assert done.stdout == cli(args, cli_env).stdout  # the console's output is the same


def test_a_call_of_a_tool_that_needs_a_loop_still_gets_one(cli_env: dict[str, str]) -> None:
    done, modules = probe(["tools", "run", "bash", "command=echo hi", "--yes"], cli_env)
    assert done.returncode == 0, done.stderr
    assert "asyncio" in modules and "hi" in done.stdout


def test_a_call_that_asks_moves_to_a_loop_and_is_approved_with_yes(cli_env: dict[str, str]) -> None:
    (Path(cli_env["project"]) / ".env").write_text("SECRET=1\n")
    done, modules = probe(["tools", "run", "read", "filePath=.env", "--yes"], cli_env)
    assert done.returncode == 0, done.stderr
    assert "1: SECRET=1" in done.stdout
    assert "asyncio" in modules  # it waited for an answer: on a loop
    assert "PROJECT CLOSED" in done.stderr


def test_a_call_that_asks_without_a_terminal_is_refused_as_before(cli_env: dict[str, str]) -> None:
    (Path(cli_env["project"]) / ".env").write_text("SECRET=1\n")
    done = cli(["tools", "run", "read", "filePath=.env"], cli_env)
    assert done.returncode == 1
    assert "permission needed: read on .env; there is no terminal to ask" in done.stderr
    assert "SECRET" not in done.stdout


def test_tools_call_of_a_read_and_an_invalid_call(cli_env: dict[str, str]) -> None:
    calls = json.dumps(
        [
            {"name": "read", "arguments": {"filePath": "README.md"}},
            {"name": "READ", "arguments": "{not json"},
        ]
    )
    done = cli(["tools", "call", calls], cli_env)
    assert done.returncode == 1
    assert "1: # Demo" in done.stdout and "JSON parsing failed" in done.stdout
    assert "1 of 2 call(s) failed or were rerouted to invalid" in done.stderr
    probed, modules = probe(["tools", "call", calls], cli_env)
    assert re.sub(r"call_\w+", "ID", probed.stdout) == re.sub(r"call_\w+", "ID", done.stdout)
    assert "asyncio" not in modules  # the call rerouted to invalid needs no loop either


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a named pipe")
@pytest.mark.parametrize(
    ("signum", "code", "message"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_ends_a_loopless_call_with_the_project_closed(
    cli_env: dict[str, str], signum: int, code: int, message: str
) -> None:
    fifo = Path(cli_env["project"]) / "pipe"
    os.mkfifo(fifo)  # opening it for reading waits for a writer that never comes
    process = start_probe(["tools", "run", "read", "filePath=pipe"], cli_env)
    try:
        assert process.stderr is not None
        seen: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line or line.startswith("OPENING"):
                break
            seen.append(line)
        assert process.poll() is None, seen
        process.send_signal(signum)
        _, rest = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    stderr = "".join(seen) + rest
    assert process.returncode == code, stderr
    assert message in stderr and "Traceback" not in stderr
    assert "PROJECT CLOSED" in stderr
    modules = next(line for line in stderr.splitlines() if line.startswith("MODULES ")).split()[1:]
    assert "asyncio" not in modules  # the call was loop-less when the signal came


PATCH = """*** Begin Patch
*** Add File: added.txt
+made by a patch
*** Update File: notes.txt
@@
-old line
+new line
*** End Patch"""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["tools", "run", "write", "filePath=written.txt", "content=hello\n"], {"written.txt": "hello\n"}),
        (
            ["tools", "run", "edit", "filePath=notes.txt", "oldString=old line", "newString=new line"],
            {"notes.txt": "new line\n"},
        ),
        (
            ["tools", "run", "apply_patch", f"patchText={PATCH}"],
            {"notes.txt": "new line\n", "added.txt": "made by a patch\n"},
        ),
    ],
    ids=["write", "edit", "apply_patch"],
)
def test_a_plain_edit_runs_without_a_loop(
    args: list[str], expected: dict[str, str], cli_env: dict[str, str]
) -> None:
    project = Path(cli_env["project"])
    (project / "notes.txt").write_text("old line\n")
    done, modules = probe([*args, "--yes"], cli_env)
    assert done.returncode == 0, done.stderr
    assert "asyncio" not in modules and "pydantic" not in modules
    assert "PROJECT CLOSED" in done.stderr
    assert {name: (project / name).read_text() for name in expected} == expected


def test_an_edit_waiting_for_a_held_file_lock_moves_to_a_loop(cli_env: dict[str, str]) -> None:
    """Another process holds the file's edit lock: the call waits for it on a loop, then writes."""
    import fcntl

    from opencode_cli.files import lock_path

    project = Path(cli_env["project"])
    target = project / "notes.txt"
    target.write_text("old line\n")
    lock = lock_path(target)
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)
    args = ["tools", "run", "write", "filePath=notes.txt", "content=mine\n", "--yes"]
    process = start_probe(args, cli_env)
    try:
        deadline = time.monotonic() + 60
        while "asyncio" not in _modules_of(process.pid) and time.monotonic() < deadline:
            if process.poll() is not None:
                break
            time.sleep(0.05)
        assert target.read_text() == "old line\n"  # not while the lock is held
    finally:
        fcntl.flock(holder, fcntl.LOCK_UN)
        os.close(holder)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert target.read_text() == "mine\n"
    modules = next(line for line in stderr.splitlines() if line.startswith("MODULES ")).split()[1:]
    assert "asyncio" in modules  # it waited on a loop


def _modules_of(pid: int) -> str:
    """The shared objects a process has mapped (``_asyncio`` shows once asyncio is imported)."""
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return ""
