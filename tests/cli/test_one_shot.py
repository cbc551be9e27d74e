"""One-shot calls of the CLI (``tools run``, ``tools call``) take the one call path (issue 25): they print
what the model would see, close the project, import no pydantic for a plainly valid call, and end on
SIGINT/SIGTERM as an abort: exit 130/143 with the project closed."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

#: Runs the CLI in-process; on the way out it says which modules were imported, and whether the
#: project's ``async with`` was left (``PROJECT CLOSED``).
PROBE = """
import sys
from opencode_cli.project import Project

exit_project = Project.__aexit__
async def traced_exit(self, *exc):
    await exit_project(self, *exc)
    print("PROJECT CLOSED", file=sys.stderr, flush=True)
Project.__aexit__ = traced_exit

from opencode_cli.cli.app import app
try:
    code = app({args!r}, standalone_mode=False)
finally:
    print("MODULES", " ".join(sorted(sys.modules)), file=sys.stderr, flush=True)
sys.exit(code if isinstance(code, int) else 0)
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
def test_a_plain_call_of_a_builtin(args: list[str], cli_env: dict[str, str]) -> None:
    project = Path(cli_env["project"])
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text("# Guide\n")
    done, modules = probe(args, cli_env)
    assert done.returncode == 0, done.stderr
    assert "pydantic" not in modules  # the recorded facts settle the call
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
    again = cli(args, cli_env).stdout  # the console's output is the same ...
    if "glob" in args:  # ... up to ripgrep's order, which its parallel walk leaves unsorted
        assert sorted(again.splitlines()) == sorted(done.stdout.splitlines())
    else:
        assert again == done.stdout


def test_a_call_that_asks_is_approved_with_yes(cli_env: dict[str, str]) -> None:
    (Path(cli_env["project"]) / ".env").write_text("SECRET=1\n")
    done, _ = probe(["tools", "run", "read", "filePath=.env", "--yes"], cli_env)
    assert done.returncode == 0, done.stderr
    assert "1: SECRET=1" in done.stdout
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
    probed, _ = probe(["tools", "call", calls], cli_env)
    assert re.sub(r"call_\w+", "ID", probed.stdout) == re.sub(r"call_\w+", "ID", done.stdout)


#: A tool file that says it started, then waits: an async one until cancelled, a sync one on its abort.
WAITING_TOOLS = {
    "wait_async": """
import asyncio, sys
from opencode_cli import tool

@tool
async def default() -> str:
    \"\"\"Wait until aborted.\"\"\"
    print("STARTED", file=sys.stderr, flush=True)
    await asyncio.Event().wait()
    return "never"
""",
    "wait_sync": """
import sys
from opencode_cli import ToolContext, tool

@tool
def default(ctx: ToolContext) -> str:
    \"\"\"Wait until aborted, then say so.\"\"\"
    print("STARTED", file=sys.stderr, flush=True)
    ctx.abort.wait()
    return "stopped"
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("tool_name", sorted(WAITING_TOOLS))
@pytest.mark.parametrize(
    ("signum", "code", "message"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_aborts_the_call_and_closes_the_project(
    cli_env: dict[str, str], signum: int, code: int, message: str, tool_name: str
) -> None:
    folder = Path(cli_env["project"]) / ".opencode" / "tool"
    folder.mkdir(parents=True)
    (folder / f"{tool_name}.py").write_text(WAITING_TOOLS[tool_name])
    process = start_probe(["tools", "run", tool_name], cli_env)
    try:
        assert process.stderr is not None
        seen: list[str] = []
        while True:  # bounded by the communicate() timeout below if it never starts
            line = process.stderr.readline()
            if not line or line.startswith("STARTED"):
                break
            seen.append(line)
        assert process.poll() is None, seen
        process.send_signal(signum)
        stdout, rest = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    stderr = "".join(seen) + rest
    assert process.returncode == code, stderr
    assert message in stderr and "Traceback" not in stderr
    assert "PROJECT CLOSED" in stderr
    assert stdout == "" and "[Tool execution was interrupted]" in stderr  # what the model would see


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
def test_a_plain_edit(args: list[str], expected: dict[str, str], cli_env: dict[str, str]) -> None:
    project = Path(cli_env["project"])
    (project / "notes.txt").write_text("old line\n")
    done, modules = probe([*args, "--yes"], cli_env)
    assert done.returncode == 0, done.stderr
    assert "pydantic" not in modules
    assert "PROJECT CLOSED" in done.stderr
    assert {name: (project / name).read_text() for name in expected} == expected
