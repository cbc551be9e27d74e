"""The built-in plugins: the tools and hooks opencode-tools ships, split into a few named plugins.

Each is an ordinary plugin module (``@hookimpl`` functions, nothing else) and is loaded through the same
function as a plugin installed with pip (:meth:`opencode_cli.plugins.Plugins.load`): :data:`PLUGINS` is
that table, in the shape of the ``opencode`` entry-point group. It is a table here rather than entry
points in ``pyproject.toml`` so that the built-ins load when entry points are not searched
(``OPENCODE_PURE``, ``OPENCODE_DISABLE_PLUGIN_AUTOLOAD``, ``OPENCODE_PLUGIN_PATH``, the plugin test
kit), from a checkout that is not installed, in a fixed order, and without the metadata scan.

Any of them but :data:`ESSENTIAL` can be switched off by name: ``[plugins] disabled = ["web"]`` in
``opencode.toml``, or ``opencode -p no:web …`` on the command line. Tools come out in OpenCode's order
(core spec §3.1) whichever built-in plugin registers them: :data:`TOOL_ORDER`, read by the registry.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .. import DISTRIBUTION, __version__
from ..entrypoints import EntryPoint
from ..toolspec import ToolSource

if TYPE_CHECKING:
    from ..plugins import PluginRecord
    from ..project import Project


def _plugin(name: str, value: str | None = None) -> EntryPoint:
    """A built-in plugin: its module ``opencode_cli.builtin.NAME``, or ``value`` (``module:attribute``)."""
    return EntryPoint(name, value or f"opencode_cli.builtin.{name}", DISTRIBUTION, __version__)


#: The built-in plugins, in load order: ``name = module`` as an entry point of the ``opencode`` group.
PLUGINS: tuple[EntryPoint, ...] = (
    _plugin("core"),  # the innermost tool_execute, and invalid (the target of call repair)
    _plugin("files"),  # read, glob, grep, edit, write, apply_patch
    _plugin("shell"),  # bash
    _plugin("web"),  # webfetch, websearch
    _plugin("agents"),  # question, task, todowrite, skill, plan_exit
    _plugin("codemode"),  # execute
    _plugin("lsp"),  # lsp
    _plugin("providers"),  # the model providers: OpenAI-compatible, Anthropic, Google
    _plugin("llm"),  # the tools of simonw/llm's installed tool plugins (opencode_cli.bridges)
    _plugin("langchain", "opencode_cli.builtin.bridges:langchain"),  # tools and toolkits named in [langchain]
    _plugin("pydantic_ai", "opencode_cli.builtin.bridges:pydantic_ai"),  # toolsets named in [pydantic_ai]
    _plugin("telemetry", "opencode_cli.builtin.telemetry:plugin"),  # OpenTelemetry spans (configured or not)
)

#: The built-in plugins that bridge another ecosystem's tools (they run in this process, outside the sandbox).
BRIDGES = frozenset({"llm", "langchain", "pydantic_ai"})

#: Plugins that cannot be switched off: every call runs through ``core``'s ``tool_execute``.
ESSENTIAL = frozenset({"core"})

#: The built-in tools in OpenCode's order (core spec §3.1): the registry lists them so, whichever built-in
#: plugin registered them and in whatever order the plugins loaded.
TOOL_ORDER: dict[str, int] = {
    tool_id: rank
    for rank, tool_id in enumerate(
        (
            "invalid",
            "question",
            "bash",
            "read",
            "glob",
            "grep",
            "edit",
            "write",
            "task",
            "webfetch",
            "todowrite",
            "websearch",
            "skill",
            "apply_patch",
            "execute",
            "lsp",
            "plan_exit",
        )
    )
}


def configured(project: Project, key: str) -> Any:
    """A bridge's setting (``llm.toolboxes``, ``langchain``…), read from the config of the generation
    whose tools are being built (the trusted view; while a reload prepares one, not the current one's)."""
    from ..building import building

    return building(project).config.get(key)


def source(ecosystem: str, origin: str, version: str | None = None) -> ToolSource:
    """Where a bridged tool comes from: ``ecosystem`` (``llm``, ``langchain``, ``pydantic_ai``) and the
    package or import path (``origin``) it is taken from (here, beside :func:`configured`, so that the
    ``llm`` plugin lists its catalogued tools without importing :mod:`opencode_cli.bridges`)."""
    return ToolSource("bridge", name=ecosystem, version=version, origin=origin)


def unconfined(records: Iterable[PluginRecord]) -> dict[str, list[str]]:
    """The tools of the bridge plugins among ``records``, by plugin: Python code run in this process, which
    the sandbox (Landlock, applied to the commands ``bash`` starts) does not confine."""
    return {r.name: list(r.tools) for r in records if r.kind == "builtin" and r.name in BRIDGES and r.tools}


def rank(tool_id: str) -> int:
    """Where a built-in tool goes in OpenCode's order (one not in :data:`TOOL_ORDER` goes last)."""
    return TOOL_ORDER.get(tool_id, len(TOOL_ORDER))
