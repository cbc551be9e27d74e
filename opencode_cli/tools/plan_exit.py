"""``plan_exit``: ask the user to leave plan mode for the build agent (builtin spec §15.2).

Offered only in experimental plan mode to the ``cli`` client, and allowed by default only to the plan
agent. It puts one question to the user through the host's asker (:mod:`opencode_cli.tools._question`):
"Yes" or "No", no answer of their own. "Yes" appends a synthetic user message for the ``build`` agent to
``ctx.messages`` (a host switches agents when it sees it) and reports the switch; anything else fails
with "The user dismissed this question".

The plan file: ``ctx.extra["plan_path"]`` when the host names one; otherwise
``<worktree>/.opencode/plans/<session id>.md`` in a git project, else ``<data>/plans/<session id>.md``
(upstream names it after the session's creation time and slug, which sessions here do not have). It is
shown relative to the worktree when it lies inside it.
"""

from __future__ import annotations

import os
from typing import Any

from .. import paths
from ..context import ToolContext
from ..errors import QuestionDismissedError
from ..results import ToolResult
from ._arguments import Arguments
from ._question import ask_user

HEADER = "Build Agent"
YES = "Yes"
NO = "No"
OUTPUT = "User approved switching to build agent. Wait for further instructions."
TITLE = "Switching to build agent"


class PlanExitParameters(Arguments):
    """The plan_exit tool takes no arguments."""


def plan_path(ctx: ToolContext) -> str:
    """The plan file of the session (see the module docstring)."""
    named = ctx.extra.get("plan_path")
    if named:
        return str(ctx.resolve(str(named)))
    if ctx.worktree is not None:
        base = os.path.join(ctx.worktree, ".opencode", "plans")
    else:
        base = os.path.join(paths.data_dir(ctx.env), "plans")
    return os.path.join(base, f"{ctx.session_id}.md")


def shown(ctx: ToolContext, path: str) -> str:
    """``path`` relative to the worktree when inside it, else absolute."""
    if ctx.worktree is not None:
        relative = os.path.relpath(path, ctx.worktree)
        if not relative.startswith(".."):
            return relative
    return path


def question(plan: str) -> dict[str, Any]:
    """The one question plan_exit asks."""
    return {
        "question": (
            f"Plan at {plan} is complete. Would you like to switch to the build agent and start implementing?"
        ),
        "header": HEADER,
        "options": [
            {"label": YES, "description": "Switch to build agent and start implementing the plan"},
            {"label": NO, "description": "Stay with plan agent to continue refining the plan"},
        ],
        "multiple": False,
        "custom": False,
    }


async def execute(params: PlanExitParameters, ctx: ToolContext) -> ToolResult:
    """Ask; on "Yes" hand over to the build agent."""
    plan = shown(ctx, plan_path(ctx))
    [answer] = await ask_user(ctx, [question(plan)])
    if answer[:1] != [YES]:  # "No", or nothing chosen
        raise QuestionDismissedError()
    text = f"The plan at {plan} has been approved, you can now edit files. Execute the plan"
    ctx.session.transcript.add_user(text, "build", ctx.model, synthetic=True)
    return ToolResult(title=TITLE, output=OUTPUT, metadata={})


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    return {"parameters": PlanExitParameters, "execute": execute}
