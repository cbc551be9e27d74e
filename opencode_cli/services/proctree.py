"""What ``/proc`` tells of the processes :func:`~.processes.spawn` started (Linux; elsewhere nothing is
known and nothing is done).

* :func:`command_pid`: the command a one-shot launcher runs (the server's own pid, which ``mcp list``
  shows), not the launcher's.
* Every process a spawn starts, and all it starts in turn (a ``setsid`` child, a double-forked daemon),
  carries a mark in its environment (:data:`MARK`). A launcher that was SIGKILLed cannot kill what is
  below it; :func:`kill_marked` finds those processes by the mark and kills them.
"""

from __future__ import annotations

import itertools
import os
import secrets
import signal

#: The environment variable whose value marks the processes of one spawn.
MARK = "OPENCODE_SPAWN"
#: Rounds of killing marked processes (one may fork while the others are killed).
KILL_ROUNDS = 5

_numbers = itertools.count(1)


def new_mark() -> str:
    """A mark no other spawn (of this host or any other) carries."""
    return f"{os.getpid()}.{next(_numbers)}.{secrets.token_hex(4)}"


def _stat(pid: int | str) -> tuple[str, int, int, int] | None:
    """``(state, session, start time, pid)`` of a process, or ``None`` when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    # after the name: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
    # stime cutime cstime priority nice num_threads itrealvalue starttime
    return fields[0].decode(), int(fields[3]), int(fields[19]), int(pid)


def command_pid(launcher: int) -> int | None:
    """The pid of the command under the one-shot launcher ``launcher``: its first child still in the
    launcher's session (descendants the launcher reaps as orphans started later, or left the session).
    ``None`` when it cannot be told."""
    try:
        with open(f"/proc/{launcher}/task/{launcher}/children") as file:
            children = file.read().split()
    except OSError:
        return None
    found = [
        stat
        for stat in map(_stat, children)
        if stat is not None and stat[0] not in ("Z", "X") and stat[1] == launcher
    ]
    return min(found, key=lambda stat: (stat[2], stat[3]))[3] if found else None


def marked(mark: str) -> list[int]:
    """The live processes whose environment carries ``MARK=mark`` (this one aside)."""
    needle = f"{MARK}={mark}".encode()
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    me = os.getpid()
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as file:
                if needle not in file.read().split(b"\0"):
                    continue
        except OSError:
            continue
        stat = _stat(name)
        if stat is not None and stat[0] not in ("Z", "X"):
            found.append(int(name))
    return found


def kill_marked(mark: str) -> None:
    """SIGKILL every process carrying ``mark`` (what a killed launcher left behind)."""
    for _ in range(KILL_ROUNDS):
        pids = marked(mark)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:  # gone meanwhile, or not ours
                continue
