"""opencode-tools: the tool layer of the OpenCode coding agent, in Python.

The public API is re-exported here and imported lazily, so ``import opencode_cli`` costs almost nothing::

    from opencode_cli import tool, ToolContext

    @tool
    def shout(text: str, ctx: ToolContext) -> str:
        \"\"\"Repeat the text in capitals.\"\"\"
        return text.upper()
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
#: The distribution the plugin API comes with (:data:`opencode_cli.compat.DISTRIBUTION`; here so that the
#: table of built-in plugins names it without importing :mod:`opencode_cli.compat`).
DISTRIBUTION = "opencode-tools"

_EXPORTS = {
    "tool": "opencode_cli.contract",
    "define": "opencode_cli.contract",
    "Tool": "opencode_cli.contract",
    "LazyTool": "opencode_cli.contract",
    "ToolResult": "opencode_cli.results",
    "ToolSource": "opencode_cli.toolspec",
    "ToolSpec": "opencode_cli.toolspec",
    "Toolbox": "opencode_cli.toolbox",
    "Attachment": "opencode_cli.results",
    "ToolContext": "opencode_cli.context",
    "AbortSignal": "opencode_cli.context",
    "PermissionRequest": "opencode_cli.context",
    "PermissionService": "opencode_cli.permission",
    "hookimpl": "opencode_cli.hookspecs",
    "Project": "opencode_cli.project",
    "Session": "opencode_cli.session",
    "ToolCall": "opencode_cli.session",
    "ToolPart": "opencode_cli.session",
    "Decision": "opencode_cli.session",
    "Prompt": "opencode_cli.session",
    "WireTool": "opencode_cli.session",
    "Rule": "opencode_cli.permission",
    "MetadataSink": "opencode_cli.context",
    "QuestionAsker": "opencode_cli.tools._question:Asker",
    "render_tools": "opencode_cli.wire:render",
    "parse_calls": "opencode_cli.wire",
    "tool_result": "opencode_cli.wire:result",
    "tool_media": "opencode_cli.wire:media",
    "WireError": "opencode_cli.wire",
    "Watcher": "opencode_cli.watch",
    "ChangeReport": "opencode_cli.watch",
    "Service": "opencode_cli.services",
    "Source": "opencode_cli.sources",
    "ModelRef": "opencode_cli.modelref",
    "OpencodeError": "opencode_cli.errors",
    "ToolError": "opencode_cli.errors",
    "InvalidArgumentsError": "opencode_cli.errors",
    "DeniedError": "opencode_cli.errors",
    "RejectedError": "opencode_cli.errors",
    "CorrectedError": "opencode_cli.errors",
    "ConfigError": "opencode_cli.errors",
    "UnknownToolError": "opencode_cli.errors",
    "Field": "pydantic",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from pydantic import Field

    from .context import AbortSignal, MetadataSink, ToolContext
    from .contract import LazyTool, Tool, define, tool
    from .errors import (
        ConfigError,
        CorrectedError,
        DeniedError,
        InvalidArgumentsError,
        OpencodeError,
        RejectedError,
        ToolError,
        UnknownToolError,
    )
    from .hookspecs import hookimpl
    from .modelref import ModelRef
    from .permission import PermissionService, Rule
    from .permission import Request as PermissionRequest
    from .project import Project
    from .results import Attachment, ToolResult
    from .services import Service
    from .session import Decision, Prompt, Session, ToolCall, ToolPart, WireTool
    from .sources import Source
    from .toolbox import Toolbox
    from .tools._question import Asker as QuestionAsker
    from .toolspec import ToolSource, ToolSpec
    from .watch import ChangeReport, Watcher
    from .wire import WireError, parse_calls
    from .wire import media as tool_media
    from .wire import render as render_tools
    from .wire import result as tool_result


def _lazy_export(exports: dict[str, str], namespace: dict[str, Any], name: str, missing: str) -> Any:
    """The value a module that re-exports lazily (this one, :mod:`opencode_cli.plugin`) gives for
    ``name``: imported from where ``exports`` says (``"module"`` or ``"module:attribute"``) and kept in
    the module's ``namespace``; ``AttributeError(missing)`` for a name it does not export."""
    where = exports.get(name)
    if where is None:
        raise AttributeError(missing)
    module, _, attribute = where.partition(":")  # "module:attribute" when exported under another name
    value = getattr(import_module(module), attribute or name)
    namespace[name] = value
    return value


def __getattr__(name: str) -> Any:
    return _lazy_export(_EXPORTS, globals(), name, f"module 'opencode_cli' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
