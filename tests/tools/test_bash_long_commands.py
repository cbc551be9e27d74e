"""A long command runs (issue 44, edge 9): past the kernel's limit on one argument (128 KiB) and the
launcher's socket buffer (about 200 KiB) alike, in every installed shell, sandboxed or not: the command no
longer travels in ``argv`` or in the launcher's message. Its stdin is still empty, and a short command is run
as before (``shell -c COMMAND``)."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from _harness import Harness

SHELLS = [name for name in ("bash", "sh", "zsh") if shutil.which(name)]
SIZES = [150 * 1024, 210 * 1024, 1024 * 1024]


@pytest.fixture(params=SHELLS)
def harness(request: pytest.FixtureRequest, make_project: Any) -> Harness:
    project = make_project(extra_env={"SHELL": shutil.which(request.param) or request.param})
    return Harness(project, "bash", env=True, timed=True)


@pytest.mark.parametrize("size", SIZES)
def test_a_long_command_runs(harness: Harness, size: int) -> None:
    # a comment as long as asked, then what it does: the whole text is the command
    command = "# " + "x" * size + "\nprintf 'ran:%s\\n' \"$(wc -c)\"; echo done"
    result = harness.run({"command": command, "description": "A long command"})
    assert result.output == "ran:0\ndone\n", result.output[:300]  # its stdin is empty, as for any command
    assert result.metadata["exit"] == 0


def test_a_480_kb_here_document_arrives_whole(harness: Harness) -> None:
    body = "\n".join(f"line {n:06d} " + "y" * 40 for n in range(10_000))  # about 520 KB
    command = f"cat > big.txt <<'EOF'\n{body}\nEOF\nwc -l < big.txt; tail -n 1 big.txt"
    result = harness.run({"command": command, "description": "Write a big file"})
    assert result.output.split("\n")[:2] == ["10000", f"line 009999 {'y' * 40}"], result.output[:300]
    assert (harness.project.directory / "big.txt").read_text() == body + "\n"


def test_a_long_command_runs_in_the_sandbox(make_project: Any) -> None:
    from opencode_cli.sandbox import landlock

    if landlock.kernel_abi()[0] < 1:
        pytest.skip("no Landlock here")
    shell = shutil.which("bash") or "/bin/bash"
    project = make_project(extra_env={"SHELL": shell, "OPENCODE_SANDBOX": "workspace-write"})
    harness = Harness(project, "bash", env=True, timed=True)
    command = "# " + "z" * (300 * 1024) + "\necho inside > made.txt; cat made.txt"
    result = harness.run({"command": command, "description": "Sandboxed"})
    assert result.output == "inside\n", result.output[:300]
