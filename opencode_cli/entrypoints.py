"""Entry points of the ``opencode`` group, with a small on-disk cache.

Asking :mod:`importlib.metadata` scans every installed distribution and costs more than the rest of
``opencode tools list`` together, so the answer is cached under ``$XDG_CACHE_HOME/opencode``. The cache is
keyed by the interpreter, ``sys.path`` and the modification time of each of its directories: installing
or removing a distribution changes its site directory's mtime and so invalidates the cache. Each
environment (interpreter and ``sys.path``) has a cache file of its own, so that two of them sharing a
cache directory (two virtual environments, a ``PYTHONPATH`` set now and then) do not push each other out.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

CACHE_VERSION = 1


class EntryPoint(NamedTuple):
    """One ``name = module:attribute`` entry point and the distribution that declares it."""

    name: str
    value: str
    distribution: str | None = None
    version: str | None = None

    def load(self) -> Any:
        """Import the module and resolve the attribute path, as :meth:`importlib.metadata.EntryPoint.load`."""
        module_name, _, attributes = self.value.partition(":")
        target: Any = importlib.import_module(module_name.strip())
        for part in filter(None, attributes.split("[")[0].strip().split(".")):
            target = getattr(target, part)
        return target


def _path_key() -> list[tuple[str, int]]:
    key = []
    for entry in sys.path:
        try:
            key.append((os.path.abspath(entry or "."), os.stat(entry or ".").st_mtime_ns))
        except OSError:
            key.append((entry, -1))
    return key


def _scan(group: str) -> list[EntryPoint]:
    from importlib.metadata import entry_points

    found = []
    for entry in entry_points(group=group):
        dist = getattr(entry, "dist", None)
        found.append(
            EntryPoint(
                entry.name,
                entry.value,
                dist.metadata["Name"] if dist is not None else None,
                dist.version if dist is not None else None,
            )
        )
    return found


def discover(group: str, cache_dir: Path | None) -> list[EntryPoint]:
    """The group's entry points, from the cache when it is still valid (``cache_dir=None``: no cache)."""
    if cache_dir is None:
        return _scan(group)
    import zlib

    key = {"version": CACHE_VERSION, "python": sys.executable, "group": group, "path": _path_key()}
    environment = zlib.crc32(json.dumps([sys.executable, sys.path]).encode("utf-8", "surrogatepass"))
    cache = cache_dir / f"entry-points-{group}-{environment:08x}.json"
    try:
        stored = json.loads(cache.read_text(encoding="utf-8"))
        if stored.get("key") == json.loads(json.dumps(key)):
            return [EntryPoint(**item) for item in stored["entry_points"]]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    found = _scan(group)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        temporary = cache.with_name(f".{cache.name}.{os.getpid()}")
        payload = {"key": key, "entry_points": [e._asdict() for e in found]}
        temporary.write_text(json.dumps(payload), encoding="utf-8")
        os.replace(temporary, cache)
    except OSError:
        pass
    return found
