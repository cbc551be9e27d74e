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

from .. import __version__
from ..entrypoints import EntryPoint

#: The distribution the built-in plugins come with (``opencode plugins list`` shows its version).
DISTRIBUTION = "opencode-tools"


def _plugin(name: str, attribute: str = "") -> EntryPoint:
    value = f"opencode_cli.builtin.{name}" + (f":{attribute}" if attribute else "")
    return EntryPoint(name, value, DISTRIBUTION, __version__)


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
    _plugin("telemetry", "plugin"),  # OpenTelemetry spans of each call (the object: configured or not)
)

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


def rank(tool_id: str) -> int:
    """Where a built-in tool goes in OpenCode's order (one not in :data:`TOOL_ORDER` goes last)."""
    return TOOL_ORDER.get(tool_id, len(TOOL_ORDER))
