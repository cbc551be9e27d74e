"""Bridges: the tools of other Python ecosystems as tools of ours.

Three built-in plugins (:mod:`opencode_cli.builtin.llm`, ``langchain`` and ``pydantic_ai``) register, through
the same ``register_tools`` hook as every source, the tools of simonw/llm's tool plugins
(:mod:`.llm`), LangChain tools and toolkits (:mod:`.langchain`) and pydantic-ai toolsets
(:mod:`.pydantic_ai`). Each bridged tool is a :class:`BridgedTool`: a :class:`~opencode_cli.contract.Tool`
with the other ecosystem's JSON Schema, stamped with a ``bridge`` :class:`~opencode_cli.toolspec.ToolSource`
(``llm: llm_tools_sqlite``), so the registry, the policy, the call pipeline (permissions, hooks, doom loop,
truncation), ``mcp serve`` and the adapters treat it as any other tool.

The plugins import their ecosystem only when it is installed and configured, and only when tools are built;
this package imports nothing of them. What a project configures is read from the generation's config (the
trusted view: a project's ``[llm]``, ``[langchain]`` and ``[pydantic_ai]`` tables name code, and are held
back until the project is trusted).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..builtin import configured, source
from ..contract import Tool
from ..errors import ConfigError
from ..results import Attachment

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..project import Project
    from ..toolspec import ToolSource

__all__ = [
    "BridgeError",
    "BridgedTool",
    "data_attachment",
    "import_object",
    "json_text",
    "register",
    "settings",
    "source",
]


class BridgeError(ConfigError):
    """What a bridge could not make of its configuration or of a plugin (one line per problem). Raised by a
    bridge's ``register_tools`` after it registered every tool it could: its plugin is marked failed with
    this reason, and the tools it did register are kept."""


def register(register_tool: Callable[[Any], None], made: tuple[Sequence[Any], Sequence[str]]) -> None:
    """Register a bridge's tools (``made``: the tools and the problems found making them), then raise
    :class:`BridgeError` for the problems: the plugin is marked failed, and keeps the tools it registered."""
    found, problems = made
    for each in found:
        register_tool(each)
    if problems:
        raise BridgeError("; ".join(problems))


def settings(project: Project | None, table: str) -> Mapping[str, Any]:
    """The ``[table]`` of the config of the generation being built (its trusted view); empty when there is
    none."""
    if project is None:
        return {}
    value = configured(project, table)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise BridgeError(f"[{table}] must be a table, not {type(value).__name__}")
    return value


def names(value: Any, key: str) -> list[str]:
    """``[table] key``: a list of strings (an absent key is an empty list)."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise BridgeError(f"{key} must be a list of strings")
    return value


def import_object(path: str) -> Any:
    """The object an import path names: ``package.module:attribute`` (``attribute`` may be dotted)."""
    module_name, colon, attributes = path.partition(":")
    if not colon or not module_name.strip() or not attributes.strip():
        raise BridgeError(f"{path!r} is not an import path (write it as 'package.module:attribute')")
    try:
        target: Any = importlib.import_module(module_name.strip())
    except ImportError as error:
        raise BridgeError(f"{path}: cannot import {module_name.strip()}: {error}") from None
    for part in attributes.strip().split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise BridgeError(
                f"{path}: {module_name.strip()} has no attribute {attributes.strip()}"
            ) from None
    return target


def json_text(value: Any) -> str:
    """A tool's non-text result as the model reads it: JSON (what cannot be encoded, by its ``repr``)."""
    return value if isinstance(value, str) else json.dumps(value, default=repr, ensure_ascii=False)


def json_value(value: Any) -> Any:
    """``value`` as plain JSON data (kept in a result's metadata, which every wire carries)."""
    return json.loads(json.dumps(value, default=repr))


def data_attachment(content: bytes, mime: str, filename: str | None = None) -> Attachment:
    """A file handed to the model with a result, as a ``data:`` URL."""
    import base64  # only when a bridged tool returns a file: listing the bridges' tools needs none

    return Attachment(
        mime=mime, url=f"data:{mime};base64,{base64.b64encode(content).decode()}", filename=filename
    )


class BridgedTool(Tool):
    """A tool of another ecosystem: its name, description and JSON Schema, and :meth:`call`, which runs it
    on arguments that passed the schema. Subclasses (one per ecosystem) give :meth:`call`; what it returns
    is a tool's result as for any tool (text, a :class:`~opencode_cli.results.ToolResult`…), and an
    exception it raises is the call's error."""

    def __init__(
        self, id: str, description: str, schema: dict[str, Any], source: ToolSource, **options: Any
    ) -> None:
        super().__init__(id, description, json_schema=_object_schema(schema), source=source, **options)

    async def execute(self, params: Any, ctx: ToolContext) -> Any:
        """Run :meth:`call` on the validated arguments."""
        return await self.call(dict(params), ctx)

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """Run the other ecosystem's tool (subclasses)."""
        raise NotImplementedError


def _object_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """A tool's parameters as an object schema (some ecosystems leave ``type`` or ``properties`` out)."""
    made = dict(schema or {})
    made.setdefault("type", "object")
    made.setdefault("properties", {})
    return made
