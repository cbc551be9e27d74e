"""LangChain tools and toolkits as tools of ours (imported only when ``[langchain]`` names some).

``[langchain] tools = ["package.module:attribute"]`` names a :class:`~langchain_core.tools.BaseTool` (a
``@tool`` function and a ``StructuredTool`` are ones) or a toolkit instance; ``toolkits = [{ path =
"package.module:Class", args = { ... } }]`` names a :class:`~langchain_core.tools.BaseToolkit` class and
its constructor's keyword arguments. Each tool of them is a tool of ours:

* its parameters are its ``tool_call_schema`` (the ``args_schema`` without what LangChain injects);
* a call is LangChain's own ``invoke`` with a tool call (so ``_run``, callbacks, injected arguments and
  ``handle_tool_error`` work as in LangChain), in one of the project's worker threads; a tool with an async
  implementation of its own (``_arun``, a ``coroutine``) is ``ainvoke``-d on the caller's loop;
* a ``ToolException`` — raised, or turned into text by ``handle_tool_error`` or ``handle_validation_error``
  (the tool message's ``status="error"``) — is the call's error; a ``content_and_artifact`` tool's artifact
  is kept in the result's metadata (``artifact``, as JSON);
* a string parameter named like a path (``path``, ``*_path``, ``*_dir``, ``directory``) is judged by the
  ``external_directory`` rule before the call: the location the tool will use (below its ``root_dir`` when
  it has one, as LangChain's file tools do; else the path as given, relative to the working directory) is
  asked about when it lies outside the project. What this does not cover: paths in other parameters, a
  link changed between the ask and the tool's own ``open``, and whatever else the tool touches.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, BaseToolkit, StructuredTool

from .. import results
from ..boundary import assert_external_directory
from ..contract import in_worker
from ..errors import ToolError
from . import BridgedTool, BridgeError, data_attachment, import_object, json_text, json_value, names, source

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..toolspec import ToolSource


class LangchainTool(BridgedTool):
    """One LangChain :class:`BaseTool`."""

    def __init__(self, tool: BaseTool, origin: ToolSource) -> None:
        super().__init__(tool.name, tool.description or "", _schema(tool), origin)
        self.wrapped = tool
        self._native_async = _has_own_async(tool)
        self._paths = [name for name in self.json_schema["properties"] if _path_like(name)]  # type: ignore[index]

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """Judge path-like arguments, then invoke the tool with a tool call; make a result of its message."""
        for name in self._paths:
            value = args.get(name)
            if isinstance(value, str) and value:
                target = self._location(value)
                if target is not None:
                    folder = name.endswith("dir") or name == "directory"
                    await assert_external_directory(ctx, target, kind="directory" if folder else "file")
        call = {"type": "tool_call", "name": self.id, "args": args, "id": ctx.call_id or f"call_{self.id}"}
        if self._native_async:
            message = await self.wrapped.ainvoke(call)
        else:
            message = await in_worker(ctx, self.wrapped.invoke, call)
        return result_of(message)

    def _location(self, value: str) -> str | None:
        """Where the tool will look for ``value``: below its ``root_dir`` when it has one (``None`` when the
        tool will refuse it itself, being outside that root), else the path as given."""
        root = getattr(self.wrapped, "root_dir", None)
        if root is None:
            return os.path.abspath(os.path.expanduser(value))
        try:
            return str(self.wrapped.get_relative_path(value))  # type: ignore[attr-defined]
        except Exception:  # the tool's own jail: it answers with its error
            return None


def _schema(tool: BaseTool) -> dict[str, Any]:
    """The JSON Schema a model is shown for ``tool`` (what LangChain injects left out)."""
    schema = tool.tool_call_schema
    if isinstance(schema, Mapping):
        return dict(schema)
    from ..schema import from_model

    return from_model(schema)


def _has_own_async(tool: BaseTool) -> bool:
    """Whether the tool has an async implementation of its own (else LangChain's ``ainvoke`` would only run
    the sync one in a thread of its own: ours are used instead)."""
    if isinstance(tool, StructuredTool):
        return tool.coroutine is not None
    return type(tool)._arun is not BaseTool._arun


def _path_like(name: str) -> bool:
    """Whether a parameter's name says it is a path."""
    return name in ("path", "directory", "dir") or name.endswith(("_path", "_dir"))


def result_of(message: Any) -> results.ToolResult:
    """A tool message as our result: its text (image blocks as attachments), its artifact in the
    metadata; an ``error`` status is the call's error."""
    if not isinstance(message, ToolMessage):  # a tool that returned a Command or other output of its own
        return results.ToolResult(output=json_text(message))
    output, attachments = _content(message.content)
    if message.status == "error":
        raise ToolError(output)
    metadata = {} if message.artifact is None else {"artifact": json_value(message.artifact)}
    return results.ToolResult(output=output, metadata=metadata, attachments=attachments)


def _content(content: Any) -> tuple[str, list[results.Attachment]]:
    """A message's content: a string, or blocks (text joined; base64 images and files as attachments)."""
    if isinstance(content, str):
        return content, []
    texts, attachments = [], []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif isinstance(block, Mapping) and isinstance(block.get("base64"), str):
            import base64

            mime = str(block.get("mime_type") or "application/octet-stream")
            attachments.append(data_attachment(base64.b64decode(block["base64"]), mime))
        else:
            texts.append(json_text(block))
    return "\n".join(texts), attachments


def tools(config: Mapping[str, Any]) -> tuple[list[LangchainTool], list[str]]:
    """The tools ``config`` (the ``[langchain]`` table) names, with the problems found (one line each)."""
    found: list[LangchainTool] = []
    problems: list[str] = []
    for path in names(config.get("tools"), "[langchain] tools"):
        _collect(path, None, found, problems, "[langchain] tools")
    toolkits = config.get("toolkits") or []
    if not isinstance(toolkits, list):
        raise BridgeError(
            "[langchain] toolkits must be a list of tables ({ path = 'module:Class', args = {...} })"
        )
    for entry in toolkits:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("path"), str):
            problems.append(f"[langchain] toolkits: {entry!r} is not a table with a path")
            continue
        args = entry.get("args") or {}
        if not isinstance(args, Mapping):
            problems.append(f"[langchain] toolkits: {entry['path']}: args must be a table")
            continue
        _collect(entry["path"], args, found, problems, "[langchain] toolkits")
    return found, problems


def _collect(
    path: str, args: Mapping[str, Any] | None, found: list[LangchainTool], problems: list[str], key: str
) -> None:
    """The tools of what ``path`` names (a tool, a toolkit, a list of tools; with ``args``, a toolkit class
    to make with them) into ``found``."""
    try:
        made = import_object(path)
        if args is not None:
            made = made(**args)
        if isinstance(made, BaseToolkit):
            made = made.get_tools()
        each = made if isinstance(made, list | tuple) else [made]
        if not each or not all(isinstance(item, BaseTool) for item in each):
            kinds = ", ".join(sorted({type(item).__name__ for item in each})) or "nothing"
            raise BridgeError(f"not a LangChain tool or toolkit ({kinds})")
        origin = source("langchain", path)
        found.extend(LangchainTool(item, origin) for item in each)
    except Exception as error:
        text = str(error) if isinstance(error, BridgeError) else f"{type(error).__name__}: {error}"
        problems.append(f"{key}: {path}: {text}")
