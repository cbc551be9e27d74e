"""Nearby instruction files are shown once per session, also when the session's calls run in several
processes (``opencode tools run read … --session S``; builtin-tools spec §3.3)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: A library host holding session ``ses_rules`` open: it opens the session (loading its transcript),
#: says "ready", waits for a line on stdin, then reads ``sub/x.txt`` and prints the output.
HOLDER = """
import asyncio, sys
from opencode_cli import Project

async def main():
    async with Project(".") as project:
        async with project.session(id="ses_rules", remember=True) as session:
            print("ready", flush=True)
            sys.stdin.readline()
            result = await session.execute("read", {"filePath": "sub/x.txt"})
            print(result.output, flush=True)

asyncio.run(main())
"""


def _project_with_rules(cli_env: dict[str, str]) -> Path:
    project = Path(cli_env["project"])
    (project / "sub").mkdir()
    (project / "sub" / "AGENTS.md").write_text("Be kind to the sub package.\n")
    (project / "sub" / "x.txt").write_text("x content\n")
    (project / "sub" / "y.txt").write_text("y content\n")
    return project


def test_instructions_are_shown_once_per_session_across_processes(
    cli_env: dict[str, str], run_process: Callable[..., Any]
) -> None:
    _project_with_rules(cli_env)
    first = run_process("tools", "run", "read", "filePath=sub/x.txt", "--session", "ses_rules")
    assert first.returncode == 0, first.stderr
    assert "Be kind to the sub package." in first.stdout
    second = run_process("tools", "run", "read", "filePath=sub/y.txt", "--session", "ses_rules")
    assert second.returncode == 0, second.stderr
    assert "y content" in second.stdout
    assert "Be kind to the sub package." not in second.stdout
    again = run_process("tools", "run", "read", "filePath=sub/x.txt", "--session", "ses_rules")
    assert again.returncode == 0, again.stderr
    assert "Be kind to the sub package." not in again.stdout


def test_another_session_and_unnamed_runs_are_shown_the_instructions(
    cli_env: dict[str, str], run_process: Callable[..., Any]
) -> None:
    _project_with_rules(cli_env)
    first = run_process("tools", "run", "read", "filePath=sub/x.txt", "--session", "ses_one")
    assert "Be kind to the sub package." in first.stdout
    other = run_process("tools", "run", "read", "filePath=sub/x.txt", "--session", "ses_two")
    assert "Be kind to the sub package." in other.stdout
    for _ in range(2):  # without --session nothing is remembered
        plain = run_process("tools", "run", "read", "filePath=sub/x.txt")
        assert plain.returncode == 0, plain.stderr
        assert "Be kind to the sub package." in plain.stdout


def test_a_process_already_in_the_session_is_not_shown_them_again(
    cli_env: dict[str, str], run_process: Callable[..., Any]
) -> None:
    _project_with_rules(cli_env)
    env = {k: v for k, v in cli_env.items() if k != "project"}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER],
        cwd=cli_env["project"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        shown = run_process("tools", "run", "read", "filePath=sub/y.txt", "--session", "ses_rules")
        assert shown.returncode == 0, shown.stderr
        assert "Be kind to the sub package." in shown.stdout
        output, errors = holder.communicate("go\n", timeout=60)
    finally:
        if holder.poll() is None:
            holder.kill()
    assert holder.returncode == 0, errors
    assert "x content" in output
    assert "Be kind to the sub package." not in output
