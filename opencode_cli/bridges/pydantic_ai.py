"""pydantic-ai toolsets as tools of ours (imported only when ``[pydantic_ai]`` names some).

``[pydantic_ai] toolsets = ["package.module:attribute"]`` names a
:class:`~pydantic_ai.toolsets.FunctionToolset`, or any :class:`~pydantic_ai.toolsets.AbstractToolset`
whose leaves are function toolsets (a prefixed, filtered, renamed or combined one); a toolset with other
leaves (an MCP server, say) is refused with the reason. Each of its tools is a tool of ours:

* its definition (name, description, JSON Schema) is what the toolset's ``get_tools`` gives, so a tool's
  ``prepare`` and a wrapper's renaming apply; the ``RunContext`` parameter is hidden, as it is there;
* a call asks the toolset for its tools with the call's ``RunContext`` (``deps`` and ``model`` are
  ``None``: the tool runs outside an agent run; ``tool_call_id`` and ``tool_name`` are the call's), checks
  the arguments with the tool's own validator (defaults filled in), and awaits ``call_tool`` on the
  caller's loop (pydantic-ai runs a sync function in a thread of its own);
* ``ModelRetry`` is the call's error, with its message; a ``ToolReturn`` gives the text of its return
  value, its metadata and its binary content as attachments; ``BinaryContent`` is an attachment.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic_ai import BinaryContent, ModelRetry, RunContext, ToolReturn
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset
from pydantic_ai.usage import RunUsage

from .. import results
from ..errors import ToolError
from . import BridgedTool, BridgeError, data_attachment, import_object, json_text, json_value, names, source

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..toolspec import ToolSource


def _run_context(**fields: Any) -> RunContext[None]:
    """A ``RunContext`` for a call outside an agent run."""
    return RunContext(deps=None, model=None, usage=RunUsage(), **fields)  # type: ignore[arg-type]


class PydanticAiTool(BridgedTool):
    """One tool of a pydantic-ai toolset."""

    def __init__(
        self,
        toolset: AbstractToolset[Any],
        name: str,
        description: str,
        schema: dict[str, Any],
        origin: ToolSource,
    ):
        super().__init__(name, description, schema, origin)
        self.toolset = toolset

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """Get the tool for this call's ``RunContext``, validate with its validator, and call it."""
        run = _run_context(tool_call_id=ctx.call_id, tool_name=self.id)
        listed = await self.toolset.get_tools(run)
        tool = listed.get(self.id)
        if tool is None:
            raise ToolError(f"The toolset no longer has a tool named {self.id}.")
        try:
            validated = tool.args_validator.validate_python(args)
        except Exception as error:  # pydantic's ValidationError: its own text, which names the field
            raise ToolError(f"The {self.id} tool was called with invalid arguments: {error}") from None
        try:
            value = await self.toolset.call_tool(self.id, validated, run, tool)
        except ModelRetry as retry:
            raise ToolError(retry.message) from None
        return result_of(value)


def result_of(value: Any) -> results.ToolResult:
    """What a pydantic-ai tool returned, as our result."""
    if isinstance(value, BinaryContent):
        return results.ToolResult(attachments=[_attachment(value)])
    if not isinstance(value, ToolReturn):
        return results.ToolResult(output=json_text(value))
    content = value.content if isinstance(value.content, list) else [value.content] if value.content else []
    attachments = [_attachment(each) for each in content if isinstance(each, BinaryContent)]
    texts = [json_text(each) for each in content if not isinstance(each, BinaryContent)]
    output = "\n".join([json_text(value.return_value), *texts])
    metadata = {} if value.metadata is None else {"metadata": json_value(value.metadata)}
    return results.ToolResult(output=output, metadata=metadata, attachments=attachments)


def _attachment(content: BinaryContent) -> results.Attachment:
    return data_attachment(content.data, content.media_type)


def _leaves(toolset: AbstractToolset[Any]) -> list[AbstractToolset[Any]]:
    """The toolsets ``toolset`` is made of (those that list and call tools themselves)."""
    found: list[AbstractToolset[Any]] = []
    toolset.apply(found.append)
    return found


def _listed(toolset: AbstractToolset[Any]) -> dict[str, Any]:
    """The toolset's tools, from its ``get_tools`` (a coroutine: run to its end on a loop of its own in a
    thread of its own, whether or not this thread runs a loop; a function toolset's listing does no I/O)."""
    got: dict[str, Any] = {}
    failed: list[BaseException] = []

    def work() -> None:
        try:
            got.update(asyncio.run(toolset.get_tools(_run_context())))
        except BaseException as error:
            failed.append(error)

    thread = threading.Thread(target=work, name="pydantic-ai toolset listing")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return got


def tools(config: Mapping[str, Any]) -> tuple[list[PydanticAiTool], list[str]]:
    """The tools of the toolsets ``config`` (the ``[pydantic_ai]`` table) names, with the problems found."""
    found: list[PydanticAiTool] = []
    problems: list[str] = []
    for path in names(config.get("toolsets"), "[pydantic_ai] toolsets"):
        try:
            toolset = import_object(path)
            if not isinstance(toolset, AbstractToolset):
                raise BridgeError(f"not a pydantic-ai toolset ({type(toolset).__name__})")
            others = sorted(
                {type(leaf).__name__ for leaf in _leaves(toolset) if not isinstance(leaf, FunctionToolset)}
            )
            if others:
                raise BridgeError(
                    f"only toolsets of plain functions are bridged; this one holds {', '.join(others)}"
                )
            origin = source("pydantic_ai", path)
            for name, tool in _listed(toolset).items():
                definition = tool.tool_def
                found.append(
                    PydanticAiTool(
                        toolset,
                        name,
                        definition.description or "",
                        dict(definition.parameters_json_schema),
                        origin,
                    )
                )
        except Exception as error:
            text = str(error) if isinstance(error, BridgeError) else f"{type(error).__name__}: {error}"
            problems.append(f"[pydantic_ai] toolsets: {path}: {text}")
    return found, problems
