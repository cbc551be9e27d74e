"""Process checks the tests share (orphans): read from ``/proc``, a zombie counts as gone."""

from __future__ import annotations

import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    """Wait up to ``timeout`` seconds for process ``pid`` to be gone; whether it is."""
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True
