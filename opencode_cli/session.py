"""A session: what a model is offered and what happens to the calls it makes (core spec §4, §6, §8.4).

:meth:`Session.resolve` gives the wire tools of a request: the registry's tools for the model, minus the
tools the permissions deny wholly and those switched off per request, with each schema shaped by the
provider's profile, sorted by name. :meth:`Session.dispatch` takes a raw call as the model sent it:
repair (a wrong-case name; anything else is rerouted to ``invalid`` with the SDK's error text), the
doom-loop ask after three identical calls, then :meth:`Session.execute`.

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
    from .contract import Attachment, ToolResult
    from .project import Project
    from .registry import ModelRef

#: Identical consecutive calls of one tool that trigger the ``doom_loop`` ask.
DOOM_LOOP_THRESHOLD = 3


@dataclass
class Decision:
    """A human's answer to a permission request."""

    reply: Reply
    feedback: str | None = None


Prompt = Callable[[PermissionRequest], Awaitable[Decision]]


@dataclass
class WireTool:
    """One tool as a request carries it: name, description, the provider-shaped JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool | None = None
    """``False`` for the OpenAI family (OpenCode sends ``strict: false``), ``True`` for openai-strict."""
    normalized: dict[str, Any] = field(default_factory=dict, repr=False)
    """The schema before the provider profile (compared by :func:`opencode_cli.schema.describe_changes`)."""


@dataclass
class ToolCall:
    """A tool call as a model emits it: a name and the arguments (JSON text, or an already parsed object)."""

    name: str
    arguments: str | dict[str, Any] | None = None
    id: str | None = None


@dataclass
class ToolPart:
    """The outcome of one call: what the model sees next (``text``) and the details."""

    call_id: str
    tool: str
    input: dict[str, Any]
    status: str  # "completed" or "error"
    output: str = ""
    error: str | None = None
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    attachments: list[Attachment] = field(default_factory=list)
    requested: str = ""
    """The name the model used (differs from ``tool`` after a repair)."""

    @property
    def text(self) -> str:
        """What the model is shown for this part (the output, or the error text)."""
        return self.output if self.status == "completed" else (self.error or "")

    def as_dict(self) -> dict[str, Any]:
        """JSON shape for ``opencode tools call --json``."""
        return {
            "callID": self.call_id,
            "requested": self.requested,
            "tool": self.tool,
            "input": self.input,
            "status": self.status,
            "title": self.title,
            "output": self.output if self.status == "completed" else None,
            "error": self.error,
            "metadata": self.metadata,
            "attachments": [attachment.as_dict() for attachment in self.attachments],
        }


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
    model: ModelRef | None = None
    """The model requests are made for (per-model filter and schema profile)."""
    profile: str | None = None
    """Override the provider's schema profile (e.g. ``openai-strict``)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Host values added to every call's ``ctx.extra``, e.g. ``"question"``: the async callable the
    ``question`` and ``plan_exit`` tools reach the user with (see :mod:`opencode_cli.tools._question`)."""

    def __post_init__(self) -> None:
        service = self.project.permissions
        self._unsubscribe = service.subscribe(self._on_event)
        self._prompts: set[Any] = set()
        self._offered: dict[str, WireTool] | None = None
        self._recent: list[tuple[str, str]] = []
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
            extra={"model": self.model, **self.extra},
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

    # -- what the model is offered -------------------------------------------------------------------

    def resolve(self, tools: dict[str, bool] | None = None) -> list[WireTool]:
        """The wire tools of a request, sorted by name (core spec §6.1–§6.2, §8.4).

        ``tools`` are per-request switches: a tool set to ``False`` is left out. ``invalid`` is never
        offered; calls are rerouted to it by :meth:`dispatch`.
        """
        from .permission import disabled
        from .schema import adapt, can_be_strict, profile_for
        from .tools._collate import sort_key

        registry = self.project.registry
        ruleset = merge(self.agent.permission, self.rules)
        ids = [entry.id for entry in registry.all()]
        hidden = disabled(ids, ruleset) | {name for name, on in (tools or {}).items() if on is False}
        model = self.model
        profile = self.profile or (profile_for(model.provider, model.id) if model else "default")
        strict = {"openai": False, "openai-strict": True}.get(profile)
        wire = []
        for definition in registry.tools(model, hidden):
            schema = definition.parameters
            flag = False if strict and not can_be_strict(schema) else strict  # see schema.can_be_strict
            wire.append(WireTool(definition.id, definition.description, adapt(schema, profile), flag, schema))
        wire.sort(key=lambda tool: sort_key(tool.name))
        self._offered = {tool.name: tool for tool in wire}
        return wire

    # -- what happens to a call ----------------------------------------------------------------------

    def repair(self, call: ToolCall) -> tuple[str, dict[str, Any]]:
        """The tool and arguments a raw call becomes (core spec §4.2).

        A name that is only wrong in case becomes the lower-case tool; an unknown name, or arguments that
        are not valid JSON, turn the call into ``invalid`` with ``{tool, error}``.
        """
        import json

        offered = self._offered if self._offered is not None else {t.name: t for t in self.resolve()}
        name = call.name
        if name not in offered:
            lowered = name.lower()
            if lowered != name and lowered in offered:
                name = lowered
            else:
                names = sorted([*offered, "invalid"], key=_collate_key)
                listing = f"Available tools: {', '.join(names)}." if offered else "No tools are available."
                return "invalid", {
                    "tool": call.name,
                    "error": f"Model tried to call unavailable tool '{call.name}'. {listing}",
                }
        raw = call.arguments
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return name, {}
        if not isinstance(raw, str):
            return name, dict(raw) if isinstance(raw, dict) else raw  # type: ignore[return-value]
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as error:
            message = (
                f"Invalid input for tool {name}: JSON parsing failed: Text: {raw}.\nError message: {error}"
            )
            return "invalid", {"tool": call.name, "error": message}
        return name, parsed

    async def dispatch(self, call: ToolCall) -> ToolPart:
        """Run a raw call the way OpenCode does: repair, doom-loop check, hooks, the tool; never raises
        for the call's own failures (they become an ``error`` part with the model-facing text)."""
        import json

        from .schema import strict_nulls_to_absent

        call_id = call.id or ascending_id("call")
        name, args = self.repair(call)
        part = ToolPart(call_id, name, args if isinstance(args, dict) else {}, "error", requested=call.name)
        offered = self._offered or {}
        if self.profile == "openai-strict" and name in offered and isinstance(args, dict):
            args = strict_nulls_to_absent(args, offered[name].normalized)
            part.input = args
        try:
            await self._doom_loop_check(name, args)
            result = await self.execute(name, args, call_id=call_id)
        except Exception as error:
            part.error = str(error) or type(error).__name__
            return part
        part.status = "completed"
        part.output, part.title = result.output, result.title
        part.metadata, part.attachments = result.metadata, result.attachments
        if name == "invalid":
            part.metadata = {**part.metadata, "rerouted": True}
        self.messages.append({"tool": name, "input": json.loads(json.dumps(args, default=str))})
        return part

    async def _doom_loop_check(self, name: str, args: Any) -> None:
        import json

        fingerprint = json.dumps(args, sort_keys=True, default=str)
        self._recent = [*self._recent, (name, fingerprint)][-DOOM_LOOP_THRESHOLD:]
        if len(self._recent) == DOOM_LOOP_THRESHOLD and len(set(self._recent)) == 1:
            request = PermissionRequest(
                id="",
                session_id=self.id,
                permission="doom_loop",
                patterns=[name],
                always=[name],
                metadata={"tool": name, "input": args},
            )
            await self.project.permissions.ask(request, self.agent.permission)


def _collate_key(name: str) -> Any:
    from .tools._collate import sort_key

    return sort_key(name)
