"""``opencode tools run`` on a real pseudo-terminal: live progress and the permission prompt."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

PROGRESS_TOOL = '''
import os
import time

from opencode_cli import ToolContext, tool


@tool
def default(ctx: ToolContext) -> str:
    """Report progress, then finish once the test has seen it (it creates the file `go`)."""
    ctx.metadata(title="warming up the flux capacitor")
    while not os.path.exists("go"):
        time.sleep(0.01)
    return "done"
'''


def spawn(cli_env: dict[str, str], *args: str) -> pexpect.spawn:
    env = {k: v for k, v in cli_env.items() if k != "project"}
    script = str(Path(sys.executable).parent / "opencode")
    return pexpect.spawn(script, list(args), cwd=cli_env["project"], env=env, encoding="utf-8", timeout=30)


def test_progress_is_shown_live(cli_env: dict[str, str]) -> None:
    tool_file = Path(cli_env["project"], ".opencode", "tool", "slow.py")
    tool_file.parent.mkdir(parents=True)
    tool_file.write_text(PROGRESS_TOOL)
    child = spawn(cli_env, "tools", "run", "slow")
    child.expect("warming up the flux capacitor")  # while the tool still runs: it waits for `go`
    Path(cli_env["project"], "go").touch()
    child.expect("done")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_permission_prompt_once_and_reject_with_feedback(cli_env: dict[str, str], tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "note.txt"
    outside.parent.mkdir()
    outside.write_text("outside words\n")
    child = spawn(cli_env, "tools", "run", "read", f"filePath={outside}")
    child.expect(r"Allow external_directory on .*elsewhere/\*\? \[o\]nce, \[a\]lways, \[r\]eject: ")
    child.sendline("o")
    child.expect("1: outside words")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    child = spawn(cli_env, "tools", "run", "read", f"filePath={outside}")
    child.expect(r"\[r\]eject: ")
    child.sendline("r")
    child.expect("Feedback for the model")
    child.sendline("read the copy in docs/ instead")
    child.expect("with the following feedback: read the copy in docs/ instead")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
