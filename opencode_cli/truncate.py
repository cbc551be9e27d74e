"""Output limits for tool results (core spec §2).

Output over ``max_lines`` lines or ``max_bytes`` UTF-8 bytes is cut to a head (or tail) preview; the full
text is written to a spill file ``tool_<id>`` under ``<data>/tool-output`` and the preview ends with a
hint telling the model where the rest is. Spill files older than seven days are removed by a background
sweep that runs at most once an hour and never blocks the caller.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path
from typing import Literal, TextIO

from . import nofollow
from .limits import MAX_BYTES, MAX_LINES
from .record import Record

RETENTION_SECONDS = 7 * 24 * 3600
CLEANUP_INTERVAL_SECONDS = 3600
_STAMP = ".last-cleanup"

HINT_TASK = (
    "The tool call succeeded but the output was truncated. Full output saved to: {path}\n"
    "Use the Task tool to have explore agent process this file with Grep and Read (with offset/limit). "
    "Do NOT read the full file yourself - delegate to save context."
)
HINT_PLAIN = (
    "The tool call succeeded but the output was truncated. Full output saved to: {path}\n"
    "Use Grep to search the full content or Read with offset/limit to view specific sections."
)

Direction = Literal["head", "tail"]

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#: Each byte value to the base62 character of ``byte % 62``: one ``bytes.translate`` draws an id's tail.
_BYTE_TO_BASE62 = bytes(ord(_BASE62[byte % 62]) for byte in range(256))
_id_lock = threading.Lock()
_last_ms = 0
_counter = 0
#: Random bytes drawn from the OS ahead, for this many ids at a time (one system call, not one per id).
_POOL_IDS = 64
_pool = ""  # the base62 characters of the bytes drawn, 14 for each id
_pool_at = 0


def _forget_pool() -> None:
    """A forked child must not draw the parent's bytes again (same ids in two processes)."""
    global _pool, _pool_at
    _pool, _pool_at = "", 0


os.register_at_fork(after_in_child=_forget_pool)


def ascending_id(prefix: str) -> str:
    """``<prefix>_`` + 12 hex chars of (ms * 4096 + counter) + 14 random base62 chars; sorts by time.

    The random characters are 14 bytes of the OS's random source taken modulo 62, as OpenCode draws them.
    """
    global _last_ms, _counter, _pool, _pool_at
    with _id_lock:
        now = int(time.time() * 1000)
        if now != _last_ms:
            _last_ms, _counter = now, 0
        _counter += 1
        value = (now * 4096 + _counter) & 0xFFFFFFFFFFFF
        if _pool_at >= len(_pool):
            _pool, _pool_at = os.urandom(14 * _POOL_IDS).translate(_BYTE_TO_BASE62).decode("ascii"), 0
        tail = _pool[_pool_at : _pool_at + 14]
        _pool_at += 14
    return f"{prefix}_{value:012x}{tail}"


class Truncated(Record):
    """What :meth:`Truncator.output` returns."""

    __slots__ = ("content", "output_path", "truncated")

    def __init__(self, content: str, truncated: bool, output_path: str | None = None) -> None:
        self.content = content
        self.truncated = truncated
        self.output_path = output_path


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class Truncator(Record):
    """Applies the limits; one per project (the limits come from ``[tool_output]`` config)."""

    __slots__ = ("directory", "max_bytes", "max_lines")

    def __init__(self, directory: Path, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> None:
        self.directory = directory
        self.max_lines = max_lines
        self.max_bytes = max_bytes

    @property
    def glob(self) -> str:
        """The permission pattern that covers every spill file (``<dir>/*``)."""
        from .paths import within

        return within(self.directory)

    def output(
        self,
        text: str,
        *,
        max_lines: int | None = None,
        max_bytes: int | None = None,
        direction: Direction = "head",
        task_capable: bool = False,
    ) -> Truncated:
        """Cut ``text`` to the limits; per-call limits override the configured ones.

        ``task_capable`` chooses the hint that points at the Task tool (the agent may use ``task``).
        """
        max_lines = self.max_lines if max_lines is None else max_lines
        max_bytes = self.max_bytes if max_bytes is None else max_bytes
        lines = text.split("\n")
        total = _utf8_len(text)
        if len(lines) <= max_lines and total <= max_bytes:
            return Truncated(text, False)

        kept: list[str] = []
        kept_bytes = 0
        hit_bytes = False
        ordered = lines if direction == "head" else reversed(lines)
        for line in ordered:
            if len(kept) >= max_lines:
                break
            cost = _utf8_len(line) + (1 if kept else 0)
            if kept_bytes + cost > max_bytes:
                hit_bytes = True
                break
            kept.append(line)
            kept_bytes += cost
        if direction == "tail":
            kept.reverse()

        removed, unit = (total - kept_bytes, "bytes") if hit_bytes else (len(lines) - len(kept), "lines")
        preview = "\n".join(kept)
        path = self.spill(text)
        hint = (HINT_TASK if task_capable else HINT_PLAIN).format(path=path)
        marker = f"...{removed} {unit} truncated..."
        if direction == "head":
            content = f"{preview}\n\n{marker}\n\n{hint}"
        else:
            content = f"{marker}\n\n{hint}\n\n{preview}"
        return Truncated(content, True, str(path))

    def spill(self, text: str) -> Path:
        """Write ``text`` to a new spill file and return its path; starts a cleanup sweep when due."""
        path, handle = self.open_spill()
        with handle:
            handle.write(text)
        return path

    def open_spill(self) -> tuple[Path, TextIO]:
        """A new spill file, open for writing (the caller closes it), and its path; starts a cleanup sweep
        when due. Made with ``O_EXCL | O_NOFOLLOW`` (a sandboxed command may write this directory: the
        file is only ever written through this descriptor, never opened again by name)."""
        name = ascending_id("tool")
        with nofollow.directory(self.directory) as folder:
            fd = nofollow.create(folder, name)
        schedule_cleanup(self.directory)
        handle = open(fd, "w", encoding="utf-8", errors="surrogatepass", closefd=True)  # noqa: SIM115
        return self.directory / name, handle


def cleanup(directory: Path, now: float | None = None) -> list[Path]:
    """Delete ``tool_*`` files in ``directory`` whose mtime is over seven days old; never raises.

    Names are looked at and removed relative to the directory's descriptor, without following links (a
    link is judged by its own time and removed itself)."""
    cutoff = (time.time() if now is None else now) - RETENTION_SECONDS
    removed: list[Path] = []
    try:
        folder = nofollow.open_dir(directory, create=False)
    except OSError:
        return removed
    try:
        for name in os.listdir(folder):
            if not name.startswith("tool_"):
                continue
            try:
                info = os.stat(name, dir_fd=folder, follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode) or info.st_mtime >= cutoff:
                    continue
                os.unlink(name, dir_fd=folder)
                removed.append(directory / name)
            except OSError:
                continue
    finally:
        os.close(folder)
    return removed


def _stamp_due(directory: Path, interval: float) -> bool:
    """Whether the last sweep (the stamp's mtime) is older than ``interval`` (or there is no stamp); if so
    the stamp is reset to now. The stamp is opened without following a link and used only through its
    descriptor; one that is not a regular file means no sweep."""
    try:
        with nofollow.directory(directory) as folder:
            try:
                fd = nofollow.open_regular(folder, _STAMP, os.O_RDONLY)
            except FileNotFoundError:
                os.close(nofollow.create(folder, _STAMP))
                return True
    except OSError:
        return False
    try:
        if time.time() - os.fstat(fd).st_mtime < interval:
            return False
        os.utime(fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def schedule_cleanup(
    directory: Path, *, interval: float = CLEANUP_INTERVAL_SECONDS
) -> threading.Thread | None:
    """Run :func:`cleanup` in a daemon thread if the last sweep is older than ``interval`` seconds.

    The time of the last sweep is the mtime of a stamp file in ``directory``, so separate processes
    share the schedule. Returns the started thread, or ``None`` when no sweep was due.
    """
    if not _stamp_due(directory, interval):
        return None
    thread = threading.Thread(target=cleanup, args=(directory,), name="opencode-cleanup", daemon=True)
    thread.start()
    return thread
