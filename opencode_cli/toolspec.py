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

import dataclasses
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any, Literal


@dataclass(frozen=True)
class ToolSource:
    """Where a tool came from: a built-in, a tool file, an installed plugin, or an MCP server."""

    kind: Literal["builtin", "file", "plugin", "mcp"]
    name: str = "opencode"
    version: str | None = None
    path: str | None = None

    def describe(self) -> str:
        """One short human phrase, e.g. ``built-in``, ``file .opencode/tool/x.py``, ``plugin demo 1.0``."""
        if self.kind == "builtin":
            return "built-in"
        if self.kind == "file":
            return f"file {self.path}"
        if self.kind == "mcp":
            return f"mcp {self.name}"
        return f"plugin {self.name}" + (f" {self.version}" if self.version else "")

    def as_dict(self) -> dict[str, Any]:
        """JSON shape; keys that are ``None`` are left out."""
        return {k: v for k, v in asdict(self).items() if v is not None}


#: The source of a tool nobody stamped (one made in a script and run directly).
UNKNOWN = ToolSource("plugin", name="unknown")

#: The parts of a spec made on first read, and the field each is made from.
_MADE = {"description": "describe", "parameters": "make_parameters"}


@dataclass(frozen=True, eq=False)
class ToolSpec:
    """One tool as a model is told about it: its ``id``, its ``description`` and its ``parameters`` (the
    JSON Schema of its arguments, normalised as OpenCode sends them), with its ``source``.

    ``describe`` and ``make_parameters`` make the description and the schema; each is called once, on the
    first read of :attr:`description` or :attr:`parameters`. Consumers that change a schema (the
    ``tool_definition`` hook, the provider profiles) change a deep copy of :attr:`parameters`.
    """

    id: str
    describe: Callable[[], str] = field(repr=False)
    make_parameters: Callable[[], dict[str, Any]] = field(repr=False)
    source: ToolSource = UNKNOWN

    @cached_property
    def description(self) -> str:
        """What the model reads about the tool (made on first read)."""
        return self.describe() or ""

    @cached_property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (made on first read; shared: copy it before changing it)."""
        return self.make_parameters()

    def replace(self, **changes: Any) -> ToolSpec:
        """A new spec with some fields replaced (``id``, ``source``…); what was made already, and is not
        made from a replaced field, is kept."""
        new = dataclasses.replace(self, **changes)
        for made, maker in _MADE.items():
            if made in self.__dict__ and maker not in changes:
                new.__dict__[made] = self.__dict__[made]
        return new

    def as_dict(self) -> dict[str, Any]:
        """``{"id", "description", "parameters"}``: the spec as JSON (the schema is made)."""
        return {"id": self.id, "description": self.description, "parameters": self.parameters}
