"""``opencode tools run bash``: as a plain subprocess, and on a pseudo-terminal with live output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from opencode_cli.live import added_output


def test_echo_prints_the_output(run_process: Callable[..., Any]) -> None:
    result = run_process("tools", "run", "bash", "command=echo hi", "--yes")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hi\n"
    assert result.stderr == ""


def test_json_has_exit_code_and_title(run_process: Callable[..., Any]) -> None:
    result = run_process("tools", "run", "bash", "command=echo out; exit 3", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["title"] == "echo out; exit 3"
    assert payload["output"] == "out\n"
    assert payload["metadata"] == {"output": "out\n", "exit": 3, "truncated": False}


def test_outside_path_is_refused_without_a_terminal(run_process: Callable[..., Any], tmp_path: Path) -> None:
    target = tmp_path / "outside.txt"
    result = run_process("tools", "run", "bash", f"command=echo x > {target}")
    assert result.returncode == 1
    assert "permission needed: external_directory" in result.stderr
    assert not target.exists()


def test_timeout_argument(run_process: Callable[..., Any]) -> None:
    result = run_process("tools", "run", "bash", "command=sleep 30", "timeout:=300")
    assert result.returncode == 0
    assert "exceeding timeout 300 ms" in result.stdout


def test_live_output_on_a_terminal(cli_env: dict[str, str]) -> None:
    pexpect = pytest.importorskip("pexpect")
    env = {k: v for k, v in cli_env.items() if k != "project"}
    script = str(Path(sys.executable).parent / "opencode")
    go = Path(cli_env["project"], "go")
    # line-2 waits for a file the test creates only once line-1 is on the terminal
    command = "command=echo line-1; while [ ! -e go ]; do sleep 0.05; done; echo line-2; echo line-3"
    child = pexpect.spawn(
        script, ["tools", "run", "bash", command, "--yes"], cwd=cli_env["project"], env=env,
        encoding="utf-8", timeout=60,
    )  # fmt: skip
    child.expect("line-1")  # shown while the command still runs: it cannot end before `go` exists
    assert "line-2" not in child.before + child.after
    go.touch()
    child.expect("line-3")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (child.before or "").count("line-") >= 3  # then the result itself, on stdout


@pytest.mark.parametrize(
    ("before", "after", "added"),
    [
        ("", "", ""),
        ("", "a\n", "a\n"),
        ("a\n", "a\nb\n", "b\n"),
        ("...\n\n" + "x" * 300 + "abc", "...\n\n" + "x" * 297 + "abcdef", "def"),
        ("old", "new", "new"),
    ],
)
def test_progress_printer_prints_what_was_added(before: str, after: str, added: str) -> None:
    assert added_output(before, after) == added
