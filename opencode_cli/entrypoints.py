"""Entry points of the ``opencode`` group, with a small on-disk cache.

Asking :mod:`importlib.metadata` scans every installed distribution and costs more than the rest of
``opencode tools list`` together, so the answer is cached under ``$XDG_CACHE_HOME/opencode``. The cache is
keyed by the interpreter, ``sys.path`` and the modification time of each of its directories: installing
or removing a distribution changes its site directory's mtime and so invalidates the cache. Each
environment (interpreter and ``sys.path``) has a cache file of its own, so that two of them sharing a
cache directory (two virtual environments, a ``PYTHONPATH`` set now and then) do not push each other out.

``OPENCODE_PLUGIN_PATH`` (directories separated by ``os.pathsep``) narrows the search to the distributions
installed in those directories instead of every directory of ``sys.path``; set but empty, no directory is
searched. A test suite uses it to see only the plugins it installed, whatever else the environment holds.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

CACHE_VERSION = 2

#: The variable that narrows the search for entry points to some directories (see the module docstring).
PATH_VARIABLE = "OPENCODE_PLUGIN_PATH"


def search_path(env: Mapping[str, str]) -> list[str] | None:
    """The directories ``OPENCODE_PLUGIN_PATH`` names in ``env``; ``None`` when it is unset."""
    value = env.get(PATH_VARIABLE)
    if value is None:
        return None
    return [os.path.abspath(entry) for entry in value.split(os.pathsep) if entry]


class EntryPoint(NamedTuple):
    """One ``name = module:attribute`` entry point and the distribution that declares it."""

    name: str
    value: str
    distribution: str | None = None
    version: str | None = None
    requires: str | None = None
    """The version specifier the distribution puts on opencode-tools (``Requires-Dist``), ``""`` for any
    version, ``None`` when it does not name it (see :mod:`opencode_cli.compat`)."""

    def load(self) -> Any:
        """Import the module and resolve the attribute path, as :meth:`importlib.metadata.EntryPoint.load`."""
        module_name, _, attributes = self.value.partition(":")
        target: Any = importlib.import_module(module_name.strip())
        for part in filter(None, attributes.split("[")[0].strip().split(".")):
            target = getattr(target, part)
        return target


def _path_key(path: Sequence[str]) -> list[tuple[str, int]]:
    key = []
    for entry in path:
        try:
            key.append((os.path.abspath(entry or "."), os.stat(entry or ".").st_mtime_ns))
        except OSError:
            key.append((entry, -1))
    return key


#: The groups one scan of the installed distributions answers together: a cache miss on one of them (an
#: install, another ``sys.path``) writes the cache of each, so that every distribution's metadata is read
#: once, not once per group (``opencode``'s plugins, then llm's for its bridge).
SCANNED_TOGETHER = ("opencode", "llm")


def _scan(groups: Sequence[str], path: Sequence[str] | None) -> dict[str, list[EntryPoint]]:
    """The entry points of each of ``groups``, from one pass over the installed distributions."""
    from importlib.metadata import distributions, entry_points

    wanted: dict[str, list[Any]] = {group: [] for group in groups}
    if path is None:
        every = entry_points()  # as entry_points(group=...) selects from: the first distribution of a name
        for group in groups:
            wanted[group] = list(every.select(group=group))
    else:  # as entry_points() does: the first distribution of a name on the path wins
        seen: set[str] = set()
        for dist in distributions(path=list(path)):
            name = (dist.metadata["Name"] or "").lower().replace("-", "_")
            if name not in seen:
                seen.add(name)
                for entry in dist.entry_points:
                    if entry.group in wanted:
                        wanted[entry.group].append(entry)
    from .compat import requirement

    found: dict[str, list[EntryPoint]] = {}
    for group, entries in wanted.items():
        found[group] = []
        for entry in entries:
            owner = entry.dist
            found[group].append(
                EntryPoint(
                    entry.name,
                    entry.value,
                    owner.metadata["Name"] if owner is not None else None,
                    owner.version if owner is not None else None,
                    requirement(owner.requires) if owner is not None else None,
                )
            )
    return found


def discover(group: str, cache_dir: Path | None, path: Sequence[str] | None = None) -> list[EntryPoint]:
    """The group's entry points, from the cache when it is still valid (``cache_dir=None``: no cache).

    ``path``: the directories to search (see :func:`search_path`); ``None`` searches ``sys.path``.
    """
    if cache_dir is None:
        return _scan((group,), path)[group]
    import zlib

    searched = sys.path if path is None else list(path)
    stamps = _path_key(searched)
    environment = zlib.crc32(json.dumps([sys.executable, searched]).encode("utf-8", "surrogatepass"))

    def key_and_file(name: str) -> tuple[dict[str, Any], Path]:
        key = {"version": CACHE_VERSION, "python": sys.executable, "group": name, "path": stamps}
        return key, cache_dir / f"entry-points-{name}-{environment:08x}.json"

    key, cache = key_and_file(group)
    try:
        stored = json.loads(cache.read_text(encoding="utf-8"))
        if stored.get("key") == json.loads(json.dumps(key)):
            return [EntryPoint(**item) for item in stored["entry_points"]]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    together = (group, *(name for name in SCANNED_TOGETHER if name != group))
    scanned = _scan(together, path)
    from .nofollow import replace

    for name, found in scanned.items():
        key, cache = key_and_file(name)
        try:
            payload = {"key": key, "entry_points": [e._asdict() for e in found]}
            replace(cache, json.dumps(payload).encode("utf-8"))
        except OSError:
            pass
    return scanned[group]
