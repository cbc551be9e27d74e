"""What a model is told about a tool: :class:`ToolSpec`, and where the tool came from: :class:`ToolSource`.

Every way of declaring a tool (``@tool``, a :class:`~opencode_cli.contract.Tool` subclass, a
:class:`~opencode_cli.toolbox.Toolbox`, and the built-ins' ``define``) produces one ``ToolSpec``, and
everything that shows a tool to a model or a person (the registry's definitions, ``tools list`` and
``inspect``, the wire formats, ``mcp serve``) reads it. It is a frozen value: a change (a tool file
giving a tool its file's name, a source stamping where the tool came from) makes a new one with
:meth:`ToolSpec.replace`.

A spec knows how to make its description and its parameters, and makes each on first read only: listing
tools reads descriptions without making a schema (so without importing pydantic), and a built-in's schema
comes from its recorded copy without importing the tool's module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from .record import Value


class ToolSource(Value):
    """Where a tool came from: a built-in, a tool file, an installed plugin, an MCP server, or another
    ecosystem's tools bridged by a built-in plugin (``bridge``: ``name`` is the ecosystem, ``origin`` the
    package or import path its tools come from). A frozen value (:class:`~opencode_cli.record.Value`)."""

    __slots__ = ("kind", "name", "origin", "path", "version")
    _fields = ("kind", "name", "version", "path", "origin")

    kind: Literal["builtin", "file", "plugin", "mcp", "bridge"]
    name: str
    version: str | None
    path: str | None
    origin: str | None

    def __init__(
        self,
        kind: Literal["builtin", "file", "plugin", "mcp", "bridge"],
        name: str = "opencode",
        version: str | None = None,
        path: str | None = None,
        origin: str | None = None,
    ) -> None:
        self._set(kind, name, version, path, origin)

    def describe(self, within: str | None = None) -> str:
        """One short human phrase, e.g. ``built-in``, ``file .opencode/tool/x.py``, ``plugin demo 1.0``,
        ``llm: llm_tools_sqlite``; a tool file inside the folder ``within`` (a project's root) is named
        relative to it."""
        if self.kind == "builtin":
            return "built-in"
        if self.kind == "bridge":
            return f"{self.name}: {self.origin}"
        if self.kind == "file":
            path = self.path or ""
            if within and path.startswith(within.rstrip("/") + "/"):
                path = path[len(within.rstrip("/")) + 1 :]
            return f"file {path}"
        if self.kind == "mcp":
            return f"mcp {self.name}"
        return f"plugin {self.name}" + (f" {self.version}" if self.version else "")

    def as_dict(self) -> dict[str, Any]:
        """JSON shape; keys that are ``None`` are left out."""
        return {k: v for k, v in zip(self._fields, self._values(), strict=True) if v is not None}


#: The source of a tool nobody stamped (one made in a script and run directly).
UNKNOWN = ToolSource("plugin", name="unknown")


class ToolSpec:
    """One tool as a model is told about it: its ``id``, its ``description`` and its ``parameters`` (the
    JSON Schema of its arguments, normalised as OpenCode sends them), with its ``source``.

    ``describe`` and ``make_parameters`` make the description and the schema; each is called once, on the
    first read of :attr:`description` or :attr:`parameters`. A spec is frozen (setting an attribute raises
    :class:`AttributeError`); consumers that change a schema (the ``tool_definition`` hook, the provider
    profiles) change a deep copy of :attr:`parameters`. (A plain class with slots, not a dataclass: every
    command defines it, and this costs a fraction.)
    """

    __slots__ = ("_description", "_parameters", "describe", "id", "make_parameters", "source")

    id: str
    describe: Callable[[], str]
    make_parameters: Callable[[], dict[str, Any]]
    source: ToolSource
    _description: str | None  # the description once made
    _parameters: dict[str, Any] | None  # the schema once made

    def __init__(
        self,
        id: str,
        describe: Callable[[], str],
        make_parameters: Callable[[], dict[str, Any]],
        source: ToolSource = UNKNOWN,
    ) -> None:
        for name, value in (
            ("id", id),
            ("describe", describe),
            ("make_parameters", make_parameters),
            ("source", source),
            ("_description", None),
            ("_parameters", None),
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a ToolSpec is frozen: use replace({name}=...) for one with another {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a ToolSpec is frozen")

    def __repr__(self) -> str:
        return f"ToolSpec(id={self.id!r}, source={self.source!r})"

    @property
    def description(self) -> str:
        """What the model reads about the tool (made on first read)."""
        made = self._description
        if made is None:
            made = self.describe() or ""
            object.__setattr__(self, "_description", made)
        return made

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (made on first read; shared: copy it before changing it)."""
        made = self._parameters
        if made is None:
            made = self.make_parameters()
            object.__setattr__(self, "_parameters", made)
        return made

    def replace(self, **changes: Any) -> ToolSpec:
        """A new spec with some of ``id``, ``describe``, ``make_parameters`` and ``source`` replaced; what
        was made already, and is not made by a replaced field, is kept."""
        fields = {name: getattr(self, name) for name in ("id", "describe", "make_parameters", "source")}
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"ToolSpec has no field {', '.join(sorted(unknown))}")
        new = ToolSpec(**{**fields, **changes})
        if "describe" not in changes:
            object.__setattr__(new, "_description", self._description)
        if "make_parameters" not in changes:
            object.__setattr__(new, "_parameters", self._parameters)
        return new

    def as_dict(self) -> dict[str, Any]:
        """``{"id", "description", "parameters"}``: the spec as JSON (the schema is made)."""
        return {"id": self.id, "description": self.description, "parameters": self.parameters}
