"""A symlink flipped in a tight loop by a thread: the race the path-judging tests run against."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

FLIP_LIMIT = 2_000_000  # flips; the flipper also stops after FLIP_SECONDS or when the test ends
FLIP_SECONDS = 60.0


def point(link: Path, target: Path) -> None:
    """Make ``link`` lead to ``target`` in one atomic step (a temporary symlink renamed over it)."""
    temp = link.with_name(f".{link.name}.{threading.get_ident()}.tmp")
    temp.unlink(missing_ok=True)
    temp.symlink_to(target)
    os.replace(temp, link)


class Flipper:
    """A thread flipping ``link`` between two targets in a tight loop, bounded in count and time."""

    def __init__(self, link: Path, first: Path, second: Path) -> None:
        self.link, self.targets = link, (first, second)
        self.stop = threading.Event()
        self.flips = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        deadline = time.monotonic() + FLIP_SECONDS
        while not self.stop.is_set() and self.flips < FLIP_LIMIT and time.monotonic() < deadline:
            point(self.link, self.targets[self.flips % 2])
            self.flips += 1

    def __enter__(self) -> Flipper:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
