"""The plugin API: everything a plugin, or a tool file, may import from opencode-tools, and its version.

::

    from opencode_cli.plugin import Field, ToolContext, hookimpl, tool

The names below, and the test kit :mod:`opencode_cli.testing`, are the whole public surface for plugin
authors; the hooks themselves are the contract of :mod:`opencode_cli.hookspecs`. Every other module of
``opencode_cli`` is internal and may change in any release. The names that ``opencode_cli`` itself also
exports (``tool``, ``Toolbox``, ``hookimpl``…) are the same objects, so ``from opencode_cli import tool``
is this API too.

The plugin API's version is the distribution's (:data:`API_VERSION`, ``opencode --version``), and its
series is the promise: a release within a series only adds to this surface (a part it means to remove
is deprecated first, with a warning naming the replacement); a release that changes or removes a part
starts a new series, a new major version (a new minor one while the major is 0). A plugin declares the
series it is built for as a dependency, ``opencode-tools>=0.1,<0.2``; pip checks it when installing and
opencode when loading (:mod:`opencode_cli.compat`). Importing this module costs nothing; each name is
imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import __version__, _lazy_export

#: The version of the plugin API: the distribution's version (see the module's docstring for its series).
API_VERSION = __version__

_EXPORTS = {
    # declaring tools
    "tool": "opencode_cli.contract",
    "define": "opencode_cli.contract",
    "Tool": "opencode_cli.contract",
    "LazyTool": "opencode_cli.contract",
    "Toolbox": "opencode_cli.toolbox",
    "ToolSpec": "opencode_cli.toolspec",
    "ToolSource": "opencode_cli.toolspec",
    "Field": "pydantic",
    # running: the context a tool gets, what it returns, the errors it raises
    "ToolContext": "opencode_cli.context",
    "AbortSignal": "opencode_cli.context",
    "ToolResult": "opencode_cli.results",
    "Attachment": "opencode_cli.results",
    "ToolError": "opencode_cli.errors",
    "InvalidArgumentsError": "opencode_cli.errors",
    "CorrectedError": "opencode_cli.errors",
    "DeniedError": "opencode_cli.errors",
    "RejectedError": "opencode_cli.errors",
    "Service": "opencode_cli.services",
    "ProcessService": "opencode_cli.services",
    "data_dir": "opencode_cli.paths",
    # the hooks and what they pass
    "hookimpl": "opencode_cli.hookspecs",
    "PluginDeprecationWarning": "opencode_cli.hookspecs",
    "Project": "opencode_cli.project",
    "Flags": "opencode_cli.flags",
    "ModelRef": "opencode_cli.modelref",
    "RegisterTool": "opencode_cli.registry",
    "ToolDefinitionOutput": "opencode_cli.registry",
    "PermissionRequest": "opencode_cli.permission:Request",
    "AskOutput": "opencode_cli.permission",
    "ShellEnvOutput": "opencode_cli.context",
    # model providers (register_providers) and the chat hooks
    "RegisterProvider": "opencode_cli.models",
    "Provider": "opencode_cli.models",
    "ProviderFactory": "opencode_cli.models",
    "ChatModel": "opencode_cli.models",
    "Message": "opencode_cli.models",
    "Finish": "opencode_cli.models",
    "TextDelta": "opencode_cli.models",
    "ToolCallRequest": "opencode_cli.models",
    "ToolCalls": "opencode_cli.models",
    "ToolCallStarted": "opencode_cli.models",
    "ModelError": "opencode_cli.models",
    "ChatParams": "opencode_cli.models.hooks",
    "CompactingOutput": "opencode_cli.models.hooks",
    "TextPart": "opencode_cli.transcript",
}

__all__ = ["API_VERSION", *sorted(_EXPORTS)]

if TYPE_CHECKING:
    from pydantic import Field

    from .context import AbortSignal, ShellEnvOutput, ToolContext
    from .contract import LazyTool, Tool, define, tool
    from .errors import CorrectedError, DeniedError, InvalidArgumentsError, RejectedError, ToolError
    from .flags import Flags
    from .hookspecs import PluginDeprecationWarning, hookimpl
    from .modelref import ModelRef
    from .models import (
        ChatModel,
        Finish,
        Message,
        ModelError,
        Provider,
        ProviderFactory,
        RegisterProvider,
        TextDelta,
        ToolCallRequest,
        ToolCalls,
        ToolCallStarted,
    )
    from .models.hooks import ChatParams, CompactingOutput
    from .paths import data_dir
    from .permission import AskOutput
    from .permission import Request as PermissionRequest
    from .project import Project
    from .registry import RegisterTool, ToolDefinitionOutput
    from .results import Attachment, ToolResult
    from .services import ProcessService, Service
    from .toolbox import Toolbox
    from .toolspec import ToolSource, ToolSpec
    from .transcript import TextPart


def __getattr__(name: str) -> Any:
    missing = f"module 'opencode_cli.plugin' has no attribute {name!r} (the plugin API: {__all__})"
    return _lazy_export(_EXPORTS, globals(), name, missing)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
