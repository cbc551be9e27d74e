"""simonw/llm's tool plugins as tools of ours (imported only when an llm tool is built or a toolbox made).

llm's plugins are pluggy plugins of the ``llm`` entry-point group with a ``register_tools(register)`` hook,
which registers :class:`llm.Tool` values (a function with a name, a description and a JSON Schema) and
:class:`llm.Toolbox` classes (a class whose methods are tools, made with constructor arguments). Each
installed plugin is loaded here on a plugin manager of its own (:func:`registered`): llm's model plugins
and its default ones (``llm_time``, ``llm_version``, which come with llm rather than a plugin) are not
loaded. What the plugins offer is kept in a catalogue (:mod:`opencode_cli.builtin.llm`), so that listing
their tools imports neither llm nor them. Then:

* each plain tool of an installed plugin is a tool under its llm name;
* a toolbox is offered once configured in llm's own spelling (what ``llm -T`` takes),
  ``[llm] toolboxes = ['SQLite("data.db")']``, made with :func:`llm.utils.instantiate_from_spec`; each of
  its methods (and each tool its ``prepare()`` adds with ``add_tool()``) is a tool named as llm names it,
  ``SQLite_query``. ``prepare()`` runs when the tools are built, ``prepare_async()`` before the toolbox's
  first call (on the caller's loop; tools it adds are not listed: the list was made before). A toolbox is
  made, prepared and called in a thread of its own, as llm uses one from the thread that made it;
* a sync implementation runs in one of the project's worker threads, an async one on the caller's loop; an
  implementation with an ``llm_tool_call`` parameter gets the :class:`llm.ToolCall` (its id is the call's);
* a result that is not text is JSON, as llm sends it; a :class:`llm.ToolOutput`'s attachments are the
  result's attachments; an exception is the call's error.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import mimetypes
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import llm
import llm.hookspecs
import pluggy
from llm.utils import instantiate_from_spec

from .. import results
from ..errors import ToolError
from . import BridgedTool, data_attachment, json_text, source
from .thread import OwnThread

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..entrypoints import EntryPoint
    from ..toolspec import ToolSource


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


def _takes_tool_call(implementation: Callable[..., Any] | None) -> bool:
    """Whether llm passes the implementation its :class:`llm.ToolCall` (an ``llm_tool_call`` parameter)."""
    if implementation is None:
        return False
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


def registered(entry: EntryPoint) -> dict[str, llm.Tool | type[llm.Toolbox]]:
    """What one llm plugin registers through its ``register_tools`` hook, by the name llm gives each (a
    tool's name, a toolbox's class name), as ``llm.get_tools()`` would list it: loaded on a plugin manager
    of its own, so that llm's other plugins (its model plugins, its default ones) are not loaded. Made once
    per process for each plugin."""
    found = _REGISTERED.get(entry)
    if found is not None:
        return found
    found = {}
    plugin = entry.name

    def register(tool: Any, name: str | None = None) -> None:
        if isinstance(tool, type):
            if not issubclass(tool, llm.Toolbox):
                raise TypeError(f"Toolbox classes must inherit from llm.Toolbox, {tool.__name__} does not.")
            tool.plugin = plugin  # type: ignore[attr-defined]
            tool.name = name or tool.__name__
            found[tool.name] = tool
            return
        made = tool if isinstance(tool, llm.Tool) else llm.Tool.function(tool, name=name)
        if name:
            made.name = name
        made.plugin = plugin
        found[made.name] = made

    manager = pluggy.PluginManager("llm")
    manager.add_hookspecs(llm.hookspecs)
    manager.register(entry.load(), name=plugin)
    manager.hook.register_tools(register=register)
    _REGISTERED[entry] = found
    return found


#: What each llm plugin registered, by entry point (:func:`registered`).
_REGISTERED: dict[EntryPoint, dict[str, Any]] = {}


def survey(entries: Iterable[EntryPoint]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """What each plugin offers, as the catalogue keeps it (:mod:`opencode_cli.builtin.llm`): its plain tools
    (name, description, schema) and the class names of its toolboxes; with the problems found."""
    listed: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for entry in entries:
        try:
            offered = registered(entry)
        except Exception as error:  # a plugin that fails to import, or to register
            problems.append(f"llm plugin {entry.name}: {type(error).__name__}: {error}")
            continue
        tools, toolboxes = [], []
        for name, value in offered.items():
            if isinstance(value, type):
                toolboxes.append(name)
            elif value.implementation is None:
                problems.append(f"llm tool {name} ({entry.name}) has no implementation")
            else:
                made = LlmTool(value, source("llm", entry.name, entry.version))
                tools.append({"name": made.id, "description": made.description, "schema": made.json_schema})
        listed[entry.name] = {"tools": tools, "toolboxes": toolboxes}
    return listed, problems


def plain_tool(entry: EntryPoint, name: str) -> LlmTool:
    """The plugin's plain tool ``name``, built (what a catalogued tool is when first needed)."""
    tool = registered(entry).get(name)
    if not isinstance(tool, llm.Tool):
        raise ToolError(f"The llm plugin {entry.name} no longer registers a tool named {name}.")
    return LlmTool(tool, source("llm", entry.name, entry.version))


def toolbox_tools(
    entries: Iterable[EntryPoint], specs: Iterable[str], known: Iterable[str]
) -> tuple[list[LlmTool], list[str]]:
    """The tools of the toolboxes ``specs`` name (llm's spelling, ``SQLite("data.db")``), of the plugins
    ``entries``; each toolbox made, prepared and called in a thread of its own. ``known``: the toolboxes
    of every installed plugin (named when a spec names none of them)."""
    entries = list(entries)
    toolboxes = {
        name: value
        for entry in entries
        for name, value in registered(entry).items()
        if isinstance(value, type)
    }
    versions = {entry.name: entry.version for entry in entries}
    found: list[LlmTool] = []
    problems: list[str] = []
    for spec in specs:
        thread = OwnThread(f"llm toolbox {spec}")
        try:
            box = thread.call(functools.partial(_made, toolboxes, spec))
        except Exception as error:  # a typo, a constructor that raises, a prepare() that fails
            thread.stop()
            names = ", ".join(sorted(known)) or "none"
            problems.append(f"[llm] toolboxes: {spec}: {type(error).__name__}: {error} (toolboxes: {names})")
            continue
        weakref.finalize(box, thread.stop)
        plugin = getattr(box, "plugin", None) or type(box).__module__
        origin = source("llm", plugin, versions.get(plugin))
        found.extend(LlmTool(each, origin, box, thread) for each in box.tools())
    return found, problems


def _made(toolboxes: dict[str, type], spec: str) -> llm.Toolbox:
    """The toolbox ``spec`` names, made and prepared."""
    box = instantiate_from_spec(toolboxes, spec)
    if not box._prepared:
        box.prepare()
        box._prepared = True
    return box
