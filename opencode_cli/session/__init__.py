"""A session: what a model is offered and what happens to the calls it makes (core spec §4, §6, §8.4).

:class:`Session` is the face a host holds; each of its jobs lives in a module of its own, as an object the
session owns:

- :mod:`.offering` (``session.offering``): the wire tools of a request (:meth:`Session.resolve`);
- :mod:`.repair`: what a raw call becomes (a wrong-case name; anything else rerouted to ``invalid``);
- :mod:`.calls` (``session.calls``): the call pipeline, from :meth:`Session.dispatch` (repair, the
  doom-loop ask, the hooks, the tool's wrap) to the part that says how the call ended (:class:`Outcome`);
- :mod:`.asking` (``session.asks``): permission asks, judged by the rules and put to ``prompt``;
- :mod:`.turns` (``session.turns``): the transcript window and the assistant message calls belong to.

The glue to the run loop is :meth:`Session.run` (:mod:`opencode_cli.models.loop`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..context import AbortSignal, MetadataSink, ToolContext
from ..modelref import ModelRef
from ..parts import (
    DOOM_LOOP_REFUSED,
    DOOM_LOOP_THRESHOLD,
    Decision,
    Outcome,
    Prompt,
    ToolCall,
    ToolPart,
    WireTool,
)
from ..permission import Rule, Ruleset, merge
from ..truncate import ascending_id
from .asking import Asks, refuse_without_terminal
from .calls import Calls, live_progress
from .offering import QUESTION_ASKER, QUESTION_TOOL, Offering
from .repair import repair
from .turns import Turns, recorded

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from ..agents import Agent
    from ..mcp.relay import Relay
    from ..models.loop import RunResult
    from ..project import Project
    from ..results import ToolResult
    from ..transcript import Message, ToolCallPart, Transcript

__all__ = [
    "DEFAULT_WINDOW",
    "DOOM_LOOP_REFUSED",
    "DOOM_LOOP_THRESHOLD",
    "QUESTION_ASKER",
    "QUESTION_TOOL",
    "Decision",
    "Outcome",
    "Prompt",
    "Session",
    "ToolCall",
    "ToolPart",
    "WireTool",
    "recorded",
    "refuse_without_terminal",
]

#: Messages a session's transcript holds in memory by default (see ``Session.window``).
DEFAULT_WINDOW = 1000


class Session:
    """A conversation's worth of tool calls for one agent; use it as a context manager.

    ``rules`` are the session's own permission rules (OpenCode's session ruleset, and the CLI's
    ``--allow``/``--deny``); approvals given with "always" under a named session id are kept in the
    project's store and come back when a session with that id is opened again. Closing a session stops
    the permission prompts it still has open; nothing of it stays subscribed to the project.
    """

    def __init__(
        self,
        project: Project,
        agent: Agent,
        id: str | None = None,
        rules: Ruleset | None = None,
        prompt: Prompt = refuse_without_terminal,
        on_metadata: MetadataSink | None = None,
        remember: bool = False,
        model: ModelRef | str | None = None,
        profile: str | None = None,
        extra: dict[str, Any] | None = None,
        relay: Relay | None = None,
        parent: Session | None = None,
        title: str = "",
        window: int | None = DEFAULT_WINDOW,
        own_approvals: bool = False,
        lists_invalid: bool = True,
    ) -> None:
        self.project = project
        self.agent = agent
        self.id: str = id if id is not None else ascending_id("ses")
        self.rules: Ruleset = [] if rules is None else rules
        self.prompt = prompt
        self.on_metadata = on_metadata
        self.remember = remember
        """Keep this session (its transcript, its "always" approvals) in the store: hosts set it for
        named sessions; a session opened again with the same id resumes them."""
        self.model: ModelRef | None = ModelRef.coerce(model)
        """The model requests are made for (per-model filter and schema profile)."""
        self.profile = profile
        """Override the provider's schema profile (e.g. ``openai-strict``)."""
        self.extra: dict[str, Any] = {} if extra is None else extra
        """Host values added to every call's ``ctx.extra`` (``"question"``: how the ``question`` and
        ``plan_exit`` tools reach the user)."""
        self.relay = relay
        """What the host relays of an MCP server's tool call to its client (``opencode mcp serve``'s)."""
        self.parent = parent
        """The session that opened this one with :meth:`child` (a subagent's session), if any."""
        self.title = title
        self.window = window
        """How many of the latest messages the transcript holds in memory (older ones stay in the store
        when the session is remembered); ``None`` holds them all. :meth:`run` sends the held messages as
        the conversation, so a run longer than the window sends only its latest messages."""
        self.own_approvals = own_approvals
        """"always" answers given in this session allow only this session's calls (they join its rules,
        and the store when remembered) instead of every session of the project (OpenCode's default): for
        a host whose sessions belong to different people, such as ``opencode mcp serve``'s clients."""
        self.lists_invalid = lists_invalid
        """Whether the unknown-tool error names ``invalid`` among the available tools (as OpenCode's AI
        SDK lists every tool); ``opencode mcp serve``, whose clients never see ``invalid``, leaves it out."""
        if self.profile is not None:
            from ..schema_profiles import check_profile

            self.profile = check_profile(self.profile)
        self.closed = False
        self.children: dict[str, Session] = {}
        """The sessions :meth:`child` opened from this one, by id (``task`` continues them)."""
        self.turns = Turns(self)
        """The transcript and the assistant message calls are recorded in (:mod:`.turns`)."""
        self.turns.record_agent(self.agent.name)  # a kept session opened with another agent: the switch
        self.offering = Offering(self)
        """What the model is offered (:mod:`.offering`)."""
        self.calls = Calls(self)
        """The call pipeline and the calls running now (:mod:`.calls`)."""
        self.asks = Asks(self)
        """Permission asks and the prompts still open (:mod:`.asking`)."""
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
        from ..errors import NotFoundError
        from ..permission import ACTIONS

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
        agent, model = recorded(project, session_id, options.pop("agent", None), options.pop("model", None))
        return cls(
            project, project.generation.agent(agent), id=session_id, remember=True, model=model, **options
        )

    # -- the transcript ------------------------------------------------------------------------------

    @property
    def transcript(self) -> Transcript:
        """The conversation so far (OpenCode's messages and parts); kept in the store when remembered."""
        return self.turns.transcript

    @property
    def messages(self) -> list[Message]:
        """The transcript's messages, oldest first (``ctx.messages`` of every call)."""
        return self.turns.transcript.messages

    def user(self, text: str, *, synthetic: bool = False) -> Message:
        """Add a user message to the transcript; the next tool calls belong to a new assistant message."""
        return self.turns.user(text, synthetic=synthetic)

    def step(self, *, continues: bool = False) -> Message:
        """Mark the start of a new model response (a step): the calls dispatched from now on belong to a
        new assistant message, and the doom-loop window (three identical calls in a row) starts over, as
        in OpenCode, unless the step ``continues`` the window of the one before.

        :meth:`run` starts one per model step, each continuing the run's window (a model that makes the
        same call step after step is asked about, where OpenCode's per-step window never sees it); a host
        running its own loop calls it before dispatching the calls of each response (without it, every
        call since the last user message is one step).
        """
        return self.turns.new_assistant(continues=continues)

    def assistant(self) -> Message:
        """The assistant message tool calls are recorded in (a new one after a user message)."""
        return self.turns.assistant()

    def use_agent(self, agent: Agent | str) -> Agent:
        """Run the calls from now on as ``agent`` (a name is looked up in the project): its permissions,
        its tools. The transcript's session info records the new agent."""
        chosen = self.project.generation.agent(agent) if isinstance(agent, str) else agent
        if chosen is not self.agent:
            self.agent = chosen
            self.offering.last = None
            self.turns.record_agent(chosen.name)
        return self.agent

    async def run(self, prompt: str, *, abort: AbortSignal | None = None, on_event: Any = None) -> RunResult:
        """Send ``prompt`` to the session's model and run its tool calls until it answers (the agent loop:
        :mod:`opencode_cli.models.loop`). ``on_event(kind, data)`` sees the run as it happens."""
        from ..models.loop import run

        return await run(self, prompt, abort=abort, on_event=on_event)

    # -- lifecycle -------------------------------------------------------------------------------------

    def close(self) -> None:
        """End the session: calls still running are aborted (their abort signal is set, so each ends as
        interrupted, and no write is cut in half) and prompts still open are cancelled (their requests
        are rejected)."""
        self.closed = True
        self.calls.abort_all("session closed")
        self.asks.cancel()

    def __enter__(self) -> Session:
        """The sync form of ``async with``: the configured MCP servers connect (on the project's loop,
        as :meth:`run_tool` calls run there), so :meth:`resolve` offers their tools. Entered in a thread
        that runs an event loop, where it cannot wait, the connection starts as a task of that loop (its
        tools join once it is done; a call of one waits for it)."""
        if self.project.generation.mcp_servers:
            from ..loops import running_loop

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
        from ..permission import inherited

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
            "relay": self.relay,
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
            relay=self.relay,
            parent=self,
        )
        self.children[child.id] = child
        return child

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
        return self.offering.resolve(tools)

    async def aresolve(self, tools: dict[str, bool] | None = None) -> list[WireTool]:
        """:meth:`resolve` on the caller's loop: the generation's registry and the ``tool_definition``
        hooks run there, ``async def`` implementations awaited."""
        return await self.offering.aresolve(tools)

    # -- running calls -------------------------------------------------------------------------------

    def repair(self, call: ToolCall) -> tuple[str, dict[str, Any]]:
        """The tool and arguments a raw call becomes (core spec §4.2, :mod:`.repair`), against the tools
        handed out last: a name only wrong in case becomes the lower-case tool; an unknown name, or
        arguments that are not valid JSON, turn the call into ``invalid`` with ``{tool, error}``."""
        offered = self.offering.offered()
        name, args, _, _ = repair(
            call, offered, self.agent.permission, self.rules, lists_invalid=self.lists_invalid
        )
        return name, args

    def dispatch(self, call: ToolCall, *, abort: AbortSignal | None = None) -> Coroutine[Any, Any, ToolPart]:
        """Run a raw call the way OpenCode does: repair, doom-loop check, hooks, the tool; never raises
        for the call's own failures (they become an ``error`` part with the model-facing text). Await it
        (the coroutine is :class:`Calls`', handed over as it is: one frame fewer for every call)."""
        return self.calls.dispatch(call, abort)

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
        return await self.calls.recorded(tool_id, args, call_id, abort)

    def run_tool(self, tool_id: str, args: dict[str, Any], *, abort: AbortSignal | None = None) -> ToolResult:
        """:meth:`execute` from sync code: the call runs on the project's loop (its portal, a thread of its
        own), and this thread waits for it; Ctrl-C (``KeyboardInterrupt``) there is the call's abort (the
        call ends as interrupted, then the interruption propagates). Inside a running event loop it refuses
        (it would block that loop): ``await session.execute(...)`` there."""
        from ..loops import running_loop

        if running_loop() is not None:
            raise RuntimeError(
                "Session.run_tool() blocks, and this thread runs an event loop: "
                "use `await session.execute(...)` here"
            )
        signal = abort or AbortSignal()
        return self.project.portal.call(
            self.calls.recorded,
            tool_id,
            dict(args),
            None,
            signal,
            interrupt=lambda: signal.abort("interrupted"),
        )

    async def execute_inner(
        self, tool_id: str, args: dict[str, Any], *, call_id: str, abort: AbortSignal | None = None
    ) -> ToolResult:
        """Run a call made from inside another call (a code-mode script's call of an MCP tool): the same
        hooks, permission asks and tool wrap as :meth:`execute`, but not recorded as a part of the
        transcript (the outer call's metadata lists it)."""
        return await self.calls.run(tool_id, args, call_id, abort, None)

    def context(
        self,
        tool_id: str,
        call_id: str | None,
        abort: AbortSignal | None = None,
        part: ToolCallPart | None = None,
    ) -> ToolContext:
        """The :class:`ToolContext` for one call (``part``: its transcript part, shown live progress). Every
        call's context is made here, so a host that extends it (a subclass) sees every call."""
        project = self.project
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
            asker=self.asks.ask,
            on_metadata=self.on_metadata if part is None else live_progress(part, self.on_metadata),
            task_capable=self.agent.task_capable,
            truncator=project.generation.truncator,
            env=project.env,
            project=project,
            session=self,
            model=self.model,
            relay=self.relay,
        )
