"""The launcher of child processes that must die with us (:mod:`opencode_cli.sandbox.launcher`).

The launcher stays between us and a command as the keeper of everything the command starts: when we die
(even by SIGKILL) it kills every descendant, orphans included (``PR_SET_CHILD_SUBREAPER``). Given sandbox
rules, a process confines itself to them (read-only binds, then Landlock) before any command of those rules
runs: a keeper of the long-lived launcher once for all its commands, a one-shot launcher for its one. Two
ways to use it:

* :class:`Launcher`: one long-lived launcher per project (:attr:`opencode_cli.Project.launcher`), started
  on first use, restarted when it died, stopped with the project. Each command is one message (its argv,
  directory and environment, with its pipes' descriptors) on the Unix socket of its sandbox rules; one of
  the keepers the launcher keeps ready for those rules (already confined to them) spawns the command and
  reaps what it leaves. No interpreter starts per command, and usually nothing forks but the command:
  bash's calls go this way.
* :func:`launcher`: the arguments that run a one-shot launcher in front of a command (``python … --
  cmd args…``), for children started by other means: local MCP servers (which the MCP SDK's transport
  pipes) and language servers (:func:`~.processes.spawn` puts every child it starts under one).

Linux only for the reaper and the sandbox; elsewhere the launcher only runs the command.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket
    import subprocess

    from ..sandbox.landlock import Rules

SCRIPT = Path(__file__).resolve().parent.parent / "sandbox" / "launcher.py"
#: Seconds the launcher gets to kill its commands and exit once its socket is closed.
STOP_SECONDS = 3.0
#: Channels (one per set of sandbox rules) kept open to the launcher.
CHANNELS = 8


def launcher(rules: Rules | None = None, status: int = -1) -> list[str]:
    """The interpreter arguments that run a one-shot launcher (put the command and its arguments after).

    ``rules``: the sandbox to apply (``None``: none). ``status``: a descriptor the child inherits
    (``pass_fds``) on which the launcher reports the command's exit (``exit CODE``) or why it could not
    run it (``exec ERRNO MESSAGE``, ``sandbox MESSAGE``), and then stays to reap its background jobs;
    -1: the launcher exits with the command's code instead, killing what the command left behind.
    """
    words = [] if rules is None else rules.as_args()
    return ["-E", "-s", "-S", str(SCRIPT), str(os.getpid()), str(status), *words, "--"]


class Launcher:
    """A long-lived launcher process and the sockets to it (thread-safe; see the module docstring).

    :meth:`submit` hands it one command, on the channel of the command's sandbox rules (opened on first
    use; at most :data:`CHANNELS` are kept, the least recently used closed first). The command's keeper
    reports on the status pipe: ``pid PID`` (the keeper, leader of the command's process group), then
    ``exit CODE`` (or ``exec ERRNO MESSAGE``, ``sandbox MESSAGE`` when it could not run); the keeper waits
    for the caller to close its end of the pipe before it serves another command. :meth:`stop` ends the
    launcher and everything it started.
    """

    #: Whether commands go to the long-lived launcher (it needs ``SOCK_SEQPACKET`` Unix sockets: Linux);
    #: elsewhere each command starts under a one-shot launcher of its own, which reports the same way.
    served: bool = sys.platform.startswith("linux")

    def __init__(self) -> None:
        self._one_shots: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._channels: dict[tuple[Any, ...], socket.socket] = {}
        self.starts = 0
        """How many launcher processes were started (a restart counts)."""

    @property
    def pid(self) -> int | None:
        """The launcher's pid while it runs."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def _running(self) -> bool:
        return self._control is not None and self._process is not None and self._process.poll() is None

    def _start(self) -> None:
        import socket
        import subprocess

        self._close()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-E", "-s", "-S", str(SCRIPT), "--serve", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._control = ours
        self.starts += 1

    def start(self) -> None:
        """Start the launcher unless it runs."""
        with self._lock:
            if not self._running():
                self._start()

    def _channel(self, key: tuple[Any, ...]) -> socket.socket:
        """The channel of the rules ``key`` (opened now when there is none)."""
        import marshal
        import socket

        channel = self._channels.pop(key, None)
        if channel is None:
            assert self._control is not None
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                message = marshal.dumps({"rules": list(key[0])})
                self._control.sendmsg([message], [_rights(theirs.fileno())])
            except BaseException:
                ours.close()
                raise
            finally:
                theirs.close()
            channel = ours
            channel.setblocking(False)  # a full queue is the caller's to wait for, not a blocked loop
            while len(self._channels) >= CHANNELS:
                self._channels.pop(next(iter(self._channels))).close()
        self._channels[key] = channel  # the most recently used last
        return channel

    def submit(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        rules: Rules | None,
        stdin: int,
        output: int,
        status: int,
    ) -> None:
        """Have the launcher run ``argv`` (its standard input ``stdin``, its output and errors ``output``,
        the keeper's reports on ``status``; the caller keeps and closes its own descriptors). A launcher
        that died is started again. Raises :class:`OSError` when it cannot be reached, and
        :class:`BlockingIOError` when the channel's queue is full (every keeper busy and a few commands
        already waiting: try again a moment later; :func:`submit_when_ready` does)."""
        if not self.served:
            self._one_shot(argv, cwd=cwd, env=env, rules=rules, stdin=stdin, output=output, status=status)
            return
        import marshal

        # marshal: the launcher runs this same interpreter, and reads it without importing anything
        payload = marshal.dumps({"argv": list(argv), "cwd": cwd, "env": dict(env)})
        key = _channel_key(rules)
        with self._lock:
            for attempt in range(2):
                if not self._running():
                    self._start()
                try:
                    self._channel(key).sendmsg([payload], [_rights(stdin, output, status)])
                    return
                except (BrokenPipeError, ConnectionResetError, ConnectionRefusedError):
                    if attempt:
                        raise
                    self._close()  # it died meanwhile: the next round starts another

    def _one_shot(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        rules: Rules | None,
        stdin: int,
        output: int,
        status: int,
    ) -> None:
        """Start ``argv`` under a one-shot launcher of its own (where there is no long-lived one)."""
        import subprocess

        with self._lock:
            self._one_shots = {process for process in self._one_shots if process.poll() is None}
            process = subprocess.Popen(
                [sys.executable, *launcher(rules, status), *argv],
                cwd=cwd,
                env=dict(env),
                stdin=stdin,
                stdout=output,
                stderr=output,
                pass_fds=(status,),
                start_new_session=True,
            )
            self._one_shots.add(process)

    def _close(self) -> None:
        """Close the sockets (the launcher then kills what it started and exits) and reap the process."""
        import signal
        import subprocess

        control, process, channels = self._control, self._process, list(self._channels.values())
        self._control = self._process = None
        self._channels.clear()
        for connection in [*channels, *([control] if control is not None else [])]:
            connection.close()
        if process is not None:
            try:
                process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def stop(self) -> None:
        """Stop the launcher and every command it started (idempotent)."""
        import signal
        import subprocess

        with self._lock:
            self._close()
            for process in self._one_shots:  # each kills its command's tree, then exits
                if process.poll() is None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        process.send_signal(signal.SIGUSR1)
            for process in self._one_shots:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(STOP_SECONDS)
            self._one_shots.clear()


async def submit_when_ready(launcher: Launcher, argv: Sequence[str], **options: Any) -> None:
    """:meth:`Launcher.submit`, waiting (without blocking the event loop) while the channel's queue is
    full: when many commands start at once, keepers are forked as the queue is taken."""
    import asyncio

    delay = 0.001
    while True:
        try:
            launcher.submit(argv, **options)
            return
        except BlockingIOError:
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.05)


def _channel_key(rules: Rules | None) -> tuple[Any, ...]:
    """What a channel's keepers were confined to: the rules, and which file each of their paths was
    (device and inode; ``None`` when absent). Landlock and the read-only binds hold the files as they were
    when a keeper confined itself, so a root made since, or a configuration file replaced since (an atomic
    write makes a new file), needs keepers of a new channel."""
    if rules is None:
        return ((), ())
    identities: list[tuple[int, int] | None] = []
    for path in (*rules.write, *rules.read, *rules.listed, *rules.devices, *rules.protect):
        try:
            info = os.stat(path)
        except OSError:
            identities.append(None)
            continue
        identities.append((info.st_dev, info.st_ino))
    return (tuple(rules.as_args()), tuple(identities))


def _rights(*descriptors: int) -> tuple[int, int, bytes]:
    """The ancillary data that passes ``descriptors`` over a Unix socket."""
    import socket

    return socket.SOL_SOCKET, socket.SCM_RIGHTS, b"".join(fd.to_bytes(4, sys.byteorder) for fd in descriptors)


_DEFAULT: list[Launcher] = []
_DEFAULT_LOCK = threading.Lock()


def default_launcher() -> Launcher:
    """The process's own launcher, for calls made outside a project (ended by our exit: its socket
    closes with us)."""
    with _DEFAULT_LOCK:
        if not _DEFAULT:
            _DEFAULT.append(Launcher())
        return _DEFAULT[0]
