"""Running a command line in a shell for the bash tool: the process group's life.

Which shell is :mod:`._shell_choice`'s decision. :func:`run` hands ``<shell> -c <command>`` (a command over
:data:`INLINE_BYTES` on the shell's standard input instead, so that any length runs) to the project's
long-lived launcher (:class:`opencode_cli.services.launch.Launcher`), which forks a keeper for it in a new
session (so in its own process group); standard input is closed and standard error merged into standard
output, and each piece of output goes to a callback as it arrives (decoded as UTF-8). The keeper stays as the
reaper of whatever the command starts, so all of it dies with us, even when we are SIGKILLed; given sandbox
rules it applies them to the shell between fork and exec. It reports its pid and the shell's exit on a pipe of
its own. :func:`run` returns when the shell exits, when the
timeout passes or when the abort signal fires; in the last two cases the whole process group is stopped:
``SIGTERM``, then ``SIGKILL`` to whatever is still alive three seconds later. A job the command leaves running
in the background after a normal exit is left alone while we live (as in OpenCode), but the call does not wait
for it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # asyncio and subprocess are imported when a command runs, not when tools are listed
    import asyncio

    from ..context import AbortSignal
    from ..sandbox.landlock import Rules
    from ..services.launch import Launcher

KILL_GRACE_SECONDS = 3.0
TIMEOUT_SLACK_SECONDS = 0.1
"""The timer that stops a command runs this much longer than the timeout asked for (as upstream)."""
DRAIN_SECONDS = 0.2
"""After the shell exits, how long output still arriving (from a background job holding the pipe) is read."""
READ_CHUNK = 64 * 1024
POLL_SECONDS = 0.05
LAUNCHER_SECONDS = 1.0
"""How long the launcher has to kill what is left after the grace period, before the group is SIGKILLed."""
INLINE_BYTES = 64 * 1024
"""A command longer than this (in UTF-8) is not passed in ``argv`` (the kernel takes at most 128 KiB in one
argument) nor in the launcher's message (a socket buffer): it is handed to the shell on its standard input,
an anonymous file, which :data:`FROM_STDIN` reads and runs."""
FROM_STDIN = 'eval "$(cat)" </dev/null'
"""The ``-c`` line of a long command (POSIX, as every shell we choose): the command is read from standard
input, then run with standard input on the null device, as a short command is."""


@dataclass
class Finished:
    """How a run ended: the exit code (``None`` when stopped), and why it was stopped."""

    code: int | None
    timed_out: bool = False
    aborted: bool = False


async def run(
    shell: str,
    command: str,
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    abort: AbortSignal,
    on_output: Callable[[str], None],
    rules: Rules | None = None,
    launcher: Launcher | None = None,
) -> Finished:
    """Run ``command`` with ``shell -c``; ``timeout`` in seconds (the slack is added here).

    ``on_output`` receives decoded text in arrival order; ``rules``, when given, sandbox the shell and all
    it starts. Raises :class:`OSError` when the shell cannot be started, :class:`SandboxError` when the
    sandbox cannot be applied (the command does not run then). A cancelled call stops the process group
    before the cancellation goes on.
    """
    import asyncio

    from ..services.launch import default_launcher, submit_when_ready

    argv, stdin = _carried(shell, command)
    status_read, status_write = os.pipe()
    output_read, output_write = os.pipe()
    try:
        await submit_when_ready(
            launcher or default_launcher(),
            argv,
            cwd=cwd,
            env=env,
            rules=rules,
            stdin=stdin,
            output=output_write,
            status=status_write,
        )
    except BaseException:
        os.close(status_read)
        os.close(output_read)
        raise
    finally:
        for descriptor in (stdin, output_write, status_write):
            os.close(descriptor)
    loop = asyncio.get_running_loop()
    keeper = _Keeper(status_read, loop)
    output = _Output(output_read, loop, on_output)
    exited = keeper.exited
    stopping: asyncio.Future[bool] = loop.create_future()  # True: aborted; False: timed out

    def stop(aborted: bool) -> None:
        if not stopping.done():
            stopping.set_result(aborted)

    timer = loop.call_later(timeout + TIMEOUT_SLACK_SECONDS, stop, False)
    forget = abort.on_abort(lambda: loop.call_soon_threadsafe(stop, True))
    finished = Finished(None)
    try:
        await asyncio.wait((exited, stopping), return_when=asyncio.FIRST_COMPLETED)
        if exited.done():
            finished.code = _exit_code(exited.result())
        else:
            finished.aborted = stopping.result()
            finished.timed_out = not finished.aborted
            await stop_group(keeper, exited)
        if not output.ended.done():
            await asyncio.wait((output.ended,), timeout=DRAIN_SECONDS)
        output.flush()
        return finished
    except BaseException:
        if not exited.done():
            await asyncio.shield(stop_group(keeper, exited))
        raise
    finally:
        timer.cancel()
        forget()
        output.close()
        keeper.close()


def _carried(shell: str, command: str) -> tuple[list[str], int]:
    """The shell's arguments and its standard input (a descriptor the caller closes) for ``command``:
    ``shell -c COMMAND`` with the null device, or, for a command over :data:`INLINE_BYTES`, ``shell -c
    FROM_STDIN`` with an anonymous file holding it."""
    data = command.encode("utf-8", "surrogateescape")
    if len(data) <= INLINE_BYTES:
        return [shell, "-c", command], os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    import tempfile

    with tempfile.TemporaryFile(prefix="opencode-command-") as script:  # unlinked: nobody else finds it
        script.write(data)
        script.flush()
        descriptor = os.dup(script.fileno())  # the same open file, kept past the ``with``
    os.lseek(descriptor, 0, os.SEEK_SET)
    return [shell, "-c", FROM_STDIN], descriptor


class _Output:
    """The command's output pipe, read as it arrives (a reader on the loop, no task) and handed to
    ``on_output`` decoded; ``ended`` is set at its end (every holder closed it) or when it is closed."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop, on_output: Callable[[str], None]) -> None:
        import codecs

        self.ended: asyncio.Future[None] = loop.create_future()
        self._fd, self._loop, self._on_output = fd, loop, on_output
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        os.set_blocking(fd, False)
        loop.add_reader(fd, self._ready)

    def _ready(self) -> None:
        try:
            data = os.read(self._fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.close()
            return
        text = self._decoder.decode(data)
        if text:
            try:
                self._on_output(text)
            except Exception:  # a failing consumer stops the reading (the command then gets SIGPIPE)
                self.close()

    def flush(self) -> None:
        """Hand on what the decoder still holds (an incomplete character at the end)."""
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self._on_output(tail)

    def close(self) -> None:
        """Stop reading and close the pipe (nothing when closed already)."""
        if self._fd >= 0:
            self._loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = -1
        if not self.ended.done():
            self.ended.set_result(None)


def _exit_code(returncode: int) -> int:
    """A shell's exit status: a process killed by signal N reports ``128 + N``, as shells print it."""
    return 128 - returncode if returncode < 0 else returncode


class SandboxError(OSError):
    """The launcher could not apply the sandbox; the command did not run."""


def _parse_status(line: str) -> int:
    """The shell's return code from the keeper's report (negative: killed by that signal)."""
    word, _, rest = line.partition(" ")
    if word == "exit":
        return int(rest)
    if word == "exec":
        number, _, message = rest.partition(" ")
        raise OSError(int(number), message)
    if word == "sandbox":
        raise SandboxError(f"the sandbox could not be applied: {rest}")
    return -9  # the keeper was killed before it could report (the group was stopped)


class _Keeper:
    """What the command's keeper reports on the status pipe (read to its end, then closed): ``pid`` once
    it leads the command's process group, then ``exited``, the shell's return code. The keeper may live
    on to reap background jobs, so its own end is not what is waited for."""

    def __init__(self, status: int, loop: asyncio.AbstractEventLoop) -> None:
        self.pid: int | None = None
        self.started: asyncio.Future[int | None] = loop.create_future()
        self.exited: asyncio.Future[int] = loop.create_future()
        self._status, self._loop, self._buffer = status, loop, b""
        os.set_blocking(status, False)
        loop.add_reader(status, self._ready)

    def _ready(self) -> None:
        try:
            data = os.read(self._status, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._buffer += data
            while b"\n" in self._buffer:
                line, _, self._buffer = self._buffer.partition(b"\n")
                self._line(line.decode("utf-8", "replace"))
            return
        self.close()
        self._line("")

    def close(self) -> None:
        """Stop reading the status pipe (it is closed once read to its end: nothing then)."""
        if self._status >= 0:
            self._loop.remove_reader(self._status)
            os.close(self._status)
            self._status = -1

    def _line(self, line: str) -> None:
        if line.startswith("pid "):
            self.pid = int(line[4:])
            if not self.started.done():
                self.started.set_result(self.pid)
            return
        if not self.started.done():
            self.started.set_result(None)
        if self.exited.done():
            return
        try:
            self.exited.set_result(_parse_status(line))
        except (OSError, ValueError) as error:
            self.exited.set_exception(error)


def _signal_process(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _signal(group: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def group_alive(group: int) -> bool:
    """Whether any process of the group still runs (exited zombies waiting to be reaped do not count)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not os.path.isdir("/proc/self"):
        return True
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(os.path.join(entry.path, "stat"), "rb") as handle:
                    stat = handle.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) > 2 and int(fields[2]) == group and fields[0] not in (b"Z", b"X"):
                return True
    return False


async def stop_group(keeper: _Keeper, exited: asyncio.Future[int]) -> None:
    """``SIGTERM`` the command's group; ``SIGKILL`` it if anything of it still runs after the grace period."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    try:
        group = await asyncio.wait_for(asyncio.shield(keeper.started), KILL_GRACE_SECONDS)
    except TimeoutError:
        group = None
    if group is None:  # the keeper never started (its launcher died): nothing of it runs
        return
    _signal(group, signal.SIGTERM)
    deadline = loop.time() + KILL_GRACE_SECONDS
    try:
        while loop.time() < deadline:
            if exited.done() and not group_alive(group):
                return
            await asyncio.sleep(POLL_SECONDS)
        # The keeper (the group's leader) SIGKILLs every descendant, those that left the group too;
        # SIGKILL to the group is the last resort.
        _signal_process(group, signal.SIGUSR1)
        deadline = loop.time() + LAUNCHER_SECONDS
        while loop.time() < deadline and group_alive(group):
            await asyncio.sleep(POLL_SECONDS)
        _signal(group, signal.SIGKILL)
        await asyncio.wait({exited}, timeout=LAUNCHER_SECONDS)
    except asyncio.CancelledError:
        _signal(group, signal.SIGKILL)
        raise
