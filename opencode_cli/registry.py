"""The tool registry: every source's tools in order (core spec §3.1, §3.3).

Order: built-ins (in OpenCode's order), then tool files from config directories (directory order), then
tools of entry-point plugins (load order), then sources added by the host (MCP servers). A later tool with
the same id replaces an earlier one, and the replaced source is remembered so ``tools list --json`` can
say what was shadowed. Which of these tools a model is offered is decided in :mod:`opencode_cli.policy`.
"""

from __future__ import annotations

import copy
import difflib
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from .contract import AnyTool, Tool
from .errors import UnknownToolError
from .modelref import ModelRef
from .record import Record
from .sources import Contribution, Source
from .steps import Steps, call_each, drive
from .toolspec import ToolSource

if TYPE_CHECKING:
    from .plugins import PluginRecord, Plugins
    from .toolbox import Toolbox
    from .toolspec import ToolSpec

#: Held while a registry entry builds its tool (so that two threads build it once).
_BUILDING = threading.Lock()

#: Never offered to a model: the target of call repair (core spec §4.1).
INVALID = "invalid"


class RegisterTool(Protocol):
    """The ``register`` callback handed to the ``register_tools`` hook: a tool, or a toolbox (an instance
    or its class) whose methods are tools."""

    def __call__(self, tool: AnyTool | Toolbox | type[Toolbox], *, gate: str | None = None) -> None: ...


class ToolEntry(Record):
    """A tool in the registry, with where it came from and why it might be hidden (``source_key``: the
    key of the registry source that contributed it, ``file:<path>``, ``plugin:<name>``…; ``renamed``: why
    the id is not the name the tool came with, which ``tools list --all`` shows, if it is not)."""

    __slots__ = ("_built", "_spec", "gate", "renamed", "shadowed", "source_key", "tool")

    def __init__(
        self,
        tool: AnyTool,
        gate: str | None = None,
        shadowed: list[ToolSource] | None = None,
        source_key: str = "",
        renamed: str | None = None,
    ) -> None:
        self.tool = tool
        self.gate = gate
        self.shadowed: list[ToolSource] = [] if shadowed is None else shadowed
        self.source_key = source_key
        self.renamed = renamed
        self._built: Tool | None = None
        self._spec: ToolSpec | None = None

    @property
    def id(self) -> str:
        """The tool id."""
        return self.tool.id

    def loaded(self) -> Tool:
        """The tool, built (a :class:`LazyTool`'s ``init`` run) once for this entry, that is once per
        generation: every call of the generation shares it, with its description, schema, parameters
        model and call signature; the next reload's registry builds it again."""
        built = self._built
        if built is None:
            with _BUILDING:
                if self._built is None:
                    self._built = self.tool.load()
                built = self._built
        return built

    @property
    def spec(self) -> ToolSpec:
        """What a model is told about the tool, made once for this entry: what is known without building
        the tool when it was declared, the tool built for this entry (:meth:`loaded`) for the rest."""
        spec = self._spec
        if spec is None:
            spec = self._spec = self.tool.spec_for(self.loaded)
        return spec

    @property
    def description(self) -> str:
        """The description (:attr:`spec`'s)."""
        return self.spec.description

    def schema(self) -> dict[str, Any]:
        """The JSON Schema (:attr:`spec`'s; shared: copy it before changing it)."""
        return self.spec.parameters

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

    def checkpoint(self) -> Callable[[], None]:
        """What the output is now; calling the result puts it back (a hook that raised loses its change)."""
        description = self.description
        parameters = copy.deepcopy(self._parameters)

        def undo() -> None:
            self.description = description
            self._parameters = parameters

        return undo

    @property
    def parameters_changed(self) -> bool:
        """Whether anybody read or replaced the parameters (so they were built)."""
        return self._parameters is not None


class ToolDefinition(Record):
    """One tool as a model is shown it: id, description and (lazily) its JSON Schema."""

    __slots__ = ("entry", "output")

    def __init__(self, entry: ToolEntry, output: ToolDefinitionOutput) -> None:
        self.entry = entry
        self.output = output

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


class Hidden(Record):
    """A registered tool a model is not offered, and why."""

    __slots__ = ("entry", "reason")

    def __init__(self, entry: ToolEntry, reason: str) -> None:
        self.entry = entry
        self.reason = reason


def _in_order(
    contributions: Iterable[Contribution],
) -> list[tuple[Contribution, AnyTool, str | None]]:
    """Every contribution's tools in source order, but the built-in plugins' tools (which come first) in
    OpenCode's order (:data:`~opencode_cli.builtin.TOOL_ORDER`), whichever built-in plugin registered them."""
    from .builtin import rank

    listed = [(c, tool, gate) for c in contributions for tool, gate in c.tools]
    builtin = sorted(
        (item for item in listed if item[0].source.kind == "builtin"), key=lambda i: rank(i[1].id)
    )
    return [*builtin, *(item for item in listed if item[0].source.kind != "builtin")]


class Registry:
    """One generation of a project's tools: its sources' contributions, assembled in order.

    A registry never changes once built; a reload builds a new one with :meth:`steps`, which reuses the
    contributions of every source that did not change.
    """

    def __init__(self, contributions: Iterable[Contribution], plugins: Plugins | None = None) -> None:
        self.contributions: dict[str, Contribution] = {c.source.key: c for c in contributions}
        self.plugins = plugins
        self.explain: Callable[[str], str | None] | None = None
        """Why an id is not a tool when a source knows (an MCP server that failed to start): set by the
        generation; :meth:`get` raises an :class:`~opencode_cli.errors.UnavailableToolError` with it."""
        self.entries: dict[str, ToolEntry] = {}
        """Every registered tool by id, in order (gated built-ins included)."""
        for contribution, tool, gate in _in_order(self.contributions.values()):
            # replaced in place: like a JS object key, the id keeps the position it was first given
            previous = self.entries.get(tool.id)
            shadowed = [*previous.shadowed, previous.source] if previous else []
            renamed = contribution.renamed.get(tool.id)
            self.entries[tool.id] = ToolEntry(tool, gate, shadowed, contribution.source.key, renamed)

    @classmethod
    def build(
        cls,
        sources: Iterable[Source],
        plugins: Plugins | None = None,
        *,
        previous: Registry | None = None,
        changed: Iterable[str] = (),
        warn: Callable[[str], None] | None = None,
    ) -> Registry:
        """Assemble ``sources`` (see :meth:`steps`) from sync code."""
        return drive(cls.steps(sources, plugins, previous=previous, changed=changed, warn=warn))

    @classmethod
    def steps(
        cls,
        sources: Iterable[Source],
        plugins: Plugins | None = None,
        *,
        previous: Registry | None = None,
        changed: Iterable[str] = (),
        warn: Callable[[str], None] | None = None,
    ) -> Steps[Registry]:
        """Assemble ``sources``: a source whose key is not in ``changed`` and that ``previous`` built
        keeps that contribution; the others are built now (their problems go to ``warn``)."""
        report = warn or (lambda message: None)
        stale = set(changed)
        contributions = []
        for source in sources:
            before = previous.contributions.get(source.key) if previous is not None else None
            if before is not None and source.key not in stale:
                contributions.append(before)
            else:
                contributions.append((yield from source.steps(before, report)))
        return cls(contributions, plugins)

    # -- queries -------------------------------------------------------------------------------------------

    def get(self, tool_id: str) -> ToolEntry:
        """The entry for ``tool_id``; raises :class:`UnknownToolError` with close matches."""
        entry = self.entries.get(tool_id)
        if entry is None:
            why = self.explain(tool_id) if self.explain is not None else None
            if why is not None:
                from .errors import UnavailableToolError

                raise UnavailableToolError(tool_id, why)
            note = self.failed_file_note(tool_id)
            if note is None and self.plugins is not None:
                note = self.plugins.disabled_note(tool_id) or self.plugins.failed_note(tool_id)
            raise UnknownToolError(
                tool_id, difflib.get_close_matches(tool_id, list(self.entries), n=3, cutoff=0.6), note
            )
        return entry

    def all(self) -> list[ToolEntry]:
        """Tools enabled in this environment (``invalid`` included), in order."""
        return [entry for entry in self.entries.values() if entry.gate is None]

    def failed_file_note(self, tool_id: str) -> str | None:
        """Why ``tool_id`` may be missing: the tool file that would give it (``NAME.py`` for ``NAME`` or
        ``NAME_TOOL``) failed to load, with its error; ``None`` when no such file failed."""
        for record in self.records("file"):
            named = tool_id == record.name or tool_id.startswith(f"{record.name}_")
            if record.status == "failed" and named:
                return f"The tool file {record.location} failed to load: {record.error}"
        return None

    def records(self, kind: str = "file") -> list[PluginRecord]:
        """The records of this generation's sources of one kind (tool files: one per file and build)."""
        return [
            c.record for c in self.contributions.values() if c.record is not None and c.source.kind == kind
        ]

    def definition_steps(self, entry: ToolEntry, model: ModelRef | None) -> Steps[ToolDefinition]:
        """One tool's definition for ``model``, after the ``tool_definition`` hooks (plugin by plugin: one
        that raises loses its own change and is reported; see :meth:`Plugins.call_each`)."""
        output = self._output(entry)
        if self.plugins is not None and self.plugins.has_hook("tool_definition"):
            yield from call_each(
                self.plugins,
                "tool_definition",
                checkpoint=output.checkpoint,
                tool_id=entry.id,
                model=model,
                output=output,
            )
        return ToolDefinition(entry, output)

    def definition(self, entry: ToolEntry, model: ModelRef | None) -> ToolDefinition:
        """:meth:`definition_steps` from sync code."""
        return drive(self.definition_steps(entry, model))

    @staticmethod
    def _output(entry: ToolEntry) -> ToolDefinitionOutput:
        # a copy: hooks may edit the schema in place, and a loaded tool caches its own
        return ToolDefinitionOutput(entry.description, lambda: copy.deepcopy(entry.schema()))

    def safe_definition_steps(
        self, entry: ToolEntry, model: ModelRef | None, *, schema: bool = False
    ) -> Steps[ToolDefinition | None]:
        """:meth:`definition_steps`, or ``None`` (the failure recorded and reported) when the tool cannot
        be described (its module fails to import, say). ``schema=True`` makes the JSON Schema now too, so
        that parameters without one fail here, for this tool alone, rather than when the schema is read."""
        try:
            definition = yield from self.definition_steps(entry, model)
            if schema:
                definition.parameters  # noqa: B018 - made now, so that a failure is this tool's alone
            return definition
        except Exception as error:
            self._undescribable(entry, error)
            return None

    def _undescribable(self, entry: ToolEntry, error: Exception) -> None:
        from .plugins import describe_exception

        text = describe_exception(error)
        entry.gate = f"failed to load: {text}"
        contribution = self.contributions.get(entry.source_key)
        if contribution is not None and contribution.record is not None:
            contribution.record.fail(f"tool {entry.id}: {text}")
        if self.plugins is not None:
            self.plugins.warn(f"tool {entry.id} ({entry.source.describe()}) failed to load: {text}")
