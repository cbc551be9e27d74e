"""``task``: run a subagent in a child session and hand back its answer (builtin spec §9).

The child session gets the subagent's rules plus what it inherits from the caller
(:meth:`opencode_cli.session.Session.child`); it runs the same loop as ``opencode run``
(:meth:`~opencode_cli.session.Session.run`) with the subagent's model, else the caller's. ``task_id``
continues a child session this session started (or, for a remembered session, one in the store). The
caller's abort cancels the child; its tool calls show as live progress of the ``task`` call. Background
subagents are not implemented: with the flag on, ``background: true`` is refused with a message saying so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from ..errors import ToolError
from ..results import ToolResult
from ._arguments import Arguments

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..flags import Flags
    from ..session import Session

#: How deep subagents may nest when the config does not say (``subagent_depth``): a subagent cannot
#: start subagents of its own.
DEFAULT_DEPTH = 1


class TaskParameters(Arguments):
    """Arguments of the task tool."""

    description: str = Field(description="A short (3-5 words) description of the task")
    prompt: str = Field(description="The task for the agent to carry out")
    subagent_type: str = Field(description="Which kind of agent to start (one of the agent types listed)")
    task_id: str | None = Field(
        default=None,
        description="Continue an earlier task: the task_id its output gave (omit to start a new one)",
    )
    command: str | None = Field(default=None, description="The command that started this task, if any")


class BackgroundTaskParameters(TaskParameters):
    """Arguments of the task tool when background subagents are switched on."""

    background: bool | None = Field(default=None, description="Run the agent in the background")


def init(flags: Flags) -> dict[str, Any]:
    """The tool's definition; ``background`` is a parameter only with background subagents on."""
    background = flags.experimental_background_subagents
    return {
        "parameters": BackgroundTaskParameters if background else TaskParameters,
        "execute": execute,
        "handles_abort": True,
    }


async def execute(params: TaskParameters, ctx: ToolContext) -> ToolResult:
    """Check, ask, open (or continue) the child session, run the prompt in it, report its last text."""
    from ..errors import AbortedError, OpencodeError

    session, project = ctx.session, ctx.project
    if getattr(params, "background", None):
        if not project.flags.experimental_background_subagents:
            raise ToolError("Background subagents require OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS=true")
        raise ToolError(
            "Background subagents are not supported by opencode-tools yet; run the task without it."
        )
    limit = _depth_limit(project)
    if session.depth >= limit:
        raise ToolError(
            f'Subagent depth limit reached ({limit}). Increase "subagent_depth" to allow nested subagents.'
        )
    if not ctx.extra.get("bypassAgentCheck"):
        await ctx.ask(
            "task",
            [params.subagent_type],
            always=["*"],
            metadata={"description": params.description, "subagent_type": params.subagent_type},
        )
    if params.subagent_type not in project.generation.agents:
        raise ToolError(f"Unknown agent type: {params.subagent_type} is not a valid agent type")
    child = _child(session, params)
    model = child.model.as_dict() if child.model is not None else None
    metadata = {"parentSessionId": session.id, "sessionId": child.id, "model": model}
    ctx.metadata(params.description, metadata)
    progress = _Progress(ctx, params.description, metadata)
    try:
        await child.run(params.prompt, abort=ctx.abort, on_event=progress)
    except AbortedError:
        raise ToolError("Task cancelled") from None
    except OpencodeError as error:
        raise ToolError(str(error) or "Task failed") from None
    text = child.transcript.last_text()
    output = f'<task id="{child.id}" state="completed">\n<task_result>\n{text}\n</task_result>\n</task>'
    return ToolResult(output=output, title=params.description, metadata=metadata)


def _depth_limit(project: Any) -> int:
    value = project.config.get("subagent_depth")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else DEFAULT_DEPTH


def _child(session: Session, params: TaskParameters) -> Session:
    """The session to run in: the one ``task_id`` names, if this session has it, else a new child."""
    if params.task_id:
        found = session.children.get(params.task_id) or session.resume_child(params.task_id)
        if found is not None:
            return found
    title = f"{params.description} (@{params.subagent_type} subagent)"
    return session.child(params.subagent_type, title=title)


class _Progress:
    """The child's run as live progress of the ``task`` call: a summary of its tool calls so far."""

    def __init__(self, ctx: ToolContext, title: str, metadata: dict[str, Any]) -> None:
        self.ctx = ctx
        self.title = title
        self.metadata = metadata
        self.summary: list[dict[str, Any]] = []

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "tool-start":
            self.summary.append({"id": data["callID"], "tool": data["tool"], "state": {"status": "running"}})
        elif kind == "tool-end":
            for item in self.summary:
                if item["id"] == data["callID"]:
                    item["state"] = {"status": data["status"], "title": data.get("title") or ""}
        else:
            return
        self.ctx.metadata(self.title, {**self.metadata, "summary": [dict(item) for item in self.summary]})
