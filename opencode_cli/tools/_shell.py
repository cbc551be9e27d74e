"""Running a command line in a shell for the bash tool: which shell, and the process group's life.

:func:`choose` picks the shell: ``$SHELL`` when it is bash, zsh or sh, otherwise ``bash`` on ``PATH``
(``/bin/zsh`` on macOS), otherwise ``/bin/sh``. fish and nu are never used: their syntax is not POSIX.

:func:`run` starts ``<shell> -c <command>`` in a new session (so in its own process group), with standard
input closed and standard error merged into standard output, and hands each piece of output to a
callback as it arrives (decoded as UTF-8). It returns when the shell exits, when the timeout passes or
when the abort signal fires; in the last two cases the whole process group is stopped: ``SIGTERM``, then
``SIGKILL`` to whatever is still alive three seconds later. A job the command leaves running in the
background after a normal exit is left alone (as in OpenCode), but the call does not wait for it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # asyncio and subprocess are imported when a command runs, not when tools are listed
    import asyncio
    import subprocess

    from ..context import AbortSignal

ACCEPTED = frozenset({"bash", "zsh", "sh"})
KILL_GRACE_SECONDS = 3.0
TIMEOUT_SLACK_SECONDS = 0.1
"""The timer that stops a command runs this much longer than the timeout asked for (as upstream)."""
DRAIN_SECONDS = 0.2
"""After the shell exits, how long output still arriving (from a background job holding the pipe) is read."""
READ_CHUNK = 64 * 1024
POLL_SECONDS = 0.05


def name(shell: str) -> str:
    """The shell's name as the description shows it: ``bash``, ``zsh``, ``sh``."""
    return os.path.basename(shell)


def choose(env: Mapping[str, str]) -> str:
    """The shell to run commands with, for an environment ``env`` (see the module docstring)."""
    search = env.get("PATH")
    preferred = env.get("SHELL")
    if preferred and name(preferred) in ACCEPTED:
        found = _executable(preferred, search)
        if found:
            return found
    if sys.platform == "darwin" and os.access("/bin/zsh", os.X_OK):
        return "/bin/zsh"
    return shutil.which("bash", path=search) or shutil.which("bash") or "/bin/sh"


def _executable(shell: str, search: str | None) -> str | None:
    if os.path.isabs(shell):
        return shell if os.access(shell, os.X_OK) and not os.path.isdir(shell) else None
    return shutil.which(shell, path=search)


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
) -> Finished:
    """Run ``command`` with ``shell -c``; ``timeout`` in seconds (the slack is added here).

    ``on_output`` receives decoded text in arrival order. Raises :class:`OSError` when the shell cannot be
    started. A cancelled call stops the process group before the cancellation goes on.
    """
    import asyncio
    import codecs
    import signal
    import subprocess

    process = subprocess.Popen(
        [shell, "-c", command],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    group = process.pid  # the new session's id, and its process group's
    loop = asyncio.get_running_loop()
    assert process.stdout is not None
    reader = asyncio.StreamReader(limit=READ_CHUNK, loop=loop)
    try:
        exited = _exit_future(process, loop)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop), process.stdout
        )
    except BaseException:
        _signal(group, signal.SIGKILL)  # nothing may run unwatched
        process.wait()
        raise
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    async def pump() -> None:
        while True:
            data = await reader.read(READ_CHUNK)
            if not data:
                break
            text = decoder.decode(data)
            if text:
                on_output(text)

    pumping = asyncio.ensure_future(pump())
    aborting = asyncio.ensure_future(abort.wait_async())
    timer = asyncio.ensure_future(asyncio.sleep(timeout + TIMEOUT_SLACK_SECONDS))
    finished = Finished(None)
    try:
        done, _ = await asyncio.wait({exited, aborting, timer}, return_when=asyncio.FIRST_COMPLETED)
        if exited in done:
            finished.code = _exit_code(exited.result())
        else:
            finished.aborted = aborting in done
            finished.timed_out = not finished.aborted
            await stop_group(group, exited)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(pumping), DRAIN_SECONDS)
        tail = decoder.decode(b"", final=True)
        if tail:
            on_output(tail)
        return finished
    except BaseException:
        if not exited.done():
            await asyncio.shield(stop_group(group, exited))
        raise
    finally:
        for task in (aborting, timer, pumping):
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(pumping, return_exceptions=True)
        transport.close()


def _exit_code(returncode: int) -> int:
    """A shell's exit status: a process killed by signal N reports ``128 + N``, as shells print it."""
    return 128 - returncode if returncode < 0 else returncode


def _exit_future(process: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop) -> asyncio.Future[int]:
    """A future set to the return code once ``process`` exits (it is reaped then).

    Linux gives a pollable descriptor for the process (``pidfd``); elsewhere a thread waits for it.
    asyncio's own subprocess support is not used: it only reports the exit once every process holding
    the output pipe has closed it, which a background job may never do.
    """
    future: asyncio.Future[int] = loop.create_future()
    try:
        descriptor = os.pidfd_open(process.pid)  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        descriptor = None
    if descriptor is not None:

        def ready() -> None:
            loop.remove_reader(descriptor)
            os.close(descriptor)
            code = process.wait()
            if not future.done():
                future.set_result(code)

        loop.add_reader(descriptor, ready)
        return future

    def wait() -> None:
        code = process.wait()
        loop.call_soon_threadsafe(lambda: future.done() or future.set_result(code))

    import threading

    threading.Thread(target=wait, name="opencode-shell-wait", daemon=True).start()
    return future


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


async def stop_group(group: int, exited: asyncio.Future[int]) -> None:
    """``SIGTERM`` the group; ``SIGKILL`` it if anything of it still runs after the grace period."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    _signal(group, signal.SIGTERM)
    deadline = loop.time() + KILL_GRACE_SECONDS
    try:
        while loop.time() < deadline:
            if exited.done() and not group_alive(group):
                return
            await asyncio.sleep(POLL_SECONDS)
        _signal(group, signal.SIGKILL)
        await exited
    except asyncio.CancelledError:
        _signal(group, signal.SIGKILL)
        raise
