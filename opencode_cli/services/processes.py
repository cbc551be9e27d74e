"""Child processes with no orphans: under the launcher (the reaper), their own process group, the
parent-death signal, group stop, and a mark in their environment that finds what a killed launcher left
(:mod:`.proctree`)."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .base import Service

if TYPE_CHECKING:
    import asyncio

    from ..sandbox.landlock import Rules

#: The process groups :func:`spawn` started and :func:`terminate` has not finished yet.
_LIVE_GROUPS: set[int] = set()
#: The mark (:mod:`.proctree`) in the environment of each spawn's processes, by the launcher's pid.
_MARKS: dict[int, str] = {}
#: The children spawned on behalf of the service being started, by pid (set by :class:`Services`).
_OWNER: contextvars.ContextVar[dict[int, asyncio.subprocess.Process] | None] = contextvars.ContextVar(
    "opencode_service", default=None
)


@functools.cache
def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # resolved before the fork: the child only calls it
    except (OSError, AttributeError):
        return None


def _pdeathsig() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel SIGKILL the child when its parent thread dies (Linux only)."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before prctl: the signal will never come
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


async def spawn(*argv: str, rules: Rules | None = None, **kwargs: Any) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec`` for children that must never outlive us, nor their own children.

    The command runs under a one-shot launcher (:func:`~.launch.launcher`), which is the process we get
    (its pid, its exit status: the command's, or the signal that killed it): the launcher is the reaper
    of everything the command starts, passes a SIGTERM on to all of it (those that left the process group
    too), and kills all of it when the command exits, when we exit, or when we are SIGKILLed (its
    parent-death signal). ``rules``, when given, sandbox the command (:mod:`opencode_cli.sandbox`).

    The launcher gets its own process group (``start_new_session``) and, on Linux, ``PR_SET_PDEATHSIG``.
    That signal fires when the *thread* that spawned the child exits, so spawn long-lived children from
    the thread running their loop (as :class:`Services` does). It needs a ``preexec_fn``, which Python
    warns is unsafe with threads (a lock held by another thread at fork time); ours only calls ``prctl``
    and ``getppid``, resolved before the fork, which is safe. It also rules out ``posix_spawn`` (a plain
    fork is used), which costs little for long-lived children. Stop it with :func:`terminate`.
    """
    import asyncio

    from .launch import launcher
    from .proctree import MARK, new_mark

    _check_command(argv[0], kwargs.get("env"), kwargs.get("cwd"))
    argv = (sys.executable, *launcher(rules), *argv)
    mark = new_mark()  # what the launcher cannot kill if it is killed first is found by it
    kwargs["env"] = {**(os.environ if kwargs.get("env") is None else kwargs["env"]), MARK: mark}
    kwargs["start_new_session"] = True
    ours, theirs = _pdeathsig(), kwargs.pop("preexec_fn", None)
    if ours is not None and theirs is not None:

        def both() -> None:
            ours()
            theirs()

        kwargs["preexec_fn"] = both
    elif ours is not None or theirs is not None:
        kwargs["preexec_fn"] = ours or theirs
    process = await asyncio.create_subprocess_exec(*argv, **kwargs)
    _LIVE_GROUPS.add(process.pid)
    _MARKS[process.pid] = mark
    owner = _OWNER.get()
    if owner is not None:
        owner[process.pid] = process
    return process


def _check_command(command: str, env: Any, cwd: Any) -> None:
    """Raise what starting ``command`` directly would (:class:`FileNotFoundError`, :class:`PermissionError`)
    when it cannot be run: the launcher in front of it would only report an exit code."""
    import errno
    import shutil

    if os.sep in command:
        path = os.path.join(cwd, command) if cwd is not None else command
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), command)
        return
    search = (env if env is not None else os.environ).get("PATH", os.defpath)
    if shutil.which(command, path=search) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)


def _signal_group(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:  # not a group leader (not from spawn), or the whole group is gone
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(sig)
    except PermissionError:
        pass


def _kill_groups(children: dict[int, asyncio.subprocess.Process]) -> None:
    """SIGKILL the children's process groups still live (those :func:`terminate` did not finish)."""
    for pgid in list(children):
        if pgid in _LIVE_GROUPS:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            _LIVE_GROUPS.discard(pgid)
        _sweep(pgid)
        del children[pgid]


def _group_alive(pgid: int) -> bool:
    """Whether the group has a member that is not a zombie (orphans' zombies wait for init to reap them)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not os.path.isdir("/proc/self"):
        return True
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            continue
        state, _parent, group = stat[stat.rfind(b")") + 2 :].split()[:3]
        if int(group) == pgid and state != b"Z":
            return True
    return False


async def terminate(process: asyncio.subprocess.Process, timeout: float = 3.0) -> None:
    """Stop a child from :func:`spawn` and its process group: SIGTERM, up to ``timeout`` seconds for
    the group to leave, then SIGKILL. Never raises for a process already gone."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    _signal_group(process, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), timeout)
        while loop.time() < deadline and _group_alive(process.pid):  # the same grace for its children
            await asyncio.sleep(0.02)
    _signal_group(process, signal.SIGKILL)
    _LIVE_GROUPS.discard(process.pid)
    _sweep(process.pid)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), timeout)
    transport = getattr(process, "_transport", None)  # its pipes too: a dead child's may still be open
    if transport is not None and process.returncode is not None:
        transport.close()


def _sweep(pid: int) -> None:
    """Kill what a launcher left behind if it was killed before it could (found by the spawn's mark)."""
    mark = _MARKS.pop(pid, None)
    if mark is not None:
        from .proctree import kill_marked

        kill_marked(mark)


class ProcessService(Service):
    """A service that runs one long-lived child (stdin and stdout are pipes) in its own process group.

    ``process`` is the running :class:`asyncio.subprocess.Process`, for talking to it; extra keyword
    arguments go to :func:`spawn` (``cwd``, ``env``, ``stderr``...).
    """

    def __init__(self, argv: Sequence[str], *, name: str | None = None, timeout: float = 3.0, **kwargs: Any):
        self.argv = list(argv)
        self.name = name or os.path.basename(self.argv[0])
        self.timeout = timeout
        self.kwargs = kwargs
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        """Spawn the child."""
        import subprocess

        options = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, **self.kwargs}
        self.process = await spawn(*self.argv, **options)

    async def stop(self) -> None:
        """Terminate the child's process group (idempotent)."""
        if self.process is not None:
            await terminate(self.process, self.timeout)

    def detail(self) -> str | None:
        """``pid N`` while the child runs."""
        if self.process is None or self.process.returncode is not None:
            return None
        return f"pid {self.process.pid}"
