"""Process helpers the tests share: orphan checks (read from ``/proc``, a zombie counts as gone) and the
real ``opencode`` console script run as a child process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
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


def marked(variable: str, mark: str, exclude: int) -> list[tuple[int, str]]:
    """The live processes (pid, command line) whose environment holds ``variable=mark``, but ``exclude``:
    every process a command started inherits the marker, orphans and new sessions included."""
    needle = f"{variable}={mark}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == exclude:
            continue
        try:
            if needle not in Path(f"/proc/{name}/environ").read_bytes().split(b"\0"):
                continue
            state = Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()[0]
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append((int(name), cmdline.strip()))
    return found


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll ``predicate`` until it holds (True) or ``timeout`` seconds pass (False): a bound, not a wait."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True
