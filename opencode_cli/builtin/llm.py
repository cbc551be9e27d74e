"""The ``llm`` built-in plugin: the tools of simonw/llm's installed tool plugins, and the toolboxes
configured in ``[llm] toolboxes`` (see :mod:`opencode_cli.bridges.llm`).

It does nothing unless a plugin of llm's ``llm`` entry-point group is installed (found through the
entry-point cache, without importing anything); then the plugins' tools come from a catalogue
(:mod:`opencode_cli.bridges.llm_catalog`), and llm is imported by a tool's first call or a configured
toolbox. Entry-point plugins are the user's own: they load whether or not the project is trusted, and not
at all where ours do not (``OPENCODE_PURE``, ``OPENCODE_DISABLE_PLUGIN_AUTOLOAD``; ``OPENCODE_PLUGIN_PATH``
narrows the search).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..hookspecs import hookimpl
from . import configured

if TYPE_CHECKING:
    from pathlib import Path

    from ..entrypoints import EntryPoint
    from ..flags import Flags
    from ..project import Project
    from ..registry import RegisterTool

#: The entry-point group of llm's plugins.
GROUP = "llm"


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
    from ..bridges import llm_catalog, settings
    from ..bridges import register as register_all

    register_all(register, llm_catalog.tools(plugins, settings(project, "llm"), _cache(project)))
