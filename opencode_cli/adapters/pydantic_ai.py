"""OpenCode's tools as a pydantic-ai toolset (``pip install 'opencode-tools[pydantic-ai]'``).

::

    async with Project(".") as project:
        with project.session("build", model="openai/gpt-5", prompt=ask) as session:
            agent = pydantic_ai.Agent("openai:gpt-5", toolsets=[OpencodeToolset(session)])
            result = await agent.run("Fix the typo in README.md")

The toolset offers what ``session.resolve()`` gives (the tools the agent's permissions leave, with the
schemas shaped for the session's model) and runs every call through ``session.dispatch``:

* arguments that do not fit the tool's schema raise :class:`pydantic_ai.ModelRetry` with OpenCode's
  invalid-arguments text, so the model is asked to correct the call (counted against ``max_retries``);
* any other failure (a denied or rejected permission, a missing file…) is a failed tool result the model
  sees (:class:`pydantic_ai.ToolFailed`), as OpenCode shows a tool's error;
* a result is a :class:`pydantic_ai.ToolReturn` of the output text, with the attachments as
  :class:`pydantic_ai.BinaryContent` beside it and the title and metadata as its ``metadata``;
* permission asks go to the session's ``prompt`` (the host's callback);
* each run step (one model response) is a step of the session: the doom-loop window is the calls of one
  response, never calls across steps or runs.

The first run connects the project's MCP servers (entering the toolset), so their tools are offered too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._common import Steps, data_of, is_invalid_arguments, require

require("pydantic_ai", "pydantic-ai", __name__)

from pydantic_ai import BinaryContent, DocumentUrl, ImageUrl, ModelRetry, RunContext, ToolFailed, ToolReturn
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_ai.toolsets.external import TOOL_SCHEMA_VALIDATOR

if TYPE_CHECKING:
    from ..results import Attachment
    from ..session import Session, ToolPart

__all__ = ["OpencodeToolset"]


class OpencodeToolset(AbstractToolset[Any]):
    """The tools ``session`` offers, as a pydantic-ai toolset (the host opens and closes the session).

    ``max_retries`` is how many invalid-arguments retries one tool gets in a run; ``id`` names the
    toolset among the agent's toolsets (default ``opencode``).
    """

    def __init__(self, session: Session, *, max_retries: int = 2, id: str | None = "opencode") -> None:
        self.session = session
        self.max_retries = max_retries
        self._id = id
        self._opened = False
        self._steps = Steps(session)

    @property
    def id(self) -> str | None:
        return self._id

    async def __aenter__(self) -> OpencodeToolset:
        if not self._opened:  # once: a server that failed stays failed (``opencode mcp list`` says why)
            self._opened = True
            await self.session.project.open()
        return self

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The session's wire tools, as the model should see them."""
        offered = await self.session.aresolve()
        return {
            tool.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=tool.name,
                    description=tool.description,
                    parameters_json_schema=tool.parameters,
                    strict=tool.strict,
                ),
                max_retries=self.max_retries,
                args_validator=TOOL_SCHEMA_VALIDATOR,  # any object: our dispatch validates
            )
            for tool in offered
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> ToolReturn:
        """Dispatch one call; see the module's docstring for what the model gets back."""
        from ..session import ToolCall

        self._steps.enter((ctx.run_id, ctx.run_step) if ctx.run_id is not None else None)
        part = await self.session.dispatch(ToolCall(name, tool_args, id=ctx.tool_call_id))
        if is_invalid_arguments(part):
            raise ModelRetry(part.text)
        if part.status != "completed":
            raise ToolFailed(part.text)
        return _tool_return(part)


def _tool_return(part: ToolPart) -> ToolReturn:
    files = [_content(attachment) for attachment in part.attachments]
    return ToolReturn(
        return_value=[part.output, *files] if files else part.output,
        metadata={"title": part.title, "metadata": part.metadata, "tool": part.tool},
    )


def _content(attachment: Attachment) -> BinaryContent | ImageUrl | DocumentUrl:
    data = data_of(attachment)
    if data is not None:
        return BinaryContent(data=data, media_type=attachment.mime, identifier=attachment.filename)
    if attachment.mime.startswith("image/"):
        return ImageUrl(url=attachment.url, media_type=attachment.mime)
    return DocumentUrl(url=attachment.url, media_type=attachment.mime)
