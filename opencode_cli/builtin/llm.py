"""The ``llm`` built-in plugin: the tools of simonw/llm's installed tool plugins, and the toolboxes
configured in ``[llm] toolboxes`` (see :mod:`opencode_cli.bridges.llm`).

It does nothing unless a plugin of llm's ``llm`` entry-point group is installed (found through the
entry-point cache, without importing anything); then the plugins' tools come from a catalogue (below),
and llm is imported by a tool's first call or a configured toolbox. Entry-point plugins are the user's
own: they load whether or not the project is trusted, and not at all where ours do not
(``OPENCODE_PURE``, ``OPENCODE_DISABLE_PLUGIN_AUTOLOAD``; ``OPENCODE_PLUGIN_PATH`` narrows the search).

The catalogue: ``import llm`` (with the plugins' own imports) costs about a second of a cold start;
``opencode tools list`` costs a fifth of that. So the plain tools of each plugin (name, description, JSON
Schema) and the class names of its toolboxes are kept under ``$XDG_CACHE_HOME/opencode``, keyed by the
interpreter and each plugin's entry point, version, module file and site directory (their modification
times): installing, upgrading or editing a plugin (or llm beside it) makes the catalogue anew. A
catalogued tool is registered as a tool built on first use (:func:`~opencode_cli.contract.define`'s kind):
llm and the plugin are imported by its first call, or by a listing that needs what the catalogue does not
hold (a configured toolbox). Read from the cache, with no ``[llm]`` table and no problem to report, the
catalogue imports nothing, not even :mod:`opencode_cli.bridges`.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..hookspecs import hookimpl
from . import configured, source

if TYPE_CHECKING:
    from ..contract import AnyTool
    from ..entrypoints import EntryPoint
    from ..flags import Flags
    from ..project import Project
    from ..registry import RegisterTool

#: The entry-point group of llm's plugins.
GROUP = "llm"

#: The catalogue's file under the cache directory, and the version of its shape.
CACHE_FILE = "llm-tools.json"
CACHE_VERSION = 1


def _cache(project: Project | None) -> Path | None:
    from .. import paths

    env = project.env if project is not None else os.environ
    return None if env.get("OPENCODE_DISABLE_ENTRY_POINT_CACHE") else paths.cache_dir(env)


def installed(flags: Flags, project: Project | None) -> list[EntryPoint]:
    """The installed llm plugins' entry points (none when entry-point plugins are off)."""
    if flags.pure or flags.disable_plugin_autoload:
        return []
    from ..entrypoints import discover, search_path

    return discover(GROUP, _cache(project), search_path(project.env if project is not None else os.environ))


@hookimpl
def register_tools(register: RegisterTool, flags: Flags, project: Project | None) -> None:
    """Register the tools of the installed llm plugins and of the configured toolboxes."""
    plugins = installed(flags, project)
    if not plugins:
        if project is not None and configured(project, "llm.toolboxes"):
            from ..bridges import BridgeError

            raise BridgeError("[llm] toolboxes are configured, but no llm plugin is installed")
        return
    found, problems = tools(plugins, project, _cache(project))
    if not problems:
        for each in found:
            register(each)
        return
    from ..bridges import register as register_all

    register_all(register, (found, problems))  # what was found, then a BridgeError for the problems


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
    from ..bridges.llm import survey

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
    from ..bridges.llm import plain_tool

    return plain_tool(entry, name)


def tools(
    entries: Sequence[EntryPoint], project: Project | None, cache_dir: Path | None
) -> tuple[list[AnyTool], list[str]]:
    """The tools of the installed llm plugins (``entries``), each built on first use, and those of the
    toolboxes the ``[llm]`` table of ``project``'s config names; with the problems found."""
    from ..contract import LazyTool

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
    if project is None or configured(project, "llm") is None:  # no [llm] table: no toolbox
        return found, problems
    from ..bridges import names, settings

    specs = names(settings(project, "llm").get("toolboxes"), "[llm] toolboxes")
    if specs:
        wanted = {match[1] for spec in specs if (match := re.match(r"\s*([A-Za-z_]\w*)", spec))}
        providing = [by_name[p] for p, offered in listed.items() if wanted & set(offered["toolboxes"])]
        known = [name for offered in listed.values() for name in offered["toolboxes"]]
        from ..bridges.llm import toolbox_tools

        made, more = toolbox_tools(providing, specs, known)
        found.extend(made)
        problems.extend(more)
    return found, problems
