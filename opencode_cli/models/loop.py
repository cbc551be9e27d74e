"""The loop that drives a model: ``Session.run(prompt)``.

One turn: the agent's system prompt and the environment, the transcript so far, the tools of
``session.resolve()`` → the model's streamed reply → its tool calls dispatched (concurrently, as the
model may ask for several at once) and recorded → again, until the model answers without calling a tool
or the agent's step limit (``[agent.NAME] steps``, :data:`DEFAULT_STEPS` when unset) is reached; then one
last request without tools asks for the answer. A run's steps are one doom-loop window, so a model that
makes the same call step after step is asked about (and, with nobody to ask, stopped). A session with no
title is titled from its first prompt. Every message lands in the session's transcript (kept in the store
for a remembered session, so a run can be resumed). An abort stops the stream or the tools in flight at once.
"""

from __future__ import annotations

import asyncio
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..telemetry import off, tracing
from .conversation import conversation
from .hooks import ChatParams, EventRelay, PreparedRequest

if TYPE_CHECKING:
    from ..context import AbortSignal
    from ..session import Session, ToolPart
    from ..transcript import Message as TranscriptMessage
    from .chat import ChatModel

#: Called with each event of a run: ``("text", {"text"})``, ``("tool-start", {"callID", "tool"})``,
#: ``("tool-end", part_dict)``, ``("step", {"step"})``, ``("finish", {"reason", "text"})``.
EventSink = Callable[[str, dict[str, Any]], None]

#: The words sent after the last step allowed, with no tools, so the model answers with what it has.
STEP_LIMIT_NOTE = (
    "The step limit of this agent is reached: no tool can be called any more. Answer now with what you "
    "found and what is left to do."
)

#: The steps a run may take when its agent sets no ``steps`` (OpenCode has no limit by default; a run
#: that never ends is worse than one that stops and says so: ``[agent.NAME] steps`` sets another).
DEFAULT_STEPS = 200
#: The longest title a session gets from its first prompt (the characters after it become "…").
TITLE_LENGTH = 50

#: Used when an agent has no ``prompt`` of its own.
DEFAULT_SYSTEM = (
    "You are a coding agent working in the user's project. Use the tools you are given to look at files, "
    "change them and run commands; keep your answers short and concrete, and say what you changed."
)


@dataclass
class RunResult:
    """What a run ended with: the final text, why it stopped, and how many model requests it made."""

    text: str
    reason: str
    steps: int
    usage: dict[str, Any] = field(default_factory=dict)


def system_prompt(session: Session) -> str:
    """The agent's prompt (or ours) and the environment the model works in, as one text."""
    return "\n\n".join(system_parts(session))


def system_parts(session: Session) -> list[str]:
    """The system prompt's parts: the agent's prompt (or ours), then the environment the model works in."""
    project = session.project
    prompt = getattr(session.agent, "prompt", None) or DEFAULT_SYSTEM
    environment = "\n".join(
        [
            "<env>",
            f"  Working directory: {project.directory}",
            f"  Is directory a git repo: {'yes' if project.worktree else 'no'}",
            f"  Platform: {platform.system().lower()}",
            f"  Today's date: {date.today().isoformat()}",
            "</env>",
        ]
    )
    return [prompt, environment]


async def run(
    session: Session,
    prompt: str,
    *,
    abort: AbortSignal | None = None,
    on_event: EventSink | None = None,
    model: ChatModel | None = None,
    files: Sequence[Path] = (),
) -> RunResult:
    """Run ``prompt`` in ``session`` until the model answers (see the module docstring).

    ``model`` (from :func:`~opencode_cli.models.chat.resolve_model`) is the session's model by default.
    The model is chosen before the prompt is stored (a model that cannot be chosen leaves the session
    as it was); from then on whatever the run did is kept, also when it is interrupted. ``files`` are
    attached to the prompt (:mod:`opencode_cli.models.attach`).

    A call whose permission ask was rejected without feedback (or refused, nobody being there to ask)
    ends the run with reason ``rejected``, the model not asked again, as OpenCode's loop does; with
    ``experimental.continue_loop_on_deny = true`` the rejection goes back to the model instead."""
    from ..context import AbortSignal
    from .attach import attach_files
    from .chat import resolve_model

    abort = abort or AbortSignal()
    emit = on_event or (lambda kind, data: None)
    model = model or await resolve_model(session.project, session.model)
    traced = tracing(session.project.plugins) or off()
    async with EventRelay(session):
        _title(session, prompt)
        message = session.user(prompt)
        await attach_files(session, message, files)
        await _chat_message(session, model, message)
        await model.connect(session.project)
        with traced.agent(session, model) as span:  # its chats and calls are its children
            result = await _steps(session, model, abort, emit, traced)
            span.finished(result.reason, result.steps)
            return result


def title_of(prompt: str) -> str:
    """A session's title made from its first prompt: its first line with text, white space folded, at
    most :data:`TITLE_LENGTH` characters (cut at a word where one ends late enough, and marked "…")."""
    line = next((" ".join(line.split()) for line in prompt.splitlines() if line.strip()), "")
    if len(line) <= TITLE_LENGTH:
        return line
    cut = line[: TITLE_LENGTH - 1]
    word = cut.rsplit(" ", 1)[0]
    return (word if len(word) >= TITLE_LENGTH // 2 else cut).rstrip() + "…"


def _title(session: Session, prompt: str) -> None:
    """Title a session that has none from the prompt it starts with (as OpenCode titles a new session)."""
    info = session.transcript.info
    if not info.title and not session.transcript.messages:
        info.title = title_of(prompt)
        session.transcript.update_session()


async def prepare_request(session: Session, model: ChatModel, prompt: str) -> PreparedRequest:
    """Add ``prompt`` to ``session`` as a run does and return the first request the model would get,
    after ``chat_message``, ``chat_system_transform``, ``chat_messages_transform``, ``chat_params`` and
    ``chat_headers``; nothing is sent (the plugin test kit's ``chat_request``)."""
    message = session.user(prompt)
    await _chat_message(session, model, message)
    return PreparedRequest(*await _request(session, model, last=False))


async def _chat_message(session: Session, model: ChatModel, message: TranscriptMessage) -> None:
    """The ``chat_message`` hook; the parts it left are saved (new ones added)."""
    plugins = session.project.plugins
    if not plugins.implementers("chat_message"):
        return
    parts = list(message.parts)
    await plugins.acall(
        "chat_message",
        session_id=session.id,
        agent=session.agent.name,
        model=model,
        message=message,
        parts=parts,
    )
    for part in parts:
        if part in message.parts:
            session.transcript.update_part(part)
        else:
            session.transcript.add_part(message, part)


async def _request(
    session: Session, model: ChatModel, last: bool
) -> tuple[list[Any], ChatParams, dict[str, str]]:
    """The messages, sampling settings and headers of the next request, through the chat hooks."""
    from .base import Message

    plugins = session.project.plugins
    names = {"session_id": session.id, "model": model}
    system = system_parts(session)
    await plugins.acall("chat_system_transform", **names, system=system)
    messages = conversation(session)
    if last:
        messages.append(Message("user", STEP_LIMIT_NOTE))
    await plugins.acall("chat_messages_transform", **names, messages=messages)
    agent = session.agent
    params = ChatParams(getattr(agent, "temperature", None), getattr(agent, "top_p", None))
    params.options = dict(model.info.options)
    headers: dict[str, str] = {}
    more = {"agent": agent.name, "provider": model.provider.name}
    await plugins.acall("chat_params", **names, **more, params=params)
    await plugins.acall("chat_headers", **names, **more, headers=headers)
    return [*(Message("system", part) for part in system if part), *messages], params, headers


async def _steps(
    session: Session, model: ChatModel, abort: AbortSignal, emit: EventSink, traced: Any
) -> RunResult:
    """The steps of a run: a request, its tool calls, again, until the model answers (each request a
    ``chat`` span of ``traced``, the run's telemetry)."""
    from ..errors import AbortedError
    from ..loops import until_aborted
    from ..parts import ToolCall
    from ..wire import render
    from . import compaction
    from .usage import cost_of, tokens_of

    go_on_after_rejection = session.project.config.get("experimental.continue_loop_on_deny") is True
    limit = getattr(session.agent, "steps", None) or DEFAULT_STEPS
    steps, text = 0, ""
    usage: dict[str, Any] = {}
    while True:
        steps += 1
        last = bool(limit) and steps > limit
        emit("step", {"step": steps})
        tools = [] if last else render(await session.aresolve(), model.provider.wire_format)
        messages, params, headers = await _request(session, model, last)
        assistant = session.step(continues=steps > 1)  # the run's steps are one doom-loop window
        reply = _Reply(session, assistant, emit)
        stream = model.stream(messages, tools, params=params, headers=headers)
        with traced.chat(model) as chat:
            try:
                calls = await until_aborted(reply.consume(stream), abort)
            except BaseException as error:
                reply.keep()
                session.transcript.finish(assistant, None, error=_error_name(error))
                raise
            chat.finished(reply.finish)
        text = reply.text
        if reply.finish is not None:
            usage = reply.finish.usage or usage
            assistant.provider_state = reply.finish.extra  # for this run's next requests
            assistant.tokens = tokens_of(reply.finish.usage)
            assistant.cost = cost_of(assistant.tokens, model.info.cost)
        if not calls or last:
            reason = "step-limit" if last else (reply.finish.reason if reply.finish else "stop")
            session.transcript.finish(assistant, reason)
            emit("finish", {"reason": reason, "text": text})
            return RunResult(text, reason, steps, usage)
        session.transcript.finish(assistant, "tool-calls")

        async def dispatch(call: Any) -> ToolPart:
            emit("tool-start", {"callID": call.id, "tool": call.name})
            part = await session.dispatch(ToolCall(call.name, call.arguments, id=call.id), abort=abort)
            emit("tool-end", {**part.as_dict(), "rejected": rejected(part)})
            return part

        parts = await until_aborted(asyncio.gather(*(dispatch(call) for call in calls)), abort)
        if abort.aborted:
            raise AbortedError()
        if not go_on_after_rejection and any(map(rejected, parts)):
            emit("finish", {"reason": "rejected", "text": text})
            return RunResult(text, "rejected", steps, usage)
        if compaction.enabled(session, "auto") and compaction.overflows(
            model, reply.finish and reply.finish.usage
        ):
            emit("compaction", {"tokens": compaction.tokens(reply.finish.usage)})
            await until_aborted(compaction.compact(session, model, auto=True), abort)


def rejected(part: ToolPart) -> bool:
    """Whether a call failed because its permission ask was rejected without feedback (or refused with
    nobody to ask), or the user dismissed its questions: what ends OpenCode's loop."""
    from ..errors import QuestionDismissedError, RejectedError
    from ..parts import DOOM_LOOP_REFUSED

    ending = (RejectedError.MESSAGE, QuestionDismissedError.MESSAGE, DOOM_LOOP_REFUSED.format(tool=part.tool))
    return part.status == "error" and part.error in ending


class _Reply:
    """One streamed reply, recorded as it comes: text into a text part, tool calls at the end."""

    def __init__(self, session: Session, message: TranscriptMessage, emit: EventSink) -> None:
        self.session = session
        self.message = message
        self.emit = emit
        self.text = ""
        self.finish: Any = None
        self._part: Any = None
        self._saved: str | None = None

    async def consume(self, stream: Any) -> list[Any]:
        from ..transcript import TextPart
        from .base import Finish, TextDelta, ToolCalls

        calls: list[Any] = []
        async for event in stream:
            if isinstance(event, TextDelta):
                self.text += event.text
                if self._part is None:
                    self._part = TextPart(self.text)
                    self.session.transcript.add_part(self.message, self._part)
                self._part.text = self.text
                self.emit("text", {"text": event.text})
            elif isinstance(event, ToolCalls):
                calls = list(event.calls)
            elif isinstance(event, Finish):
                self.finish = event
        self.keep()
        return calls

    def keep(self) -> None:
        """Save the text received so far (at the end of the reply, or when it is cut short)."""
        if self._part is not None and self._part.text != self._saved:
            self._saved = self._part.text
            self.session.transcript.update_part(self._part)


def _error_name(error: BaseException) -> str:
    """How an assistant message cut short by ``error`` is marked (OpenCode's error names)."""
    from ..errors import AbortedError
    from ..loops import is_cancellation

    if isinstance(error, AbortedError | KeyboardInterrupt) or is_cancellation(error):
        return "MessageAbortedError"
    return "APIError" if isinstance(error, Exception) else "UnknownError"
