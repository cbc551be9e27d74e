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


def _scan(group: str, path: Sequence[str] | None) -> list[EntryPoint]:
    from importlib.metadata import distributions, entry_points

    if path is None:
        entries = list(entry_points(group=group))
    else:  # as entry_points() does: the first distribution of a name on the path wins
        seen: set[str] = set()
        entries = []
        for dist in distributions(path=list(path)):
            name = (dist.metadata["Name"] or "").lower().replace("-", "_")
            if name not in seen:
                seen.add(name)
                entries.extend(entry for entry in dist.entry_points if entry.group == group)
    from .compat import requirement

    found = []
    for entry in entries:
        owner = entry.dist
        found.append(
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
        return _scan(group, path)
    import zlib

    searched = sys.path if path is None else list(path)
    key = {"version": CACHE_VERSION, "python": sys.executable, "group": group, "path": _path_key(searched)}
    environment = zlib.crc32(json.dumps([sys.executable, searched]).encode("utf-8", "surrogatepass"))
    cache = cache_dir / f"entry-points-{group}-{environment:08x}.json"
    try:
        stored = json.loads(cache.read_text(encoding="utf-8"))
        if stored.get("key") == json.loads(json.dumps(key)):
            return [EntryPoint(**item) for item in stored["entry_points"]]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    found = _scan(group, path)
    from .nofollow import replace

    try:
        payload = {"key": key, "entry_points": [e._asdict() for e in found]}
        replace(cache, json.dumps(payload).encode("utf-8"))
    except OSError:
        pass
    return found
