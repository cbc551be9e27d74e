"""Process helpers the tests share: orphan checks (read from ``/proc``, a zombie counts as gone) and the
real ``opencode`` console script run as a child process."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def wait_gone(pid: int, timeout: float = 60.0) -> bool:
    """Wait up to ``timeout`` seconds for process ``pid`` to be gone; whether it is."""
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def run_opencode(project_dir: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run the installed ``opencode`` script with ``args`` in ``project_dir`` (no stdin, output captured)."""
    script = Path(sys.executable).parent / "opencode"
    return subprocess.run(
        [str(script), *args],
        cwd=project_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
