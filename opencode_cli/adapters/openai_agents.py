"""OpenCode's tools as OpenAI Agents SDK function tools (``pip install 'opencode-tools[openai-agents]'``).

::

    async with Project(".") as project:
        await project.open()  # connect the configured MCP servers, if any
        with project.session("build", model="openai/gpt-5", prompt=ask) as session:
            agent = agents.Agent(name="coder", tools=function_tools(session))
            result = await agents.Runner.run(agent, "Fix the typo in README.md")

Each tool is a :class:`agents.FunctionTool` whose name, description and schema are what
``session.resolve()`` gives (``strict_json_schema`` only where the session's profile made the schema
strict), and whose invocation hands the model's raw JSON arguments to ``session.dispatch`` (repair,
hooks, permissions through the session's ``prompt``, validation, truncation). The SDK has no retry
signal, so what the model sees next is OpenCode's own text: the output, or the error (invalid arguments,
a denied or rejected permission) for the model to correct. Attachments follow the text as
:class:`agents.ToolOutputImage` (images) or :class:`agents.ToolOutputFileContent`. Each turn's model
response is a step of the session: the doom-loop window never spans two turns.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from ._common import Steps, data_of, require

require("agents", "openai-agents", __name__)

from agents import FunctionTool, ToolOutputFileContent, ToolOutputImage, ToolOutputText
from agents.tool_context import ToolContext

if TYPE_CHECKING:
    from ..results import Attachment
    from ..session import Session, ToolPart, WireTool

__all__ = ["function_tools"]


def function_tools(session: Session) -> list[FunctionTool]:
    """The tools ``session`` offers now, as function tools (the host opens and closes the session)."""
    steps = Steps(session)
    return [_function_tool(session, tool, steps) for tool in session.resolve()]


def _step_of(ctx: ToolContext[Any]) -> tuple[int, int] | None:
    """The model response a call belongs to: the run's usage object and its count of model requests
    (each response of a turn adds one); ``None`` when the SDK gives no usage."""
    usage = getattr(ctx, "usage", None)
    requests = getattr(usage, "requests", None)
    return (id(usage), requests) if isinstance(requests, int) and requests > 0 else None


def _function_tool(session: Session, tool: WireTool, steps: Steps) -> FunctionTool:
    async def invoke(ctx: ToolContext[Any], arguments: str) -> Any:
        from ..session import ToolCall

        steps.enter(_step_of(ctx))
        part = await session.dispatch(ToolCall(tool.name, arguments, id=ctx.tool_call_id))
        return _output(part)

    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=tool.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=bool(tool.strict),
    )


def _output(part: ToolPart) -> Any:
    if part.status != "completed" or not part.attachments:
        return part.text
    return [ToolOutputText(text=part.output), *(_file(attachment) for attachment in part.attachments)]


def _file(attachment: Attachment) -> ToolOutputImage | ToolOutputFileContent:
    if attachment.mime.startswith("image/"):
        return ToolOutputImage(image_url=attachment.url)
    data = data_of(attachment)
    if data is None:
        return ToolOutputFileContent(file_url=attachment.url, filename=attachment.filename)
    return ToolOutputFileContent(file_data=base64.b64encode(data).decode(), filename=attachment.filename)
