"""A session's call pipeline (core spec §4, §6.3, §8.4).

:meth:`Calls.dispatch` takes a raw call as the model sent it: repair (:mod:`.repair`), the doom-loop ask
after three identical calls in one step, then the call itself. Each call: ``tool_execute_before``
(in-place argument changes; raising blocks the call) → ``tool_execute`` (the built-in implementation runs
the tool's wrap: validate → execute → truncate; plugins may wrap or replace it) → part ids on attachments
→ ``tool_execute_after``. A call is recorded as a tool part of the session's current assistant message
and shows its progress there; the part :meth:`Calls.dispatch` returns says how it ended
(:class:`~opencode_cli.parts.Outcome`).
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from ..arguments import is_flat_json
from ..context import AbortSignal, MetadataSink
from ..errors import INTERRUPTED, RejectedError, error_text, message_of
from ..loops import is_cancellation
from ..parts import DOOM_LOOP_REFUSED, DOOM_LOOP_THRESHOLD, Outcome, ToolCall, ToolPart
from ..permission import Request as PermissionRequest
from ..transcript import ToolCallPart
from ..truncate import ascending_id
from .asking import refuse_without_terminal
from .repair import repair

if TYPE_CHECKING:
    from ..generation import Generation
    from ..results import ToolResult
    from . import Session


class Calls:
    """The calls of one session: how each runs, and the aborts of those still running."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.running: set[AbortSignal] = set()
        """The abort signals of the calls running now (:meth:`abort_all` sets them)."""

    def abort_all(self, reason: str) -> None:
        """Abort every call still running: each ends as interrupted, and no write is cut in half."""
        for signal in list(self.running):
            signal.abort(reason)

    async def ready(self, tool_id: str | None) -> Generation:
        """The readiness check of a call, made once per call: the current generation, its registry built
        on this loop, and the MCP servers ``tool_id`` may come from connected (again). A server that
        connects brings its tools in a new generation, which the call then runs in."""
        project = self.session.project
        generation = project.generations.current
        if not generation.built():  # the first call of a generation builds its registry on this loop
            generation = await project.ready()
        if generation.mcp_servers:
            await project.mcp.ensure(tool_id)
            if project.generation is not generation:
                generation = await project.ready()
        return generation

    async def recorded(
        self,
        tool_id: str,
        args: Any,
        call_id: str | None,
        abort: AbortSignal | None,
        requested: str | None = None,
        generation: Generation | None = None,
    ) -> ToolResult:
        """Run a call as a tool part of the current assistant message (``requested``: the tool name the
        model wrote, when the doom-loop check is to be made once the part is recorded, which may refuse
        the call; ``generation``: the one :meth:`ready` gave, when the caller made the check already)."""
        session = self.session
        flat = is_flat_json(args)  # most calls: copied and fingerprinted without a walk or JSON
        part = ToolCallPart(call_id or ascending_id("call"), tool_id, dict(args) if flat else _plain(args))
        if requested is not None:  # what the doom-loop check compares: the call as the model sent it
            part.fingerprint = _fingerprint(requested, args, part.call_id, flat)
        session.transcript.add_part(session.assistant(), part)
        part.running()
        abort = abort or AbortSignal()
        self.running.add(abort)
        try:
            result = await self.run(tool_id, args, call_id, abort, part, requested, generation)
        except BaseException as error:
            cancelled = isinstance(error, KeyboardInterrupt) or is_cancellation(error)
            asked = getattr(error, "permission", None)  # a refused ask: which (opencode stats reads it)
            part.fail(
                INTERRUPTED if cancelled else message_of(error), {"permission": asked} if asked else None
            )
            session.transcript.update_part(part)
            raise
        finally:
            self.running.discard(abort)
        part.complete(result.output, result.title, result.metadata, result.attachments)
        session.transcript.update_part(part)
        return result

    def run(
        self,
        tool_id: str,
        args: Any,
        call_id: str | None,
        abort: AbortSignal | None,
        part: ToolCallPart | None,
        requested: str | None = None,
        generation: Generation | None = None,
    ) -> Awaitable[ToolResult]:
        """Run a call inside the ``tool_call`` wrappers: the doom-loop check of its recorded ``part``
        (its transcript part, if recorded) when ``requested`` names the tool the model wrote (it may refuse
        the call), then the hooks and the tool's wrap, in ``generation`` (else the one :meth:`ready`
        gives). Returns the awaitable of its result (a coroutine of its own would be one more for every
        call to pass through)."""
        session = self.session
        plugins = session.project.plugins
        if not plugins.has_several("tool_call"):  # core's alone: it would return proceed()
            return self._execute(tool_id, args, call_id, abort, part, requested, generation)
        proceed = functools.partial(self._execute, tool_id, args, call_id, abort, part, requested, generation)
        names = _hook_names(session, tool_id, call_id, args)
        running = plugins.call("tool_call", **names, session=session, proceed=proceed)
        return running if running is not None else proceed()

    async def _execute(
        self,
        tool_id: str,
        args: Any,
        call_id: str | None,
        abort: AbortSignal | None,
        part: ToolCallPart | None,
        requested: str | None,
        generation: Generation | None,
    ) -> ToolResult:
        """The doom-loop check (see :meth:`run`), then the execution hooks around the tool's wrap."""
        if requested is not None and part is not None:
            await self._doom_loop_check(part, requested, tool_id, args)
        session = self.session
        plugins = session.project.plugins
        if generation is None:
            generation = await self.ready(tool_id)
        tool = generation.registry.get(tool_id).loaded()
        names = _hook_names(session, tool_id, call_id, args)
        if plugins.has_hook("tool_execute_before"):  # most projects have none: no call to make
            await plugins.acall("tool_execute_before", **names)
        ctx = session.context(tool_id, call_id, abort, part)  # the session's, which a host may extend
        running = None  # core's alone (essential, never disabled) would return tool.run(args, ctx)
        if plugins.has_several("tool_execute"):
            running = plugins.call("tool_execute", tool=tool, args=args, ctx=ctx)
        result = await (running if running is not None else tool.run(args, ctx))
        for attachment in result.attachments:
            attachment.id = attachment.id or ascending_id("prt")
        if plugins.has_hook("tool_execute_after"):
            await plugins.acall("tool_execute_after", **names, result=result)
        return result

    async def dispatch(self, call: ToolCall, abort: AbortSignal | None = None) -> ToolPart:
        """See :meth:`Session.dispatch <opencode_cli.session.Session.dispatch>`."""
        session = self.session
        call_id = call.id or ascending_id("call")
        generation = await self.ready(call.name)  # its server connects (again) before the repair
        offered = await session.offering.current(generation)
        rulesets = (session.agent.permission, session.rules)
        name, args, rerouted, refusal = repair(call, offered, *rulesets, lists_invalid=session.lists_invalid)
        if refusal is not None:
            return self._cannot_run(call, call_id, refusal)
        part = ToolPart(call_id, name, args if isinstance(args, dict) else {}, "error", requested=call.name)
        if session.profile == "openai-strict" and name in offered and isinstance(args, dict):
            from ..schema_profiles import strict_nulls_to_absent

            args = strict_nulls_to_absent(args, offered[name].normalized)
            part.input = args
        try:
            result = await self.recorded(
                name,
                args,
                call_id,
                abort,
                call.name,
                generation,
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

    def _cannot_run(self, call: ToolCall, call_id: str, error: str) -> ToolPart:
        """A call that cannot run at all (rerouted to an ``invalid`` the session does not have): an error
        part of the current step, as the tool the model named, with its arguments as it sent them."""
        session = self.session
        args: Any = call.arguments
        if isinstance(args, str):
            with contextlib.suppress(ValueError, RecursionError):
                args = json.loads(args)
        args = args if isinstance(args, dict) else {}
        recorded = ToolCallPart(call_id, call.name, _plain(args))
        session.transcript.add_part(session.assistant(), recorded)
        recorded.running()
        recorded.fail(error)
        session.transcript.update_part(recorded)
        part = ToolPart(call_id, call.name, dict(args), "error", error=error, requested=call.name)
        part.outcome = Outcome.INVALID_ARGUMENTS
        return part

    async def _doom_loop_check(self, mine: ToolCallPart, requested: str, name: str, args: Any) -> None:
        """Ask ``doom_loop`` when the last three parts of the doom-loop window are this call (``mine``, its
        part) and two before it of the same tool (the name the model wrote) with the same input, none
        pending (as OpenCode's processor does): a text part in between, or a new step, starts the count
        over; the steps of one :meth:`Session.run <opencode_cli.session.Session.run>` are one window
        (:meth:`Turns.recent_parts <opencode_cli.session.turns.Turns.recent_parts>`), so a model repeating
        a call step after step is stopped too."""
        session = self.session
        window = session.turns.recent_parts(DOOM_LOOP_THRESHOLD)
        if len(window) < DOOM_LOOP_THRESHOLD or not all(
            isinstance(p, ToolCallPart) and p.status != "pending" and p.fingerprint == mine.fingerprint
            for p in window
        ):
            return
        request = PermissionRequest(
            id="",
            session_id=session.id,
            permission="doom_loop",
            patterns=[name],
            always=[name],
            metadata={"tool": name, "input": args},
        )
        try:
            await session.project.permissions.ask(
                request, session.agent.permission, on_pending=session.asks.put_to_user
            )
        except RejectedError:
            if session.prompt is refuse_without_terminal:  # nobody refused it: say what did
                refused = RejectedError(DOOM_LOOP_REFUSED.format(tool=name))
                refused.permission = "doom_loop"
                raise refused from None
            raise


def _hook_names(session: Session, tool_id: str, call_id: str | None, args: Any) -> dict[str, Any]:
    """The arguments every hook of a call gets: the tool, the session, the call's id and its arguments."""
    return {"tool": tool_id, "session_id": session.id, "call_id": call_id, "args": args}


def _fingerprint(requested: str, args: Any, call_id: str, flat: bool) -> str:
    """What makes two calls identical: the tool name the model wrote and a digest of the canonical input
    (a digest: a part holds it as long as the part is held; arguments that cannot be serialised are never
    identical to another call's). Fingerprints are compared within one process only (a part never saves
    its own), so the interpreter's hash of the canonical text serves, without loading :mod:`hashlib`.
    ``flat`` arguments (:func:`~opencode_cli.arguments.is_flat_json`) are hashed as their sorted items with
    each value's type, which tells apart what JSON tells apart (``1``, ``1.0``, ``true``), unserialised."""
    if flat:
        items = tuple((key, type(value), value) for key, value in sorted(args.items()))
        return f"{requested}\0{hash(items):x}"
    try:
        canonical = json.dumps(args, sort_keys=True, default=str)
    except (ValueError, TypeError, RecursionError):  # arguments validation will refuse the call
        return f"{requested}\0<unserialisable {call_id}>"
    return f"{requested}\0{hash(canonical):x}"


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


def live_progress(part: ToolCallPart, sink: MetadataSink | None) -> MetadataSink:
    """A metadata sink that also shows the progress on the call's transcript part."""

    def report(title: str | None, metadata: dict[str, Any] | None) -> None:
        with contextlib.suppress(ValueError):  # the part already finished
            part.running(title, metadata)
        if sink is not None:
            sink(title, metadata)

    return report
