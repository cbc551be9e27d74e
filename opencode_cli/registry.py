"""The tool registry: every source of tools in order, and the per-model view (core spec §3).

Order: built-ins (in OpenCode's order), then tool files from config directories (directory order), then
tools of entry-point plugins (load order). A later tool with the same id replaces an earlier one, and the
replaced source is remembered so ``tools list --json`` can say what was shadowed.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .contract import LazyTool, Tool, ToolSource
from .errors import UnknownToolError
from .modelref import ModelRef

if TYPE_CHECKING:
    from .flags import Flags
    from .plugins import PluginRecord, Plugins
    from .project import Project

AnyTool = Tool | LazyTool

#: Never offered to a model: the target of call repair (core spec §4.1).
INVALID = "invalid"

#: Tools the per-model rules switch on or off (core spec §3.5).
MODEL_DEPENDENT = frozenset({"apply_patch", "edit", "write", "websearch"})


class RegisterTool(Protocol):
    """The ``register`` callback handed to the ``register_tools`` hook."""

    def __call__(self, tool: AnyTool, *, gate: str | None = None) -> None: ...


def uses_apply_patch(model_id: str) -> bool:
    """OpenCode's rule: GPT models other than ``gpt-4*`` and ``*oss*`` edit with ``apply_patch``."""
    return "gpt-" in model_id and "oss" not in model_id and "gpt-4" not in model_id


@dataclass
class ToolEntry:
    """A tool in the registry, with where it came from and why it might be hidden."""

    tool: AnyTool
    gate: str | None = None
    shadowed: list[ToolSource] = field(default_factory=list)

    @property
    def id(self) -> str:
        """The tool id."""
        return self.tool.id

    @property
    def source(self) -> ToolSource:
        """Where the tool came from."""
        return self.tool.source


class ToolDefinitionOutput:
    """The mutable ``output`` of the ``tool_definition`` hook; ``parameters`` is generated on first read."""

    def __init__(self, description: str, parameters: Callable[[], dict[str, Any]]) -> None:
        self.description = description
        self._make_parameters = parameters
        self._parameters: dict[str, Any] | None = None

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema the model is shown (mutable)."""
        if self._parameters is None:
            self._parameters = self._make_parameters()
        return self._parameters

    @parameters.setter
    def parameters(self, value: dict[str, Any]) -> None:
        self._parameters = value

    @property
    def parameters_changed(self) -> bool:
        """Whether anybody read or replaced the parameters (so they were built)."""
        return self._parameters is not None


@dataclass
class ToolDefinition:
    """One tool as a model is shown it: id, description and (lazily) its JSON Schema."""

    entry: ToolEntry
    output: ToolDefinitionOutput

    @property
    def id(self) -> str:
        """The tool id."""
        return self.entry.id

    @property
    def description(self) -> str:
        """The description after every ``tool_definition`` hook."""
        return self.output.description

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema after every ``tool_definition`` hook."""
        return self.output.parameters


@dataclass
class Hidden:
    """A registered tool a model is not offered, and why."""

    entry: ToolEntry
    reason: str


class Registry:
    """The tools of one project: built once, then filtered per model."""

    def __init__(
        self, plugins: Plugins, flags: Flags, tool_dirs: Iterable[Path], project: Project | None = None
    ) -> None:
        self.plugins = plugins
        self.flags = flags
        self.tool_dirs = list(tool_dirs)
        self.project = project
        self._entries: dict[str, ToolEntry] | None = None

    # -- building ----------------------------------------------------------------------------------------

    @property
    def entries(self) -> dict[str, ToolEntry]:
        """Every registered tool by id, in order (gated built-ins included)."""
        if self._entries is None:
            self._entries = self._build()
        return self._entries

    def _build(self) -> dict[str, ToolEntry]:
        entries: dict[str, ToolEntry] = {}

        def add(tool: AnyTool, source: ToolSource, gate: str | None = None) -> None:
            stamped = tool.copy(source=source)
            # replaced in place: like a JS object key, the id keeps the position it was first given
            previous = entries.get(stamped.id)
            shadowed = [*previous.shadowed, previous.source] if previous else []
            entries[stamped.id] = ToolEntry(stamped, gate, shadowed)

        builtin, plugin_hooks = [], []
        for impl in self.plugins.implementations("register_tools"):
            record = self.plugins.record_for(impl.plugin_name)
            (builtin if record is not None and record.kind == "builtin" else plugin_hooks).append(
                (impl, record)
            )
        # built-ins run first whatever pluggy's order, as OpenCode lists them first
        for impl, record in builtin:
            self._collect(impl, record, add, ToolSource("builtin"))
        for folder in self.tool_dirs:
            for path in _tool_files(folder):
                self._add_file_tools(path, add)
        for impl, record in reversed(plugin_hooks):  # load order
            version = record.version if record else None
            self._collect(impl, record, add, ToolSource("plugin", name=impl.plugin_name, version=version))
        return entries

    def _collect(
        self,
        impl: Any,
        record: PluginRecord | None,
        add: Callable[[AnyTool, ToolSource, str | None], None],
        source: ToolSource,
    ) -> None:
        def register(tool: AnyTool, *, gate: str | None = None) -> None:
            if not isinstance(tool, Tool | LazyTool):
                raise TypeError(
                    f"register() takes a tool made with @tool or define(), not {type(tool).__name__}"
                )
            add(tool, source, gate)
            if record is not None:
                record.tools.append(tool.id)

        available = {"register": register, "flags": self.flags, "project": self.project}
        from .plugins import run_awaitable

        try:
            run_awaitable(impl.function(**{arg: available[arg] for arg in impl.argnames}))
        except Exception as error:
            self.plugins.plugin_failed(impl.plugin_name, "register_tools", error)

    def _add_file_tools(self, path: Path, add: Callable[[AnyTool, ToolSource, str | None], None]) -> None:
        record, module = self.plugins.load_tool_file(path)
        if module is None:
            return
        source = ToolSource("file", name=path.stem, path=str(path))
        for name, value in vars(module).items():
            found = _as_tool(value, module.__name__)
            if found is None:
                continue
            tool_id = path.stem if name == "default" else f"{path.stem}_{name}"
            add(found.copy(id=tool_id), source, None)
            record.tools.append(tool_id)

    # -- queries -------------------------------------------------------------------------------------------

    def get(self, tool_id: str) -> ToolEntry:
        """The entry for ``tool_id``; raises :class:`UnknownToolError` with close matches."""
        entry = self.entries.get(tool_id)
        if entry is None:
            raise UnknownToolError(
                tool_id, difflib.get_close_matches(tool_id, list(self.entries), n=3, cutoff=0.6)
            )
        return entry

    def all(self) -> list[ToolEntry]:
        """Tools enabled in this environment (``invalid`` included), in order."""
        return [entry for entry in self.entries.values() if entry.gate is None]

    def depends_on_model(self, entry: ToolEntry) -> bool:
        """Whether the per-model rules decide if ``entry`` is offered (edit/write/apply_patch, websearch)."""
        return entry.id in MODEL_DEPENDENT

    def hidden_reason(self, entry: ToolEntry, model: ModelRef | None) -> str | None:
        """Why a model is not offered ``entry`` (``None``: it is offered)."""
        if entry.gate is not None:
            return entry.gate
        if entry.id == INVALID:
            return "never offered to a model: calls to unknown tools are repaired into it"
        if entry.id == "execute":
            return "offered only when MCP tools are connected (code mode)"
        if model is None:
            return None
        if entry.id == "websearch" and not (
            model.provider in ("opencode", "opencode-go")
            or self.flags.enable_exa
            or self.flags.enable_parallel
        ):
            return "offered only for the opencode provider (or with OPENCODE_ENABLE_EXA / _PARALLEL)"
        patch = uses_apply_patch(model.id)
        if entry.id == "apply_patch" and not patch:
            return (
                f"{model.id} edits with edit/write (apply_patch is for gpt- models other than gpt-4 and oss)"
            )
        if entry.id in ("edit", "write") and patch:
            return f"{model.id} edits with apply_patch"
        return None

    def tools(self, model: ModelRef | None = None, disabled: Iterable[str] = ()) -> list[ToolDefinition]:
        """What a model is offered, in order, after the per-model filter and ``tool_definition`` hooks.

        ``disabled`` are ids hidden by permissions (see :func:`opencode_cli.permission.disabled`).
        """
        hidden = set(disabled)
        definitions = []
        for entry in self.entries.values():
            if entry.id in hidden or self.hidden_reason(entry, model) is not None:
                continue
            definition = self._safe_definition(entry, model)
            if definition is not None:
                definitions.append(definition)
        return definitions

    def _safe_definition(self, entry: ToolEntry, model: ModelRef | None) -> ToolDefinition | None:
        """:meth:`definition`, or ``None`` (with the failure recorded) when the tool cannot be described."""
        try:
            return self.definition(entry, model)
        except Exception as error:
            from .plugins import describe_exception

            entry.gate = f"failed to load: {describe_exception(error)}"
            self.plugins.tool_failed(entry.source, entry.id, error)
            return None

    def hidden(self, model: ModelRef | None = None, disabled: Iterable[str] = ()) -> list[Hidden]:
        """Registered tools a model is not offered, with the reason."""
        denied = set(disabled)
        result = []
        for entry in self.entries.values():
            reason = self.hidden_reason(entry, model)
            if reason is None and entry.id in denied:
                reason = "denied wholly by the agent's permission rules"
            if reason is not None:
                result.append(Hidden(entry, reason))
        return result

    def definition(self, entry: ToolEntry, model: ModelRef | None) -> ToolDefinition:
        """One tool's definition for ``model``, after the ``tool_definition`` hooks."""
        # a copy: hooks may edit the schema in place, and a loaded tool caches its own
        output = ToolDefinitionOutput(
            entry.tool.description, lambda: copy.deepcopy(entry.tool.load().schema())
        )
        if self.plugins.has_hook("tool_definition"):
            self.plugins.call("tool_definition", tool_id=entry.id, model=model, output=output)
        return ToolDefinition(entry, output)


def _tool_files(folder: Path) -> list[Path]:
    files: list[Path] = []
    for sub in ("tool", "tools"):
        directory = folder / sub
        if directory.is_dir():
            files.extend(sorted(p for p in directory.glob("*.py") if p.is_file()))
    return files


def _as_tool(value: Any, module_name: str) -> AnyTool | None:
    if isinstance(value, Tool | LazyTool):
        return value
    if (
        isinstance(value, type)
        and issubclass(value, Tool)
        and value is not Tool
        and value.__module__ == module_name
    ):
        return value()
    return None
