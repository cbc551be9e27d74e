"""What the installed llm plugins offer, kept in a cache so that listing their tools imports nothing.

``import llm`` (with the plugins' own imports) costs about a second of a cold start; ``opencode tools
list`` costs a fifth of that. So the plain tools of each plugin (name, description, JSON Schema) and the
class names of its toolboxes are kept under ``$XDG_CACHE_HOME/opencode``, keyed by the interpreter and
each plugin's entry point, version, module file and site directory (their modification times):
installing, upgrading or editing a plugin (or llm beside it) makes the catalogue anew. A catalogued
tool is registered as a tool built on first use (:func:`~opencode_cli.contract.define`'s kind): llm and
the plugin are imported by its first call, or by a listing that needs what the catalogue does not hold (a
configured toolbox).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..contract import AnyTool, LazyTool
from ..entrypoints import EntryPoint
from . import names, source

CACHE_VERSION = 1
CACHE_FILE = "llm-tools.json"


def _module_stamp(entry: EntryPoint) -> list[Any]:
    """The entry point, and the modification times of its module's file and of the directory its package
    is installed in (found without importing the module): an edit of the plugin, or an install or upgrade
    in its site directory (llm's own included), changes them."""
    top = entry.value.partition(":")[0].strip().split(".")[0]
    stamps = []
    try:
        spec = importlib.util.find_spec(top)
        origin = spec.origin if spec is not None else None
        if origin:
            installed = (
                Path(origin).parent
                if spec and spec.submodule_search_locations is None
                else Path(origin).parent.parent
            )
            stamps = [os.stat(origin).st_mtime_ns, os.stat(installed).st_mtime_ns]
    except (ImportError, ValueError, OSError):
        stamps = []
    return [entry.name, entry.value, entry.version, stamps]


def catalog(
    entries: Sequence[EntryPoint], cache_dir: Path | None
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """What each plugin of ``entries`` offers (``{"tools": [{name, description, schema}], "toolboxes":
    [class names]}`` by plugin), from the cache when it is still valid; with the problems found."""
    key = {"version": CACHE_VERSION, "python": sys.executable, "plugins": [_module_stamp(e) for e in entries]}
    path = cache_dir / CACHE_FILE if cache_dir is not None else None
    if path is not None:
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            if stored.get("key") == json.loads(json.dumps(key)):
                return stored["plugins"], []
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            pass
    from .llm import survey

    listed, problems = survey(entries)
    if path is not None and not problems:  # a plugin that failed is asked again next time
        from ..nofollow import replace

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace(path, json.dumps({"key": key, "plugins": listed}).encode("utf-8"))
        except OSError:
            pass
    return listed, problems


def _built(entry: EntryPoint, name: str) -> Any:
    from .llm import plain_tool

    return plain_tool(entry, name)


def tools(
    entries: Sequence[EntryPoint], config: Mapping[str, Any], cache_dir: Path | None
) -> tuple[list[AnyTool], list[str]]:
    """The tools of the installed llm plugins (``entries``), each built on first use, and those of the
    toolboxes ``config`` (the ``[llm]`` table) names; with the problems found."""
    listed, problems = catalog(entries, cache_dir)
    by_name = {entry.name: entry for entry in entries}
    found: list[AnyTool] = []
    for plugin, offered in listed.items():
        entry = by_name[plugin]
        origin = source("llm", plugin, entry.version)
        for each in offered["tools"]:
            found.append(
                LazyTool(
                    each["name"],
                    functools.partial(_built, entry, each["name"]),
                    each["description"],
                    source=origin,
                    schema=functools.partial(dict, each["schema"]),
                )
            )
    specs = names(config.get("toolboxes"), "[llm] toolboxes")
    if specs:
        wanted = {match[1] for spec in specs if (match := re.match(r"\s*([A-Za-z_]\w*)", spec))}
        providing = [by_name[p] for p, offered in listed.items() if wanted & set(offered["toolboxes"])]
        known = [name for offered in listed.values() for name in offered["toolboxes"]]
        from .llm import toolbox_tools

        made, more = toolbox_tools(providing, specs, known)
        found.extend(made)
        problems.extend(more)
    return found, problems
