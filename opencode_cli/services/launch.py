"""The launcher of child processes that must die with us (:mod:`opencode_cli.sandbox.launcher`).

The launcher stays between us and a command as the keeper of everything the command starts: when we die
(even by SIGKILL) it kills every descendant, orphans included (``PR_SET_CHILD_SUBREAPER``). Given Landlock
rules, it applies them in the command's process between fork and exec. Two ways to use it:

* :class:`Launcher`: one long-lived launcher per project (:attr:`opencode_cli.Project.launcher`), started
  on first use, restarted when it died, stopped with the project. Each command is one message on a Unix
  socket (its argv, directory, environment and rules, with its pipes' descriptors); the launcher forks a
  keeper for it, which forks the command. No interpreter starts per command: bash's calls go this way.
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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import socket
    import subprocess

    from ..sandbox.landlock import Rules

SCRIPT = Path(__file__).resolve().parent.parent / "sandbox" / "launcher.py"
#: Seconds the launcher gets to kill its commands and exit once its socket is closed.
STOP_SECONDS = 3.0


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
    """A long-lived launcher process and the socket to it (thread-safe; see the module docstring).

    :meth:`submit` hands it one command; the command's keeper reports on the status pipe: ``pid PID``
    (the keeper, leader of the command's process group), then ``exit CODE`` (or ``exec ERRNO MESSAGE``,
    ``sandbox MESSAGE`` when it could not run). :meth:`stop` ends it and everything it started.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._socket: socket.socket | None = None
        self.starts = 0
        """How many launcher processes were started (a restart counts)."""

    @property
    def pid(self) -> int | None:
        """The launcher's pid while it runs."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

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
        self._socket = ours
        self.starts += 1

    def start(self) -> None:
        """Start the launcher unless it runs."""
        with self._lock:
            if self._socket is None or self._process is None or self._process.poll() is not None:
                self._start()

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
        that died is started again. Raises :class:`OSError` when it cannot be reached."""
        import json
        import socket

        payload = json.dumps(
            {"argv": list(argv), "cwd": cwd, "env": dict(env), "rules": rules.as_args() if rules else []}
        ).encode("ascii")
        descriptors = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (stdin, output, status))
        with self._lock:
            for attempt in range(2):
                if self._socket is None or self._process is None or self._process.poll() is not None:
                    self._start()
                assert self._socket is not None
                try:
                    self._socket.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, descriptors)])
                    return
                except (BrokenPipeError, ConnectionResetError, ConnectionRefusedError):
                    if attempt:
                        raise
                    self._close()  # it died meanwhile: the next round starts another

    def _close(self) -> None:
        """Close the socket (the launcher then kills what it started and exits) and reap the process."""
        import signal
        import subprocess

        connection, process = self._socket, self._process
        self._socket = self._process = None
        if connection is not None:
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
        with self._lock:
            self._close()


_DEFAULT: list[Launcher] = []
_DEFAULT_LOCK = threading.Lock()


def default_launcher() -> Launcher:
    """The process's own launcher, for calls made outside a project (ended by our exit: its socket
    closes with us)."""
    with _DEFAULT_LOCK:
        if not _DEFAULT:
            _DEFAULT.append(Launcher())
        return _DEFAULT[0]
