"""A session: what a model is offered and what happens to the calls it makes (core spec §4, §6, §8.4).

:meth:`Session.resolve` gives the wire tools of a request: the registry's tools for the model, minus the
tools the permissions deny wholly and those switched off per request (``question`` too, when the session
has no question asker: nobody could answer), with each schema shaped by the provider's profile, sorted by
name. :meth:`Session.dispatch` takes a raw call as the model sent it:
repair (a wrong-case name; anything else is rerouted to ``invalid`` with the SDK's error text), the
doom-loop ask after three identical calls in one step (:meth:`Session.step`: one model response), then
:meth:`Session.execute`; the part it returns says how the call ended (:class:`Outcome`).

For each call: ``tool_execute_before`` (in-place argument changes; raising blocks the call) → the tool's
wrap (validate → execute → truncate) → part ids on attachments → ``tool_execute_after``. Permission asks
from the tool go to the project's :class:`~opencode_cli.permission.PermissionService`, judged by the
agent's rules, the session's rules and the approvals so far; what still needs a human is put to the
session's ``prompt`` and the answer is sent back as the reply.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .arguments import is_flat_json
from .context import AbortSignal, MetadataSink, PermissionRequest, ToolContext
from .errors import INTERRUPTED
from .loops import is_cancellation
from .modelref import ModelRef
from .parts import (
    DOOM_LOOP_REFUSED,
    DOOM_LOOP_THRESHOLD,
    Decision,
    Outcome,
    Prompt,
    ToolCall,
    ToolPart,
    WireTool,
)
from .permission import Rule, Ruleset, disabled, merge
from .registry import INVALID
from .schema_profiles import strict_nulls_to_absent
from .transcript import ToolCallPart
from .truncate import ascending_id

if TYPE_CHECKING:
    from .agents import Agent
    from .models.loop import RunResult
    from .project import Project
    from .results import ToolResult
    from .transcript import Message, Transcript

#: Messages a session's transcript holds in memory by default (see ``Session.window``).
DEFAULT_WINDOW = 1000
#: The tool offered only to a session that can put questions to a user, and the ``extra`` key of the asker
#: (:mod:`opencode_cli.tools._question`).
QUESTION_TOOL = "question"
QUESTION_ASKER = "question"


async def refuse_without_terminal(request: PermissionRequest) -> Decision:
    """The default prompt of a host with nobody to ask: reject."""
    return Decision("reject")


@dataclass(eq=False)  # compared by identity
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
    window: int | None = DEFAULT_WINDOW
    """How many of the latest messages the transcript holds in memory (older ones stay in the store when
    the session is remembered); ``None`` holds them all. :meth:`run` sends the held messages as the
    conversation, so a run longer than the window sends only its latest messages."""
    own_approvals: bool = False
    """"always" answers given in this session allow only this session's calls (they join its rules, and
    the store when remembered) instead of every session of the project (OpenCode's default): for a host
    whose sessions belong to different people, such as ``opencode mcp serve``'s clients."""
    lists_invalid: bool = True
    """Whether the unknown-tool error names ``invalid`` among the available tools (OpenCode's wording:
    the AI SDK lists every tool of the request). A host that offers tools by their list, where
    ``invalid`` never appears (``opencode mcp serve``), leaves it out."""

    def __post_init__(self) -> None:
        from .transcript import SessionInfo, Transcript

        self.model = ModelRef.coerce(self.model)
        if self.profile is not None:
            from .schema_profiles import check_profile

            self.profile = check_profile(self.profile)
        self._prompts: set[Any] = set()
        self._running: set[AbortSignal] = set()
        self._offered: dict[str, WireTool] | None = None
        self._assistant: Message | None = None
        self.closed = False
        self.children: dict[str, Session] = {}
        """The sessions :meth:`child` opened from this one, by id (``task`` continues them by id)."""
        store = self.project.store if self.remember else None
        held = _held_bytes(self.project)
        transcript = Transcript.load(store, self.id, self.window, held) if store is not None else None
        if transcript is None:
            info = SessionInfo(
                self.title,
                self.agent.name,
                str(self.project.directory),
                self.parent.id if self.parent is not None else None,
                [rule.as_dict() for rule in self.rules],
                id=self.id,
            )
            transcript = Transcript(info, store, self.window, held)
        self.transcript: Transcript = transcript
        """The conversation so far (OpenCode's messages and parts); kept in the store when remembered."""
        if self.remember:
            self.project.permissions.remember(self.id)
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
            project,
            project.generation.agent(stored.get("agent") or None),
            id=session_id,
            remember=True,
            **options,
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

    def step(self) -> Message:
        """Mark the start of a new model response (a step): the calls dispatched from now on belong to a
        new assistant message, and the doom-loop window (three identical calls in a row) starts over.

        :meth:`run` starts one per model step; a host running its own loop calls it before dispatching the
        calls of each response (without it, every call since the last user message is one step).
        """
        return self.new_assistant()

    def use_agent(self, agent: Agent | str) -> Agent:
        """Run the calls from now on as ``agent`` (a name is looked up in the project): its permissions,
        its tools. The transcript's session info records the new agent."""
        chosen = self.project.generation.agent(agent) if isinstance(agent, str) else agent
        if chosen is self.agent:
            return chosen
        self.agent = chosen
        self._offered = None
        if self.transcript.info.agent != self.agent.name:
            self.transcript.info.agent = self.agent.name
            self.transcript.update_session()
        return self.agent

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
        """End the session: calls still running are aborted (their abort signal is set, so each ends as
        interrupted, and no write is cut in half) and prompts still open are cancelled (their requests
        are rejected)."""
        self.closed = True
        for signal in list(self._running):
            signal.abort("session closed")
        for task in list(self._prompts):
            task.cancel()

    def __enter__(self) -> Session:
        """The sync form of ``async with``: the configured MCP servers connect (on the project's loop,
        as :meth:`run_tool` calls run there), so :meth:`resolve` offers their tools. Entered in a thread
        that runs an event loop, where it cannot wait, the connection starts as a task of that loop (its
        tools join once it is done; a call of one waits for it)."""
        if self.project.generation.mcp_servers:
            from .loops import running_loop

            loop = running_loop()
            if loop is None:
                self.project.portal.call(self.project.mcp.ensure)
            else:
                self._connecting = loop.create_task(self.project.mcp.ensure())  # kept from the collector
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

        sub = self.project.generation.agent(agent)
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

    def resume_child(self, session_id: str) -> Session | None:
        """A subagent's session opened from this one earlier and kept in the store (``task`` by
        ``task_id``, after the process that ran it ended), opened again as :meth:`child` opens a new one:
        its own agent's model, else this session's; the same prompt, profile and host values. ``None``
        when the store has no child of this session by that id."""
        stored = self.project.store.session(session_id) if self.remember else None
        if stored is None or stored.get("parentID") != self.id:
            return None
        sub = self.project.generation.agent(stored.get("agent") or None)
        child = Session.resume(
            self.project,
            session_id,
            prompt=self.prompt,
            model=sub.model or self.model,
            profile=self.profile,
            extra=dict(self.extra),
            parent=self,
        )
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
        reply = decision.reply
        if reply == "always" and self.own_approvals:
            self._approve(request)
            reply = "once"
        with contextlib.suppress(NotFoundError):  # answered meanwhile ("always", or a sibling's reject)
            self.project.permissions.reply(request.id, reply, decision.feedback)

    def _approve(self, request: PermissionRequest) -> None:
        """Allow what an "always" answer covers, in this session only (see ``own_approvals``)."""
        granted = [Rule(request.permission, pattern, "allow", "always") for pattern in request.always]
        self.rules = [*self.rules, *granted]
        if self.remember and granted:
            self.project.store.add_approvals(self.id, [(rule.permission, rule.pattern) for rule in granted])

    async def ask(self, request: PermissionRequest) -> None:
        """Judge a permission request (core spec §8.5): deny raises, allow returns, ask prompts, unless a
        ``permission_ask`` hook settles it first."""
        request.session_id = self.id
        ruleset = merge(self.agent.permission, self.rules)
        plugins = self.project.plugins
        before = self.permission_ask_status if plugins.has_hook("permission_ask") else None
        await self.project.permissions.ask(
            request, ruleset, on_pending=self._on_pending, before_asking=before
        )

    async def permission_ask_status(self, request: PermissionRequest) -> str:
        """What the ``permission_ask`` hooks make of a request a rule would put to the user: ``"allow"``,
        ``"deny"`` or ``"ask"`` (also when no plugin implements the hook)."""
        from .permission import ACTIONS, AskOutput

        output = AskOutput()
        await self.project.plugins.acall("permission_ask", request=request, output=output)
        if output.status not in ACTIONS:
            self.project.warn(
                f"permission_ask: status {output.status!r} is not allow, deny or ask; the user is asked"
            )
            return "ask"
        return output.status

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
            truncator=project.generation.truncator,
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

    def run_tool(self, tool_id: str, args: dict[str, Any], *, abort: AbortSignal | None = None) -> ToolResult:
        """:meth:`execute` from sync code: the call runs on the project's loop (its portal, a thread of its
        own), and this thread waits for it; Ctrl-C (``KeyboardInterrupt``) there is the call's abort (the
        call ends as interrupted, then the interruption propagates). Inside a running event loop it refuses
        (it would block that loop): ``await session.execute(...)`` there."""
        from .loops import running_loop

        if running_loop() is not None:
            raise RuntimeError(
                "Session.run_tool() blocks, and this thread runs an event loop: "
                "use `await session.execute(...)` here"
            )
        signal = abort or AbortSignal()
        return self.project.portal.call(
            self._call, tool_id, dict(args), None, signal, interrupt=lambda: signal.abort("interrupted")
        )

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
        message = self.assistant()
        part = ToolCallPart(call_id or ascending_id("call"), tool_id, _plain(args))
        self.transcript.add_part(message, part)
        part.running()
        abort = abort or AbortSignal()
        self._running.add(abort)
        try:
            if before is not None:
                await before()
            result = await self._run(tool_id, args, call_id, abort, part)
        except BaseException as error:
            cancelled = isinstance(error, KeyboardInterrupt) or is_cancellation(error)
            part.fail(INTERRUPTED if cancelled else (str(error) or type(error).__name__))
            self.transcript.update_part(part)
            raise
        finally:
            self._running.discard(abort)
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
        generation = await self.project.ready()
        if generation.mcp_servers:
            await self.project.mcp.ensure(tool_id)
        tool = self.project.registry.get(tool_id).loaded()
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

        The offer belongs to the generation (:class:`~opencode_cli.generation.Offers`): it is made once
        per generation, agent, rules, model and host, and each call returns a copy of its own. From async
        code, :meth:`aresolve` (``async def`` hooks are awaited on the caller's loop).
        """
        generation = self.project.generation
        key, switches = self._offer_key(tools)
        made = generation.offers.get(key) if tools is None else None
        if made is None or made[0] is not self.agent:
            offer = generation.offer(
                self.model, self.agent, rules=self.rules, switches=switches, schemas=True
            )
            made = self._keep(generation, key, tools, offer)
        return self._hand_out(made[1])

    async def aresolve(self, tools: dict[str, bool] | None = None) -> list[WireTool]:
        """:meth:`resolve` on the caller's loop: the generation's registry and the ``tool_definition``
        hooks run there, ``async def`` implementations awaited."""
        generation = await self.project.ready()
        key, switches = self._offer_key(tools)
        made = generation.offers.get(key) if tools is None else None
        if made is None or made[0] is not self.agent:
            offer = await generation.aoffer(
                self.model, self.agent, rules=self.rules, switches=switches, schemas=True
            )
            made = self._keep(generation, key, tools, offer)
        return self._hand_out(made[1])

    def _offer_key(self, tools: dict[str, bool] | None) -> tuple[tuple[Any, ...], dict[str, bool] | None]:
        asker = self.extra.get(QUESTION_ASKER) is not None
        key = (id(self.agent), tuple(self.rules), self.model, self.profile, asker)
        switches = dict(tools or {})
        if not asker:  # nobody can answer: off, as the last switch
            switches.pop(QUESTION_TOOL, None)  # (the last matching switch decides, so no "*" turns it on)
            switches[QUESTION_TOOL] = False
        return key, switches or None

    def _keep(
        self, generation: Any, key: tuple[Any, ...], tools: dict[str, bool] | None, offer: Any
    ) -> tuple[Any, tuple[WireTool, ...]]:
        """The wire tools of ``offer`` for this session's profile, kept on the generation (per-request
        switches are not kept)."""
        from .collate import sort_key
        from .schema_profiles import adapt, can_be_strict, profile_for

        model = self.model
        profile = self.profile or (profile_for(model.provider, model.id) if model else "default")
        strict = {"openai": False, "openai-strict": True}.get(profile)
        wire = []
        for definition in offer.tools:
            schema = definition.parameters
            flag = False if strict and not can_be_strict(schema) else strict  # see schema.can_be_strict
            wire.append(WireTool(definition.id, definition.description, adapt(schema, profile), flag, schema))
        wire.sort(key=lambda tool: sort_key(tool.name))
        made = (self.agent, tuple(wire))
        if tools is None:
            generation.offers.put(key, made)
        return made

    def _hand_out(self, wire: tuple[WireTool, ...]) -> list[WireTool]:
        """The session's own copy of the wire tools (a host may change what it receives)."""
        mine = [tool.copy() for tool in wire]
        self._offered = {tool.name: tool for tool in mine}
        return mine

    # -- what happens to a call ----------------------------------------------------------------------

    def repair(self, call: ToolCall) -> tuple[str, dict[str, Any]]:
        """The tool and arguments a raw call becomes (core spec §4.2).

        A name that is only wrong in case becomes the lower-case tool; an unknown name, or arguments that
        are not valid JSON, turn the call into ``invalid`` with ``{tool, error}``. ``invalid`` itself is
        never offered but is a tool of the request all the same (OpenCode leaves it out of ``activeTools``
        only), so a model that calls it by name has it run, unless the session's rules deny it wholly (as
        an agent denying ``*`` does): then :meth:`dispatch` fails such a call, naming ``invalid``.
        """
        name, args, _, _ = self._repair(call)
        return name, args

    def _repair(self, call: ToolCall) -> tuple[str, dict[str, Any], bool, str | None]:
        """:meth:`repair`, whether the call was rerouted to ``invalid``, and the error of a reroute that
        cannot run: ``invalid`` is not in the call map when the session's rules deny it wholly (an agent
        denying ``*``), and then the repaired call fails as the AI SDK's does, naming ``invalid``."""
        offered = self._offered if self._offered is not None else {t.name: t for t in self.resolve()}

        def has_invalid() -> bool:  # asked only when a call needs rerouting: it costs a rules walk
            return bool(offered) and not disabled([INVALID], merge(self.agent.permission, self.rules))

        def unavailable(tool: str, with_invalid: bool) -> str:
            names = sorted(
                [*offered, *([INVALID] if with_invalid and self.lists_invalid else [])], key=_collate_key
            )
            listing = f"Available tools: {', '.join(names)}." if names else "No tools are available."
            return f"Model tried to call unavailable tool '{tool}'. {listing}"

        def rerouted(error: str) -> tuple[str, dict[str, Any], bool, str | None]:
            available = has_invalid()
            refusal = None if available else unavailable(INVALID, False)
            return INVALID, {"tool": call.name, "error": error}, True, refusal

        name = call.name
        if name not in offered and not (name == INVALID and has_invalid()):
            lowered = name.lower()
            if lowered != name and lowered in offered:
                name = lowered
            else:
                return rerouted(unavailable(call.name, has_invalid()))
        raw = call.arguments
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return name, {}, False, None
        if not isinstance(raw, str):
            return name, dict(raw) if isinstance(raw, dict) else raw, False, None  # type: ignore[return-value]
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError) as error:  # not JSON, nested too deeply, a number too long
            if isinstance(error, RecursionError):
                error = ValueError("nested too deeply")  # type: ignore[assignment]
            text = raw if len(raw) <= 2000 else raw[:2000] + f"… ({len(raw)} characters)"
            message = (
                f"Invalid input for tool {name}: JSON parsing failed: Text: {text}.\nError message: {error}"
            )
            return rerouted(message)
        return name, parsed, False, None

    def _unavailable(self, call: ToolCall, call_id: str, error: str) -> ToolPart:
        """A call that cannot run at all (rerouted to an ``invalid`` the session does not have): an error
        part of the current step, as the tool the model named, with its arguments as it sent them."""

        args: Any = call.arguments
        if isinstance(args, str):
            with contextlib.suppress(ValueError, RecursionError):
                args = json.loads(args)
        args = args if isinstance(args, dict) else {}
        recorded = ToolCallPart(call_id, call.name, _plain(args))
        self.transcript.add_part(self.assistant(), recorded)
        recorded.running()
        recorded.fail(error)
        self.transcript.update_part(recorded)
        part = ToolPart(call_id, call.name, dict(args), "error", error=error, requested=call.name)
        part.outcome = Outcome.INVALID_ARGUMENTS
        return part

    async def dispatch(self, call: ToolCall, *, abort: AbortSignal | None = None) -> ToolPart:
        """Run a raw call the way OpenCode does: repair, doom-loop check, hooks, the tool; never raises
        for the call's own failures (they become an ``error`` part with the model-facing text)."""
        call_id = call.id or ascending_id("call")
        generation = await self.project.ready()
        if generation.mcp_servers:
            await self.project.mcp.ensure(call.name)  # its server connects (again) before the repair
        if self._offered is None:
            await self.aresolve()
        name, args, rerouted, unavailable = self._repair(call)
        if unavailable is not None:
            return self._unavailable(call, call_id, unavailable)
        part = ToolPart(call_id, name, args if isinstance(args, dict) else {}, "error", requested=call.name)
        offered = self._offered or {}
        if self.profile == "openai-strict" and name in offered and isinstance(args, dict):
            args = strict_nulls_to_absent(args, offered[name].normalized)
            part.input = args
        try:
            result = await self._call(
                name, args, call_id, abort, lambda: self._doom_loop_check(call_id, call.name, name, args)
            )
        except Exception as error:
            part.error = error_text(error)
            part.outcome = Outcome.of(error)
            _let_go(error)
            return part
        part.status = "completed"
        part.outcome = Outcome.INVALID_ARGUMENTS if rerouted else Outcome.COMPLETED
        part.output, part.title = result.output, result.title
        part.metadata, part.attachments = result.metadata, result.attachments
        if rerouted:
            part.metadata = {**part.metadata, "rerouted": True}
        return part

    async def _doom_loop_check(self, call_id: str, requested: str, name: str, args: Any) -> None:
        """Ask ``doom_loop`` when the last three parts of the current assistant message are this call and
        two before it of the same tool (the name the model wrote) with the same input, none pending (as
        OpenCode's processor does): a text part in between, or a new step, starts the count over."""

        parts = self.assistant().parts
        mine = next(
            (p for p in reversed(parts) if isinstance(p, ToolCallPart) and p.call_id == call_id), None
        )
        if mine is None:
            return
        mine.fingerprint = _fingerprint(requested, args, call_id)
        window = parts[-DOOM_LOOP_THRESHOLD:]
        if len(window) < DOOM_LOOP_THRESHOLD or not all(
            isinstance(p, ToolCallPart) and p.status != "pending" and p.fingerprint == mine.fingerprint
            for p in window
        ):
            return
        request = PermissionRequest(
            id="",
            session_id=self.id,
            permission="doom_loop",
            patterns=[name],
            always=[name],
            metadata={"tool": name, "input": args},
        )
        from .errors import RejectedError

        try:
            await self.project.permissions.ask(request, self.agent.permission, on_pending=self._on_pending)
        except RejectedError:
            if self.prompt is refuse_without_terminal:  # nobody refused it: say what did
                raise RejectedError(DOOM_LOOP_REFUSED.format(tool=name)) from None
            raise


def _fingerprint(requested: str, args: Any, call_id: str) -> str:
    """What makes two calls identical: the tool name the model wrote and a digest of the canonical input
    (a digest: a part holds it as long as the part is held; arguments that cannot be serialised are never
    identical to another call's)."""
    import hashlib

    try:
        canonical = json.dumps(args, sort_keys=True, default=str).encode("utf-8", "surrogatepass")
    except (ValueError, TypeError, RecursionError):  # arguments validation will refuse the call
        return f"{requested}\0<unserialisable {call_id}>"
    return f"{requested}\0{hashlib.blake2b(canonical, digest_size=20).hexdigest()}"


def _held_bytes(project: Project) -> int:
    """``transcript.max_bytes`` of the project's config: the characters of parts a transcript holds in
    memory (a value that is not a positive whole number is warned about, and the default used)."""
    from .limits import TRANSCRIPT_BYTES

    value = project.config.get("transcript.max_bytes", TRANSCRIPT_BYTES)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        project.warn(
            f"transcript.max_bytes: {value!r} is not a positive whole number; {TRANSCRIPT_BYTES} used"
        )
        return TRANSCRIPT_BYTES
    return value


def _collate_key(name: str) -> Any:
    from .collate import sort_key

    return sort_key(name)


def _plain(args: Any) -> dict[str, Any]:
    """A JSON-safe copy of a call's arguments, as the transcript keeps them."""
    if not isinstance(args, dict):
        return {}
    if is_flat_json(args):
        return dict(args)  # what the round trip through JSON would give, without it
    try:
        return json.loads(json.dumps(args, default=str))
    except (ValueError, RecursionError):  # nested too deeply, a number too long: the call will be refused
        return {}


def _let_go(error: BaseException) -> None:
    """Clear the tracebacks of a failed call's error and of the errors it chains to: a frame in a
    traceback that holds the error itself (a tool keeping an error to raise later) makes a cycle, and
    the call's arguments (9 MiB of them, say) would wait for the cycle collector to go."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        error.__traceback__ = None
        error = error.__cause__ or error.__context__  # type: ignore[assignment]


def error_text(error: Exception) -> str:
    """The model-facing text of a failed call: a tool's own error as it is; any other exception, a bug in
    the tool, as one line naming its type (the traceback on stderr when ``OPENCODE_DEBUG`` is set). A text
    longer than :data:`MAX_ERROR_CHARS` (an error quoting a huge argument) is cut in its middle, so its start
    and its end (where the reason usually stands) are kept."""
    text = _error_text(error)
    if len(text) <= MAX_ERROR_CHARS:
        return text
    half = MAX_ERROR_CHARS // 2
    return f"{text[:half]}… (cut: {len(text)} characters) …{text[-half:]}"


#: The longest error text a part keeps (an error quoting a huge argument is cut to this).
MAX_ERROR_CHARS = 4000


def _error_text(error: Exception) -> str:
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
