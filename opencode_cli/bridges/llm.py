"""simonw/llm's tool plugins as tools of ours (imported only when an ``llm`` plugin is installed).

llm's plugins are pluggy plugins of the ``llm`` entry-point group with a ``register_tools(register)`` hook;
``llm.get_tools()`` gives every registered :class:`llm.Tool` (a function with a name, a description and a
JSON Schema) and :class:`llm.Toolbox` class (a class whose methods are tools, built with constructor
arguments). Here:

* each plain tool of an installed plugin is a tool under its llm name;
* a toolbox is offered once configured in llm's own spelling (what ``llm -T`` takes),
  ``[llm] toolboxes = ['SQLite("data.db")']``, built with :func:`llm.utils.instantiate_from_spec`; each of
  its methods (and each tool its ``prepare()`` adds with ``add_tool()``) is a tool named as llm names it,
  ``SQLite_query``. ``prepare()`` runs when the tools are built, ``prepare_async()`` before the toolbox's
  first call (on the caller's loop; tools it adds are not listed: the list was made before);
* a sync implementation runs in one of the project's worker threads, an async one on the caller's loop; an
  implementation with an ``llm_tool_call`` parameter gets the :class:`llm.ToolCall` (its id is the call's);
* a result that is not text is JSON, as llm sends it; a :class:`llm.ToolOutput`'s attachments are the
  result's attachments; an exception is the call's error.

llm's own default tools (``llm_time``, ``llm_version``) come with llm, not with a plugin, and are left out.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import mimetypes
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import llm
from llm.utils import instantiate_from_spec

from .. import results
from . import BridgedTool, data_attachment, json_text, names, source
from .thread import OwnThread

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..toolspec import ToolSource

#: The prefix of the names of llm's own plugins (its default tools), which no installed package adds.
DEFAULT_PLUGINS = "llm.default_plugins"


class LlmTool(BridgedTool):
    """One :class:`llm.Tool` (of a plugin, or a method of a configured toolbox)."""

    def __init__(
        self,
        tool: llm.Tool,
        origin: ToolSource,
        toolbox: llm.Toolbox | None = None,
        thread: OwnThread | None = None,
    ) -> None:
        implementation = tool.implementation
        description = (tool.description or "").strip()
        super().__init__(tool.name, description, tool.input_schema, origin, execute=implementation)
        self._toolbox = toolbox
        self._thread = thread
        """The toolbox's own thread, where it was made: its sync methods run there (a toolbox may hold
        what only that thread may use, as ``SQLite`` holds a ``sqlite3`` connection)."""
        self._takes_call = _takes_tool_call(implementation)

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """Prepare the toolbox (once), call the implementation, and make a result of what it returns."""
        if self._toolbox is not None:
            await _prepared_async(self._toolbox)
        function: Callable[..., Any] = self._function  # type: ignore[assignment]
        if self._takes_call:
            call = llm.ToolCall(name=self.id, arguments=dict(args), tool_call_id=ctx.call_id)
            function = functools.partial(function, llm_tool_call=call)
        if self._thread is not None and not self._coroutine:
            return result_of(await self._thread.acall(functools.partial(function, **args)))
        return result_of(await self._invoke(function, args, ctx))


def _takes_tool_call(implementation: Callable[..., Any]) -> bool:
    """Whether llm passes the implementation its :class:`llm.ToolCall` (an ``llm_tool_call`` parameter)."""
    try:
        return "llm_tool_call" in inspect.signature(implementation).parameters
    except (TypeError, ValueError):
        return False


#: Per toolbox, the lock its ``prepare_async()`` runs under (once; later calls wait for the first).
_PREPARING: weakref.WeakKeyDictionary[llm.Toolbox, asyncio.Lock] = weakref.WeakKeyDictionary()


async def _prepared_async(box: llm.Toolbox) -> None:
    """Run the toolbox's ``prepare_async()`` once, before its first call."""
    if box._async_prepared:
        return
    lock = _PREPARING.setdefault(box, asyncio.Lock())
    async with lock:
        if not box._async_prepared:
            await box.prepare_async()
            box._async_prepared = True


def result_of(value: Any) -> results.ToolResult:
    """What an llm tool returned, as our result: text (JSON for anything else, as llm sends it), with a
    :class:`llm.ToolOutput`'s attachments."""
    attachments = []
    if isinstance(value, llm.ToolOutput):
        attachments = [attachment_of(each) for each in value.attachments]
        value = value.output
    return results.ToolResult(output=json_text(value), attachments=attachments)


def attachment_of(attachment: llm.Attachment) -> results.Attachment:
    """An :class:`llm.Attachment` (content, a path, or a URL) as ours (a ``data:`` URL for bytes)."""
    mime = attachment.type
    if attachment.content is not None or attachment.path is not None:
        content = (
            attachment.content if attachment.content is not None else Path(attachment.path or "").read_bytes()
        )
        return data_attachment(
            content, mime or attachment.resolve_type(), attachment.path and Path(attachment.path).name
        )
    url = attachment.url or ""
    return results.Attachment(
        mime=mime or mimetypes.guess_type(url)[0] or "application/octet-stream", url=url
    )


def tools(installed: Mapping[str, str | None], config: Mapping[str, Any]) -> tuple[list[LlmTool], list[str]]:
    """The tools of the installed llm plugins (``installed``: their entry-point names, each with its
    distribution's version) and of the toolboxes ``config`` (the ``[llm]`` table) names, with the problems
    found (one line each)."""
    plugins = versions = installed
    found: list[LlmTool] = []
    problems: list[str] = []
    toolboxes: dict[str, type[llm.Toolbox]] = {}
    for name, registered in llm.get_tools().items():
        plugin = getattr(registered, "plugin", None) or ""
        if plugin.startswith(DEFAULT_PLUGINS) or plugin not in plugins:
            continue
        if isinstance(registered, type):
            toolboxes[name] = registered
        elif registered.implementation is None:
            problems.append(f"llm tool {name} ({plugin}) has no implementation")
        else:
            found.append(LlmTool(registered, source("llm", plugin, versions.get(plugin))))
    for spec in names(config.get("toolboxes"), "[llm] toolboxes"):
        thread = OwnThread(f"llm toolbox {spec}")
        try:
            box = thread.call(functools.partial(_made, toolboxes, spec))
        except Exception as error:  # a typo, a constructor that raises, a prepare() that fails
            thread.stop()
            known = ", ".join(sorted(toolboxes)) or "none"
            problems.append(f"[llm] toolboxes: {spec}: {type(error).__name__}: {error} (toolboxes: {known})")
            continue
        weakref.finalize(box, thread.stop)
        plugin = getattr(box, "plugin", None) or type(box).__module__
        origin = source("llm", plugin, versions.get(plugin))
        found.extend(LlmTool(each, origin, box, thread) for each in box.tools())
    return found, problems


def _made(toolboxes: Mapping[str, type[llm.Toolbox]], spec: str) -> llm.Toolbox:
    """The toolbox ``spec`` names (llm's spelling, ``SQLite("data.db")``), made and prepared."""
    box = instantiate_from_spec(toolboxes, spec)
    if not box._prepared:
        box.prepare()
        box._prepared = True
    return box


def _made(toolboxes: Mapping[str, type[llm.Toolbox]], spec: str) -> llm.Toolbox:
    """The toolbox ``spec`` names (llm's spelling, ``SQLite("data.db")``), made and prepared."""
    box = instantiate_from_spec(toolboxes, spec)
    if not box._prepared:
        box.prepare()
        box._prepared = True
    return box


def _versions() -> dict[str, str]:
    """The version of each llm plugin, by its pluggy name (what ``llm plugins`` shows)."""
    from llm.plugins import pm

    versions = {}
    for plugin, dist in pm.list_plugin_distinfo():
        name = pm.get_name(plugin)
        if name is not None:
            versions[name] = dist.version
    return versions
