"""Warnings on stderr once per change: a command prints a warning about a file or a setting only when it
has not printed the same warning for the same state of the files it is about.

A warning's state is the size and modification time of every absolute path its text names (a tool file,
a config file); a warning that names none (``unknown config key 'mcp.NAME.model'``) is about the config,
so its state is that of the project's config files. What was shown is kept in
``<data>/warnings-shown.json``, read only when a command has something to warn about. Editing the file
(or fixing it and breaking it again) shows the warning again. ``opencode config …`` and ``tools watch``
show every warning every time, and ``opencode plugins list`` lists each file's warnings and errors.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

#: The record of shown warnings, in the data directory.
FILE_NAME = "warnings-shown.json"
#: Warnings remembered at most (the oldest are forgotten first).
LIMIT = 500

#: An absolute path in a warning's text (compiled on the first warning, by :mod:`re`'s cache).
_PATH = r"(?:^|(?<=[\s'\"(]))(/[^\s'\":(),]+)"


class OncePerChange:
    """A ``warn`` callback for a :class:`~opencode_cli.project.Project` that passes each warning on to
    ``show`` only once per change of what it is about (see the module's docstring)."""

    def __init__(self, record: Path, show: Callable[[str], None]) -> None:
        self.record = record
        self.show = show
        self.context: Callable[[], Iterable[Path]] = lambda: ()
        """The paths a warning that names no file is about (the project's config files)."""
        self._seen: dict[str, str] | None = None

    def __call__(self, message: str) -> None:
        paths = [Path(found) for found in re.findall(_PATH, message)] or list(self.context())
        stamp = _stamp(paths)
        seen = self._load()
        if seen.get(message) == stamp:
            return
        seen.pop(message, None)
        seen[message] = stamp  # the newest last
        while len(seen) > LIMIT:
            del seen[next(iter(seen))]
        self._save(seen)
        self.show(message)

    def _load(self) -> dict[str, str]:
        if self._seen is None:
            try:
                data: Any = json.loads(self.record.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = {}
            data = data if isinstance(data, dict) else {}
            self._seen = {key: value for key, value in data.items() if isinstance(value, str)}
        return self._seen

    def _save(self, seen: dict[str, str]) -> None:
        """Write the record atomically (a temporary file renamed over it); a record that cannot be
        written only means the warning is shown again."""
        temporary = self.record.with_name(f".{self.record.name}.{os.getpid()}")
        try:
            self.record.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps(seen, ensure_ascii=False), encoding="utf-8")
            os.replace(temporary, self.record)
        except OSError:
            temporary.unlink(missing_ok=True)


def _stamp(paths: list[Path]) -> str:
    """The size and modification time of each path (``-`` for one that does not exist)."""
    parts = []
    for path in paths:
        try:
            status = path.stat()
        except OSError:
            parts.append(f"{path}:-")
            continue
        parts.append(f"{path}:{status.st_size}:{status.st_mtime_ns}")
    return "|".join(parts)
