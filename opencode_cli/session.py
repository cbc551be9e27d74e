"""A session: what a model is offered and what happens to the calls it makes (core spec §4, §6, §8.4).

:meth:`Session.resolve` gives the wire tools of a request: the registry's tools for the model, minus the
tools the permissions deny wholly and those switched off per request (``question`` too, when the session
has no question asker: nobody could answer), with each schema shaped by the provider's profile, sorted by
name. :meth:`Session.dispatch` takes a raw call as the model sent it:
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
from .loops import is_cancellation
from .modelref import ModelRef
from .permission import Reply, Rule, Ruleset, merge
from .truncate import ascending_id

if TYPE_CHECKING:
    from .agents import Agent
    from .contract import Attachment, ToolResult
    from .models.loop import RunResult
    from .project import Project
    from .transcript import Message, ToolCallPart, Transcript

#: Identical consecutive calls of one tool that trigger the ``doom_loop`` ask.
DOOM_LOOP_THRESHOLD = 3
#: The tool offered only to a session that can put questions to a user, and the ``extra`` key of the asker
#: (:mod:`opencode_cli.tools._question`).
QUESTION_TOOL = "question"
QUESTION_ASKER = "question"


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
    """A conversation's worth of tool calls for one agent; use it as a context manager.

    ``rules`` are the session's own permission rules (OpenCode's session ruleset, and the CLI's
    ``--allow``/``--deny``); approvals given with "always" under a named session id are kept in the
    project's store and come back when a session with that id is opened again. Closing a session stops
    the permission prompts it still has open; nothing of it stays subscribed to the project.
    """

    project: Project
    agent: Agent
    id: str = field(default_factory=lambda: ascending_id("ses"))
    rules: Ruleset = field(default_factory=list)
    prompt: Prompt = refuse_without_terminal
    on_metadata: MetadataSink | None = None
    remember: bool = False
    """Keep this session in the store: its transcript and its "always" approvals (hosts set it for named
    sessions); a session opened again with the same id resumes them."""
    model: ModelRef | None = None
    """The model requests are made for (per-model filter and schema profile)."""
    profile: str | None = None
    """Override the provider's schema profile (e.g. ``openai-strict``)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Host values added to every call's ``ctx.extra``, e.g. ``"question"``: the async callable the
    ``question`` and ``plan_exit`` tools reach the user with (see :mod:`opencode_cli.tools._question`)."""
    parent: Session | None = field(default=None, repr=False)
    """The session that opened this one with :meth:`child` (a subagent's session), if any."""
    title: str = ""

    def __post_init__(self) -> None:
        from .transcript import SessionInfo, Transcript

        self.model = ModelRef.coerce(self.model)
        if self.profile is not None:
            from .schema import check_profile

            self.profile = check_profile(self.profile)
        self._prompts: set[Any] = set()
        self._offered: dict[str, WireTool] | None = None
        self._recent: list[tuple[str, str]] = []
        self._assistant: Message | None = None
        self.closed = False
        self.children: dict[str, Session] = {}
        """The sessions :meth:`child` opened from this one, by id (``task`` continues them by id)."""
        store = self.project.store if self.remember else None
        transcript = Transcript.load(store, self.id) if store is not None else None
        if transcript is None:
            info = SessionInfo(
                self.title,
                self.agent.name,
                str(self.project.directory),
                self.parent.id if self.parent is not None else None,
                [rule.as_dict() for rule in self.rules],
                id=self.id,
            )
            transcript = Transcript(info, store)
        self.transcript: Transcript = transcript
        """The conversation so far (OpenCode's messages and parts); kept in the store when remembered."""
        if self.remember:
            self.project.remember_session(self.id)
            stored = self.project.store.approvals(self.id)
            self.rules = [
                *self.rules,
                *(Rule(p, pattern, "allow", "always (stored)") for p, pattern in stored),
            ]

    @classmethod
    def resume(cls, project: Project, session_id: str, **options: Any) -> Session:
        """Open a session kept in the store (see ``remember``) again: its agent, its rules, its transcript.
        Raises :class:`~opencode_cli.errors.NotFoundError` for an unknown id."""
        from .errors import NotFoundError
        from .permission import ACTIONS

        stored = project.store.session(session_id)
        if stored is None:
            raise NotFoundError(f"no stored session {session_id}")
        rules = [
            Rule.from_dict(r, "stored") for r in stored.get("permission") or [] if r.get("action") in ACTIONS
        ]
        options.setdefault("rules", rules)
        options.setdefault("title", stored.get("title", ""))
        if options.get("prompt") is None:
            options.pop("prompt", None)
        return cls(
            project, project.agent(stored.get("agent") or None), id=session_id, remember=True, **options
        )

    @property
    def messages(self) -> list[Message]:
        """The transcript's messages, oldest first (``ctx.messages`` of every call)."""
        return self.transcript.messages

    def user(self, text: str, *, synthetic: bool = False) -> Message:
        """Add a user message to the transcript; the next tool calls belong to a new assistant message."""
        self._assistant = None
        return self.transcript.add_user(text, self.agent.name, self.model, synthetic=synthetic)

    def new_assistant(self) -> Message:
        """Start a new assistant message (a model's reply); the tool calls that follow belong to it."""
        self._assistant = self.transcript.add_assistant(self.agent.name, self.model)
        return self._assistant

    async def run(self, prompt: str, *, abort: AbortSignal | None = None, on_event: Any = None) -> RunResult:
        """Send ``prompt`` to the session's model and run its tool calls until it answers (the agent loop:
        :mod:`opencode_cli.models.loop`). ``on_event(kind, data)`` sees the run as it happens."""
        from .models.loop import run

        return await run(self, prompt, abort=abort, on_event=on_event)

    def assistant(self) -> Message:
        """The assistant message tool calls are recorded in (a new one after a user message)."""
        current = self._assistant
        if current is None or not self.transcript.messages or self.transcript.messages[-1] is not current:
            current = self._assistant = self.transcript.add_assistant(self.agent.name, self.model)
        return current

    # -- lifecycle -------------------------------------------------------------------------------------

    def close(self) -> None:
        """End the session: prompts still open are cancelled (their requests are rejected)."""
        self.closed = True
        for task in list(self._prompts):
            task.cancel()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Session:
        if self.project.generation.mcp_servers:
            await self.project.mcp.ensure()  # MCP servers connect on first need (a no-op once tried)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    # -- subagents -------------------------------------------------------------------------------------

    @property
    def parent_id(self) -> str | None:
        """The id of the session this one was opened from (kept in the transcript, so resumed too)."""
        return self.transcript.info.parent_id

    @property
    def depth(self) -> int:
        """How many sessions are above this one (0 for a top-level session)."""
        if self.parent is not None:
            return self.parent.depth + 1
        depth, parent_id, seen = 0, self.parent_id, {self.id}
        while parent_id is not None and parent_id not in seen:
            seen.add(parent_id)
            depth += 1
            stored = self.project.store.session(parent_id) if self.remember else None
            parent_id = stored.get("parentID") if stored else None
        return depth

    def child(self, agent: str, *, title: str = "", **options: Any) -> Session:
        """A subagent's session: ``agent``'s rules, plus what it inherits from this session
        (builtin-tools §9 step 5, :func:`opencode_cli.permission.inherited`); the agent's own model, else
        this session's; the same prompt, question asker and host values."""
        from .permission import inherited

        sub = self.project.agent(agent)
        primary = self.project.config.get("experimental.primary_tools") or []
        rules = inherited(
            merge(self.agent.permission, self.rules),
            sub.permission,
            [name for name in primary if isinstance(name, str)] if isinstance(primary, list) else [],
        )
        defaults: dict[str, Any] = {
            "rules": rules,
            "prompt": self.prompt,
            "model": sub.model or self.model,
            "profile": self.profile,
            "extra": dict(self.extra),
            "remember": self.remember,
            "parent": self,
            "title": title,
        }
        defaults.update(options)
        child = Session(self.project, sub, **defaults)
        self.children[child.id] = child
        return child

    # -- permissions -----------------------------------------------------------------------------------

    def _on_pending(self, request: PermissionRequest) -> None:
        """Put a waiting request to the user (a closed session asks nobody: the request waits)."""
        import asyncio

        if self.closed:
            return
        task = asyncio.ensure_future(self._answer(request))
        self._prompts.add(task)
        task.add_done_callback(self._prompts.discard)

    async def _answer(self, request: PermissionRequest) -> None:
        import asyncio

        from .errors import NotFoundError

        try:
            decision = await self.prompt(request)
        except asyncio.CancelledError:
            decision = Decision("reject")
        except Exception:
            decision = Decision("reject")
        with contextlib.suppress(NotFoundError):  # answered meanwhile ("always", or a sibling's reject)
            self.project.permissions.reply(request.id, decision.reply, decision.feedback)

    async def ask(self, request: PermissionRequest) -> None:
        """Judge a permission request (core spec §8.5): deny raises, allow returns, ask prompts."""
        request.session_id = self.id
        ruleset = merge(self.agent.permission, self.rules)
        await self.project.permissions.ask(request, ruleset, on_pending=self._on_pending)

    # -- running a call --------------------------------------------------------------------------------

    def context(
        self,
        tool_id: str,
        call_id: str | None,
        abort: AbortSignal | None = None,
        part: ToolCallPart | None = None,
    ) -> ToolContext:
        """The :class:`ToolContext` for one call (``part``: its transcript part, shown live progress)."""
        project = self.project
        on_metadata = self.on_metadata
        if part is not None:
            on_metadata = _live(part, on_metadata)
        return ToolContext(
            session_id=self.id,
            message_id=self.assistant().id,
            agent=self.agent.name,
            abort=abort or AbortSignal(),
            call_id=call_id,
            extra={"model": self.model, **self.extra},
            messages=self.messages,
            directory=project.directory,
            worktree=project.worktree,
            tool=tool_id,
            asker=self.ask,
            on_metadata=on_metadata,
            task_capable=self.agent.task_capable,
            truncator=project.truncator,
            env=project.env,
            project=project,
            session=self,
            model=self.model,
        )

    async def execute(
        self,
        tool_id: str,
        args: dict[str, Any],
        *,
        call_id: str | None = None,
        abort: AbortSignal | None = None,
    ) -> ToolResult:
        """Run one call through the hooks and the tool's wrap; errors propagate with model-facing text.

        ``tool_execute_before`` → ``tool_execute`` (the built-in implementation runs the tool's wrap;
        plugins may wrap or replace it) → part ids on attachments → ``tool_execute_after``. The call is
        recorded as a tool part of the current assistant message.
        """
        return await self._call(tool_id, args, call_id, abort)

    async def execute_inner(
        self, tool_id: str, args: dict[str, Any], *, call_id: str, abort: AbortSignal | None = None
    ) -> ToolResult:
        """Run a call made from inside another call (a code-mode script's call of an MCP tool): the same
        hooks, permission asks and tool wrap as :meth:`execute`, but not recorded as a part of the
        transcript (the outer call's metadata lists it)."""
        return await self._run(tool_id, args, call_id, abort, None)

    async def _call(
        self,
        tool_id: str,
        args: Any,
        call_id: str | None,
        abort: AbortSignal | None,
        before: Callable[[], Awaitable[None]] | None = None,
    ) -> ToolResult:
        from .contract import INTERRUPTED
        from .transcript import ToolCallPart

        message = self.assistant()
        part = ToolCallPart(call_id or ascending_id("call"), tool_id, _plain(args))
        self.transcript.add_part(message, part)
        part.running()
        try:
            if before is not None:
                await before()
            result = await self._run(tool_id, args, call_id, abort, part)
        except BaseException as error:
            cancelled = isinstance(error, KeyboardInterrupt) or is_cancellation(error)
            part.fail(INTERRUPTED if cancelled else (str(error) or type(error).__name__))
            self.transcript.update_part(part)
            raise
        part.complete(result.output, result.title, result.metadata, result.attachments)
        self.transcript.update_part(part)
        return result

    async def _run(
        self,
        tool_id: str,
        args: Any,
        call_id: str | None,
        abort: AbortSignal | None,
        part: ToolCallPart | None,
    ) -> ToolResult:
        plugins = self.project.plugins
        if self.project.generation.mcp_servers:
            await self.project.mcp.ensure(tool_id)
        tool = self.project.registry.get(tool_id).tool.load()
        await plugins.acall(
            "tool_execute_before", tool=tool_id, session_id=self.id, call_id=call_id, args=args
        )
        ctx = self.context(tool_id, call_id, abort, part)
        running = plugins.call("tool_execute", tool=tool, args=args, ctx=ctx)
        result = await (running if running is not None else tool.run(args, ctx))
        for attachment in result.attachments:
            attachment.id = attachment.id or ascending_id("prt")
        await plugins.acall(
            "tool_execute_after", tool=tool_id, session_id=self.id, call_id=call_id, args=args, result=result
        )
        return result

    # -- what the model is offered -------------------------------------------------------------------

    def resolve(self, tools: dict[str, bool] | None = None) -> list[WireTool]:
        """The wire tools of a request, sorted by name (core spec §6.1–§6.2, §8.4).

        ``tools`` are per-request switches: a tool set to ``False`` is left out. ``invalid`` is never
        offered; calls are rerouted to it by :meth:`dispatch`. ``question`` is offered only when someone
        can answer: without a question asker (``extra["question"]``) it is switched off for the request,
        as in OpenCode's non-interactive runs; it stays registered.
        """
        from .schema import adapt, can_be_strict, profile_for
        from .tools._collate import sort_key

        model = self.model
        switches = dict(tools or {})
        if self.extra.get(QUESTION_ASKER) is None:  # nobody can answer: off, as the last switch
            switches.pop(QUESTION_TOOL, None)  # (the last matching switch decides, so no "*" turns it on)
            switches[QUESTION_TOOL] = False
        offer = self.project.offer(
            model, self.agent, rules=self.rules, switches=switches or None, schemas=True
        )
        profile = self.profile or (profile_for(model.provider, model.id) if model else "default")
        strict = {"openai": False, "openai-strict": True}.get(profile)
        wire = []
        for definition in offer.tools:
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
        are not valid JSON, turn the call into ``invalid`` with ``{tool, error}``. ``invalid`` itself is
        never offered but is a tool of the request all the same (OpenCode leaves it out of ``activeTools``
        only), so a model that calls it by name has it run.
        """
        name, args, _ = self._repair(call)
        return name, args

    def _repair(self, call: ToolCall) -> tuple[str, dict[str, Any], bool]:
        """:meth:`repair`, and whether the call was rerouted to ``invalid``."""
        import json

        from .registry import INVALID

        offered = self._offered if self._offered is not None else {t.name: t for t in self.resolve()}
        name = call.name
        if name not in offered and not (name == INVALID and offered):  # with no tools, not even invalid
            lowered = name.lower()
            if lowered != name and lowered in offered:
                name = lowered
            else:
                names = sorted([*offered, "invalid"], key=_collate_key)
                listing = f"Available tools: {', '.join(names)}." if offered else "No tools are available."
                error = f"Model tried to call unavailable tool '{call.name}'. {listing}"
                return INVALID, {"tool": call.name, "error": error}, True
        raw = call.arguments
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return name, {}, False
        if not isinstance(raw, str):
            return name, dict(raw) if isinstance(raw, dict) else raw, False  # type: ignore[return-value]
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError) as error:  # not JSON, nested too deeply, a number too long
            if isinstance(error, RecursionError):
                error = ValueError("nested too deeply")  # type: ignore[assignment]
            text = raw if len(raw) <= 2000 else raw[:2000] + f"… ({len(raw)} characters)"
            message = (
                f"Invalid input for tool {name}: JSON parsing failed: Text: {text}.\nError message: {error}"
            )
            return INVALID, {"tool": call.name, "error": message}, True
        return name, parsed, False

    async def dispatch(self, call: ToolCall, *, abort: AbortSignal | None = None) -> ToolPart:
        """Run a raw call the way OpenCode does: repair, doom-loop check, hooks, the tool; never raises
        for the call's own failures (they become an ``error`` part with the model-facing text)."""
        from .schema import strict_nulls_to_absent

        call_id = call.id or ascending_id("call")
        if self.project.generation.mcp_servers:
            await self.project.mcp.ensure(call.name)  # its server connects (again) before the repair
        name, args, rerouted = self._repair(call)
        part = ToolPart(call_id, name, args if isinstance(args, dict) else {}, "error", requested=call.name)
        offered = self._offered or {}
        if self.profile == "openai-strict" and name in offered and isinstance(args, dict):
            args = strict_nulls_to_absent(args, offered[name].normalized)
            part.input = args
        try:
            result = await self._call(name, args, call_id, abort, lambda: self._doom_loop_check(name, args))
        except Exception as error:
            part.error = error_text(error)
            return part
        part.status = "completed"
        part.output, part.title = result.output, result.title
        part.metadata, part.attachments = result.metadata, result.attachments
        if rerouted:
            part.metadata = {**part.metadata, "rerouted": True}
        return part

    async def _doom_loop_check(self, name: str, args: Any) -> None:
        import json

        try:
            fingerprint = json.dumps(args, sort_keys=True, default=str)
        except (ValueError, TypeError, RecursionError):  # arguments validation will refuse
            fingerprint = f"<unserialisable {id(args)}>"
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
            await self.project.permissions.ask(request, self.agent.permission, on_pending=self._on_pending)


def _collate_key(name: str) -> Any:
    from .tools._collate import sort_key

    return sort_key(name)


def _plain(args: Any) -> dict[str, Any]:
    """A JSON-safe copy of a call's arguments, as the transcript keeps them."""
    import json

    if not isinstance(args, dict):
        return {}
    try:
        return json.loads(json.dumps(args, default=str))
    except (ValueError, RecursionError):  # nested too deeply, a number too long: the call will be refused
        return {}


def error_text(error: Exception) -> str:
    """The model-facing text of a failed call: a tool's own error as it is; any other exception, a bug in
    the tool, as one line naming its type (the traceback on stderr when ``OPENCODE_DEBUG`` is set)."""
    import os

    from .errors import OpencodeError

    if isinstance(error, OpencodeError):
        return str(error) or type(error).__name__
    if os.environ.get("OPENCODE_DEBUG"):
        import traceback

        traceback.print_exception(error)
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    detail = lines[0] if lines else ""
    if isinstance(error, OSError | ValueError) and detail:
        return detail  # the tool's own complaint about a path or a value ("embedded null byte")
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


def _live(part: ToolCallPart, sink: MetadataSink | None) -> MetadataSink:
    """A metadata sink that also shows the progress on the call's transcript part."""

    def report(title: str | None, metadata: dict[str, Any] | None) -> None:
        with contextlib.suppress(ValueError):  # the part already finished
            part.running(title, metadata)
        if sink is not None:
            sink(title, metadata)

    return report
