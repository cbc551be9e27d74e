"""The write pipeline shared by ``edit``, ``write`` and ``apply_patch`` (builtin spec §1.9).

* Text is read as UTF-8 with a leading byte-order mark kept apart (:func:`read_text`); bytes that are not
  UTF-8 survive a read/write round trip (``surrogateescape``).
* Writes are atomic (:func:`atomic_write`): a temporary file in the same directory, ``fsync``, then a
  rename over the target; the file's mode is kept (new files get 0644) and a symlink is written through,
  never replaced. A crash leaves either the old or the new content, never a mix.
* Edits of one file are serialised across threads, tasks and processes (:func:`file_lock`).
* Diffs are unified diffs in the shape of the ``diff`` npm package's ``createTwoFilesPatch`` (what
  OpenCode shows), with the common indentation trimmed (:func:`trim_diff`).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

BOM = "\ufeff"
NEW_FILE_MODE = 0o644
CONTEXT_LINES = 4
_ENCODING = "utf-8"
_ERRORS = "surrogateescape"


# -- reading and writing -----------------------------------------------------------------------------


def split_bom(text: str) -> tuple[str, bool]:
    """``(text without a leading BOM, whether it had one)``."""
    return (text[1:], True) if text.startswith(BOM) else (text, False)


def read_text(path: str | Path) -> tuple[str, bool]:
    """A file's text without its BOM, and whether it had one."""
    with open(path, "rb") as handle:
        data = handle.read()
    return split_bom(data.decode(_ENCODING, _ERRORS))


def encode(text: str, bom: bool) -> bytes:
    """The bytes to write: ``text`` (a BOM in it is not doubled) with a BOM when ``bom``."""
    text, had = split_bom(text)
    return ((BOM if bom or had else "") + text).encode(_ENCODING, _ERRORS)


def atomic_write(path: str | Path, data: bytes | str, *, bom: bool = False) -> None:
    """Replace ``path``'s content with ``data`` atomically, creating parent directories.

    A ``str`` is encoded as UTF-8 (with a BOM when ``bom``). The existing file's permission bits are
    kept; a new file gets 0644. When ``path`` is a symlink its target is written.
    """
    target = Path(os.path.realpath(path))
    payload = encode(data, bom) if isinstance(data, str) else data
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    if target.exists() and (not mode & 0o222 or not os.access(target, os.W_OK)):
        # a read-only file stays read-only even for root, who could otherwise rename over it
        raise PermissionError(13, "Permission denied", str(target))
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _fsync_directory(target.parent)


def _fsync_directory(directory: Path) -> None:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


# -- locking -----------------------------------------------------------------------------------------


def lock_path(path: str | Path) -> Path:
    """The lock file that stands for ``path`` (keyed by its real path) under ``<tmp>/opencode/locks``."""
    key = hashlib.sha256(os.path.realpath(path).encode(_ENCODING, _ERRORS)).hexdigest()[:32]
    return Path(tempfile.gettempdir()) / "opencode" / "locks" / f"{key}.lock"


@asynccontextmanager
async def file_lock(path: str | Path, poll: float = 0.01) -> AsyncIterator[None]:
    """Hold the edit lock of ``path``: one holder at a time across tasks, threads and processes.

    An exclusive ``flock`` on a per-file lock file; waiting polls without blocking the event loop, so a
    cancelled waiter simply stops waiting.
    """
    import asyncio
    import fcntl

    lock = lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        delay = poll
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.2)
        try:
            yield
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


# -- diffs -------------------------------------------------------------------------------------------


def _split_lf(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines ``a`` and ``b`` share at their start, and then at their end (not overlapping)."""
    shortest = min(len(a), len(b))
    head = 0
    while head < shortest and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shortest - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def _line_body(line: str) -> str:
    return line[:-1] if line.endswith("\n") else line


def unified_diff(path: str, old: str, new: str, context: int = CONTEXT_LINES) -> str:
    """A unified diff of ``old`` → ``new`` with an ``Index:`` header, as ``createTwoFilesPatch`` makes it."""
    old_lines = _split_lf(old)
    new_lines = _split_lf(new)
    out = [f"Index: {path}", "=" * 67, f"--- {path}", f"+++ {path}"]
    # Lines shared at both ends cannot be part of a hunk beyond its context: match only the rest.
    head, tail = _common_ends(old_lines, new_lines)
    skip, drop = max(0, head - context), max(0, tail - context)
    matcher = difflib.SequenceMatcher(
        None, old_lines[skip : len(old_lines) - drop], new_lines[skip : len(new_lines) - drop], autojunk=False
    )
    for shifted in matcher.get_grouped_opcodes(context):
        group = [(tag, i1 + skip, i2 + skip, j1 + skip, j2 + skip) for tag, i1, i2, j1, j2 in shifted]
        old_start, old_end = group[0][1], group[-1][2]
        new_start, new_end = group[0][3], group[-1][4]
        old_count, new_count = old_end - old_start, new_end - new_start
        # the unified format names the line before an empty range
        old_first = old_start + 1 if old_count else old_start
        new_first = new_start + 1 if new_count else new_start
        out.append(f"@@ -{old_first},{old_count} +{new_first},{new_count} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(_marked(" ", old_lines[i1:i2]))
                continue
            if tag in ("replace", "delete"):
                out.extend(_marked("-", old_lines[i1:i2]))
            if tag in ("replace", "insert"):
                out.extend(_marked("+", new_lines[j1:j2]))
    return "\n".join(out) + "\n"


def _marked(prefix: str, lines: list[str]) -> list[str]:
    marked = []
    for line in lines:
        marked.append(prefix + _line_body(line))
        if not line.endswith("\n"):
            marked.append("\\ No newline at end of file")
    return marked


def _is_content(line: str) -> bool:
    return line[:1] in ("+", "-", " ") and not line.startswith(("---", "+++"))


def trim_diff(diff: str) -> str:
    """Remove the indentation every changed or context line of ``diff`` shares (OpenCode's ``trimDiff``)."""
    lines = diff.split("\n")
    widths = [
        len(body) - len(body.lstrip()) for line in lines if _is_content(line) and (body := line[1:]).strip()
    ]
    smallest = min(widths, default=0)
    if smallest == 0:
        return diff
    return "\n".join(line[0] + line[1 + smallest :] if _is_content(line) else line for line in lines)


def count_changes(old: str, new: str) -> tuple[int, int]:
    """``(added lines, removed lines)`` of a line diff of ``old`` → ``new``."""
    old_lines, new_lines = _split_lf(old), _split_lf(new)
    head, tail = _common_ends(old_lines, new_lines)
    matcher = difflib.SequenceMatcher(
        None, old_lines[head : len(old_lines) - tail], new_lines[head : len(new_lines) - tail], autojunk=False
    )
    added = removed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def diff_for(path: str, old: str, new: str) -> str:
    """The trimmed diff the edit tools report: line endings normalised to LF, no BOM."""
    normal_old = split_bom(old)[0].replace("\r\n", "\n")
    normal_new = split_bom(new)[0].replace("\r\n", "\n")
    return trim_diff(unified_diff(path, normal_old, normal_new))
