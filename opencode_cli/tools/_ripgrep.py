"""Running ripgrep for the ``glob`` and ``grep`` tools.

The binary comes from the PyPI package ``ripgrep`` (it installs ``rg`` into the environment's scripts
directory, and its installed record says where: that finds it also when the package is on ``sys.path``
from another environment); an ``rg`` on ``PATH`` serves when the package is missing. :func:`binary`
finds it once per process.

:func:`run` starts ``rg`` as a real child process (no shell), reads its standard output as it arrives
and stops as soon as it holds one record more than the caller's limit: the process is then killed, so a
search that would match thousands of files does not pay for the whole walk. An abort of the call kills
the process too.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import sys
import sysconfig
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from ..context import AbortSignal
from ..errors import AbortedError, ToolError

T = TypeVar("T")

ERROR_BYTES = 8 * 1024
"""How much of ripgrep's standard error is kept for error messages (the rest is read and dropped)."""
READ_CHUNK = 64 * 1024
NOT_FOUND = (
    "ripgrep (rg) is not installed. Install the Python package with `pip install 'ripgrep>=14.1,<15'` "
    "(it provides the rg binary), or install ripgrep with your system's package manager so that `rg` "
    "is on PATH."
)


class RipgrepNotFoundError(ToolError):
    """Neither the ``ripgrep`` package's binary nor an ``rg`` on ``PATH`` was found."""

    def __init__(self) -> None:
        super().__init__(NOT_FOUND)


# -- finding the binary ---------------------------------------------------------------------------------


def package_directories() -> list[str]:
    """Where the ``ripgrep`` package puts ``rg``: this environment's (and the user's) scripts directory,
    and the base installation's when its packages are on ``sys.path`` too (a virtual environment made
    with ``--system-site-packages``), found without reading any installed record."""
    candidates = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    with contextlib.suppress(KeyError, ValueError):
        candidates.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    if sys.base_prefix != sys.prefix:
        base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
        if sysconfig.get_path("purelib", vars=base) in sys.path:
            candidates.append(sysconfig.get_path("scripts", vars=base))
    unique: list[str] = []
    for candidate in candidates:
        if candidate and candidate not in unique:
            unique.append(candidate)
    return unique


def find(directories: Iterable[str | Path] | None = None, search_path: str | None = None) -> str:
    """The ``rg`` executable: the first found in ``directories``, else on ``search_path``.

    ``directories`` defaults to :func:`package_directories`, ``search_path`` to the ``PATH`` of this
    process. Raises :class:`RipgrepNotFoundError` when there is none.
    """
    folders = package_directories() if directories is None else [str(d) for d in directories]
    for folder in folders:
        found = shutil.which("rg", path=folder)
        if found:
            return found
    found = recorded() if directories is None else None
    if found:
        return found
    found = shutil.which("rg", path=search_path)
    if found:
        return found
    raise RipgrepNotFoundError()


def recorded() -> str | None:
    """The ``rg`` the installed ``ripgrep`` distribution's record lists, wherever its scripts went (a
    site-packages borrowed from another environment, a ``--prefix`` install); ``None`` when the package
    is not installed or its binary is gone."""
    from importlib import metadata

    try:
        files = metadata.distribution("ripgrep").files or []
    except metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name in ("rg", "rg.exe"):
            path = Path(file.locate()).resolve()
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
    return None


@functools.cache
def binary() -> str:
    """:func:`find` with the defaults, looked up once per process."""
    return find()


# -- running it -----------------------------------------------------------------------------------------


@dataclass(eq=False)  # compared by identity
class Outcome(Generic[T]):
    """What a run produced: at most ``limit`` items, and whether more were there."""

    items: list[T] = field(default_factory=list)
    truncated: bool = False
    code: int | None = None
    stderr: str = ""
    killed: bool = False
    """The process was killed before it finished (the limit was reached, or the call failed)."""


class RecordTooLargeError(ToolError):
    """One line of ripgrep's output is longer than the caller allows."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"Ripgrep JSON record exceeded {limit} bytes")


async def _collect_stderr(stream: asyncio.StreamReader, keep: bytearray) -> None:
    while True:
        chunk = await stream.read(READ_CHUNK)
        if not chunk:
            return
        room = ERROR_BYTES - len(keep)
        if room > 0:
            keep += chunk[:room]


async def _stop(process: asyncio.subprocess.Process) -> bool:
    """Kill the process (if it still runs), drain its pipes and reap it; whether it was killed."""
    killed = False
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
            killed = True
    if process.stdout is not None:
        with contextlib.suppress(Exception):
            while await process.stdout.read(READ_CHUNK):
                pass
    await process.wait()
    return killed


async def run(
    args: list[str],
    *,
    cwd: str,
    limit: int,
    parse: Callable[[bytes], T | None],
    abort: AbortSignal | None = None,
    env: Mapping[str, str] | None = None,
    max_record: int | None = None,
    pass_fds: tuple[int, ...] = (),
) -> Outcome[T]:
    """Run ``rg --no-config *args`` in ``cwd`` and parse its output line by line.

    ``pass_fds`` are kept open in ripgrep (for a ``cwd`` or an argument naming a held descriptor).

    ``parse`` turns one output line (without its newline) into an item, or ``None`` to skip it.
    Reading stops once ``limit + 1`` items are parsed: the process is killed and the first ``limit``
    items are returned with ``truncated`` set; ``code`` and ``stderr`` are then not known. Otherwise
    the exit code and the start of standard error are returned for the caller to judge. A line longer
    than ``max_record`` bytes raises :class:`RecordTooLargeError`; an abort raises
    :class:`~opencode_cli.errors.AbortedError`. Failing to start raises ``ripgrep execution failed``.
    """
    if abort is not None and abort.aborted:
        raise AbortedError()
    command = [binary(), "--no-config", *args]
    outcome: Outcome[T] = Outcome()
    records = _Records(outcome, limit, parse, max_record)
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            pass_fds=pass_fds,
            env=None if env is None else dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError:
        raise ToolError("ripgrep execution failed") from None

    assert process.stdout is not None and process.stderr is not None
    errors = bytearray()
    stderr_task = asyncio.ensure_future(_collect_stderr(process.stderr, errors))
    watcher = None
    if abort is not None:

        async def kill_on_abort() -> None:
            await abort.wait_async()
            with contextlib.suppress(ProcessLookupError):
                process.kill()

        watcher = asyncio.ensure_future(kill_on_abort())

    try:
        while True:
            chunk = await process.stdout.read(READ_CHUNK)
            full = records.feed(chunk) if chunk else records.end()
            if full or not chunk:
                break
        if full:
            del outcome.items[limit:]
            outcome.truncated = True
            return outcome
        outcome.code = await process.wait()
        await stderr_task
        outcome.stderr = errors.decode("utf-8", "replace")
        if abort is not None and abort.aborted:
            raise AbortedError()
        return outcome
    finally:
        if watcher is not None:
            watcher.cancel()
        outcome.killed = await asyncio.shield(_stop(process))
        if not stderr_task.done():
            stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await stderr_task


class _Records(Generic[T]):
    """ripgrep's output cut into lines, each parsed into ``outcome.items``: :meth:`feed` every chunk read,
    then :meth:`end`. Both say ``True`` once more than ``limit`` items are held (the rest is not needed)."""

    def __init__(
        self, outcome: Outcome[T], limit: int, parse: Callable[[bytes], T | None], max_record: int | None
    ) -> None:
        self.items = outcome.items
        self.limit = limit
        self.parse = parse
        self.max_record = max_record
        self.pending = b""

    def feed(self, chunk: bytes) -> bool:
        """Take the complete lines of ``pending + chunk``; keep the unfinished last one for later."""
        data = self.pending + chunk if self.pending else chunk
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            if end > start and self._accept(data[start:end]):
                return True
            start = end + 1
        self.pending = data[start:]
        if self.max_record is not None and len(self.pending) > self.max_record:
            raise RecordTooLargeError(self.max_record)
        return False

    def end(self) -> bool:
        """The output ended: take its last line if it had no newline."""
        pending, self.pending = self.pending, b""
        return bool(pending) and self._accept(pending)

    def _accept(self, line: bytes) -> bool:
        if self.max_record is not None and len(line) > self.max_record:
            raise RecordTooLargeError(self.max_record)
        item = self.parse(line)
        if item is None:
            return False
        self.items.append(item)
        return len(self.items) > self.limit


# -- helpers shared by the tools -----------------------------------------------------------------------


def relative_path(text: str) -> str:
    """A path as ripgrep prints it, made relative: leading ``./`` and slashes dropped, ``/`` separators."""
    while text.startswith(("./", ".\\")):
        text = text[2:]
    return text.lstrip("/\\").replace("\\", "/")


def invalid_pattern(stderr: str) -> bool:
    """Whether ripgrep's standard error reports a regex that does not parse."""
    return "regex parse error" in stderr or "error parsing regex" in stderr


def invalid_glob(stderr: str) -> bool:
    """Whether ripgrep's standard error reports a ``--glob`` that does not parse."""
    return "error parsing glob" in stderr


def judge(outcome: Outcome[T], *, pattern: str | None = None) -> list[T]:
    """The items of a finished run, or the error its exit code and standard error call for.

    Exit 1 means nothing matched, exit 2 that some paths could not be read (the items found are kept),
    unless standard error reports an invalid regex (when ``pattern`` is given) or an invalid glob, which
    raise with ripgrep's message. Any other code raises.
    """
    if outcome.truncated:
        return outcome.items
    code = outcome.code
    stderr = outcome.stderr
    if code == 2 and (
        (pattern is not None and invalid_pattern(stderr)) or (not outcome.items and invalid_glob(stderr))
    ):
        raise ToolError(stderr.strip())
    if code not in (0, 1, 2):
        raise ToolError(stderr.strip() or f"ripgrep failed with code {code}")
    return [] if code == 1 else outcome.items
