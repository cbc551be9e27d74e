"""Nothing bash starts outlives the host (issue 27): a real ``opencode tools run bash`` process is
SIGKILLed while its command runs, and every process of the command (background ones and orphans
included) is gone soon after, sandbox on or off.

The command's processes are found by a marker in their environment (they all inherit it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import _processes
import pytest
from _processes import wait_for

MARK = "OPENCODE_TEST_HOST_DEATH"


def marked(mark: str, exclude: int) -> list[tuple[int, str]]:
    return _processes.marked(MARK, mark, exclude)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["off", "workspace-write"])
@pytest.mark.parametrize(
    ("command", "sleeps"),
    [
        ("sleep 100", 1),
        ("sleep 100; echo done", 1),
        ("(sleep 100 &); sleep 50", 2),
        ("setsid sleep 100 & sleep 50", 2),  # one leaves the process group: the launcher's tree walk finds it
    ],
    ids=["sleep", "sleep-then-echo", "orphan-and-sleep", "new-session-and-sleep"],
)
def test_sigkill_of_the_host_kills_what_bash_started(
    command: str, sleeps: int, sandbox: str, cli_env: dict[str, str]
) -> None:
    mark = uuid.uuid4().hex
    env = {k: v for k, v in cli_env.items() if k != "project"}
    env[MARK] = mark
    script = Path(sys.executable).parent / "opencode"
    host = subprocess.Popen(
        [str(script), "tools", "run", "bash", "--sandbox", sandbox, f"command={command}"],
        cwd=cli_env["project"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def started() -> bool:
            return sum(line.startswith("sleep ") for _, line in marked(mark, host.pid)) == sleeps

        assert wait_for(started, 60), marked(mark, host.pid)
        host.send_signal(signal.SIGKILL)
        host.wait()
        gone = wait_for(lambda: not marked(mark, host.pid), 5)
        assert gone, marked(mark, host.pid)
    finally:
        for pid, _ in marked(mark, host.pid):
            os.kill(pid, signal.SIGKILL)
        if host.poll() is None:
            host.kill()
            host.wait()
