"""A session: runs tool calls the way OpenCode's session layer does (core spec §6.1).

For each call: ``tool_execute_before`` (in-place argument changes; raising blocks the call) → the tool's
wrap (validate → execute → truncate) → part ids on attachments → ``tool_execute_after``. Permission asks
from the tool are judged by the agent's rules, the session's rules and the approvals given so far; what
still needs a human goes to the host's ``prompt`` callback.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .context import AbortSignal, MetadataSink, PermissionRequest, ToolContext
from .errors import CorrectedError, DeniedError, RejectedError
from .permission import Rule, Ruleset, evaluate, match, merge
from .truncate import ascending_id

if TYPE_CHECKING:
    from .agents import Agent
    from .contract import ToolResult
    from .project import Project

Reply = Literal["once", "always", "reject"]


@dataclass
class Decision:
    """A human's answer to a permission request."""

    reply: Reply
    feedback: str | None = None


Prompt = Callable[[PermissionRequest], Awaitable[Decision]]


async def refuse_without_terminal(request: PermissionRequest) -> Decision:
    """The default prompt of a host with nobody to ask: reject."""
    return Decision("reject")


@dataclass
class Session:
    """A conversation's worth of tool calls for one agent."""

    project: Project
    agent: Agent
    id: str = field(default_factory=lambda: ascending_id("ses"))
    rules: Ruleset = field(default_factory=list)
    prompt: Prompt = refuse_without_terminal
    on_metadata: MetadataSink | None = None
    approved: Ruleset = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)

    async def ask(self, request: PermissionRequest) -> None:
        """Judge a permission request (core spec §8.5): deny raises, allow returns, ask prompts."""
        ruleset = merge(self.agent.permission, self.rules)
        needs_asking = False
        for pattern in request.patterns:
            rule = evaluate(request.permission, pattern, ruleset, self.approved)
            if rule.action == "deny":
                relevant = [r.as_dict() for r in ruleset if match(request.permission, r.permission)]
                raise DeniedError(relevant)
            if rule.action == "ask":
                needs_asking = True
        if not needs_asking:
            return
        decision = await self.prompt(request)
        if decision.reply == "reject":
            if decision.feedback:
                raise CorrectedError(decision.feedback)
            raise RejectedError()
        if decision.reply == "always":
            self.approved.extend(Rule(request.permission, p, "allow") for p in request.always)

    def context(self, tool_id: str, call_id: str | None, abort: AbortSignal | None = None) -> ToolContext:
        """The :class:`ToolContext` for one call."""
        project = self.project
        return ToolContext(
            session_id=self.id,
            message_id=ascending_id("msg"),
            agent=self.agent.name,
            abort=abort or AbortSignal(),
            call_id=call_id,
            extra={"model": None},
            messages=self.messages,
            directory=project.directory,
            worktree=project.worktree,
            tool=tool_id,
            asker=self.ask,
            on_metadata=self.on_metadata,
            task_capable=self.agent.task_capable,
            truncator=project.truncator,
            env=project.env,
        )

    async def execute(
        self,
        tool_id: str,
        args: dict[str, Any],
        *,
        call_id: str | None = None,
        abort: AbortSignal | None = None,
    ) -> ToolResult:
        """Run one call through the hooks and the tool's wrap; errors propagate with model-facing text."""
        plugins = self.project.plugins
        tool = self.project.registry.get(tool_id).tool.load()
        await plugins.call_strict(
            "tool_execute_before", tool=tool_id, session_id=self.id, call_id=call_id, args=args
        )
        ctx = self.context(tool_id, call_id, abort)
        result = await tool.run(args, ctx)
        for attachment in result.attachments:
            attachment.id = attachment.id or ascending_id("prt")
        await plugins.call_strict(
            "tool_execute_after", tool=tool_id, session_id=self.id, call_id=call_id, args=args, result=result
        )
        return result
