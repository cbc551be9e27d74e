"""A session: runs tool calls the way OpenCode's session layer does (core spec §6.1).

For each call: ``tool_execute_before`` (in-place argument changes; raising blocks the call) → the tool's
wrap (validate → execute → truncate) → part ids on attachments → ``tool_execute_after``. Permission asks
from the tool go to the project's :class:`~opencode_cli.permission.PermissionService`, judged by the
agent's rules, the session's rules and the approvals so far; what still needs a human is put to the
session's ``prompt`` and the answer is sent back as the reply.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .context import AbortSignal, MetadataSink, PermissionRequest, ToolContext
from .permission import Reply, Rule, Ruleset, merge
from .truncate import ascending_id

if TYPE_CHECKING:
    from .agents import Agent
    from .contract import ToolResult
    from .project import Project


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
    """A conversation's worth of tool calls for one agent.

    ``rules`` are the session's own permission rules (OpenCode's session ruleset, and the CLI's
    ``--allow``/``--deny``); approvals given with "always" under a named session id are kept in the
    project's store and come back when a session with that id is opened again.
    """

    project: Project
    agent: Agent
    id: str = field(default_factory=lambda: ascending_id("ses"))
    rules: Ruleset = field(default_factory=list)
    prompt: Prompt = refuse_without_terminal
    on_metadata: MetadataSink | None = None
    messages: list[Any] = field(default_factory=list)
    remember: bool = False
    """Load and keep this session's "always" approvals in the store (hosts set it for named sessions)."""

    def __post_init__(self) -> None:
        service = self.project.permissions
        self._unsubscribe = service.subscribe(self._on_event)
        self._prompts: set[Any] = set()
        if self.remember:
            self.project.remember_session(self.id)
            stored = self.project.store.approvals(self.id)
            self.rules = [
                *self.rules,
                *(Rule(p, pattern, "allow", "always (stored)") for p, pattern in stored),
            ]

    def close(self) -> None:
        """Stop answering this session's permission requests."""
        self._unsubscribe()

    def _on_event(self, event: str, data: dict[str, Any]) -> None:
        if event != "permission.asked" or data.get("sessionID") != self.id:
            return
        import asyncio

        pending = next((r for r in self.project.permissions.pending() if r.id == data["id"]), None)
        if pending is not None:
            task = asyncio.ensure_future(self._answer(pending))
            self._prompts.add(task)
            task.add_done_callback(self._prompts.discard)

    async def _answer(self, request: PermissionRequest) -> None:
        from .errors import NotFoundError

        try:
            decision = await self.prompt(request)
        except Exception:
            decision = Decision("reject")
        with contextlib.suppress(NotFoundError):  # answered meanwhile ("always", or a sibling's reject)
            self.project.permissions.reply(request.id, decision.reply, decision.feedback)

    async def ask(self, request: PermissionRequest) -> None:
        """Judge a permission request (core spec §8.5): deny raises, allow returns, ask prompts."""
        request.session_id = self.id
        await self.project.permissions.ask(request, merge(self.agent.permission, self.rules))

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
