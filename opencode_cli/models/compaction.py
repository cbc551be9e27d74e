"""Compaction, as OpenCode does it: when a step's tokens would not leave room for the model's output in
its context, the conversation is summarised by the model and the summary starts the continued history.

* :func:`overflows`: the last step's usage (input and output tokens) against ``limit.context`` minus the
  output reserve (``limit.output``, at most :data:`OUTPUT_TOKEN_MAX`), or ``limit.input`` when set;
* :func:`prune`: old tool outputs (beyond the last :data:`PRUNE_PROTECT` tokens of them, two user turns
  kept whole) are cleared first, when that frees at least :data:`PRUNE_MINIMUM` tokens;
* :func:`compact`: a user message with a ``compaction`` part, the summary as an assistant message marked
  ``summary``, then a synthetic user message asking the model to go on.

``[compaction] auto = false`` turns the automatic compaction off, ``[compaction] prune = false`` the
pruning. The ``session_compacting`` hook adds context to the summary request, or replaces its prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .conversation import conversation, history, is_pruned

if TYPE_CHECKING:
    from ..session import Session
    from .chat import ChatModel

#: The output reserve when the model's ``limit.output`` is unknown or larger (OpenCode's figure).
OUTPUT_TOKEN_MAX = 32_000
#: Tokens of the most recent tool outputs that pruning never clears.
PRUNE_PROTECT = 40_000
#: Pruning happens only when it frees at least this many tokens.
PRUNE_MINIMUM = 20_000
#: The synthetic user message after an automatic compaction.
CONTINUE = "Continue if you have next steps"

SUMMARY_SYSTEM = (
    "You summarise a coding session so that it can go on without its history. Write a summary that is "
    "complete enough to continue the work and short enough to read quickly."
)
SUMMARY_PROMPT = (
    "Summarise the conversation above for whoever continues it, who will not see it. Say what the user "
    "asked for (and any constraints or preferences they gave), what has been done, which files were read "
    "or changed, what is being worked on now, the decisions taken and why, and what is left to do next."
)


def tokens(usage: dict[str, Any] | None) -> int:
    """The tokens a step used: input (cached included) and output, in OpenAI's or Anthropic's names."""
    if not usage:
        return 0
    count = 0
    for key in ("prompt_tokens", "completion_tokens", "input_tokens", "output_tokens"):
        value = usage.get(key)
        if isinstance(value, int):
            count += value
    for key in ("cache_read_input_tokens", "cache_creation_input_tokens"):
        value = usage.get(key)
        if isinstance(value, int):
            count += value
    return count


def overflows(model: ChatModel, usage: dict[str, Any] | None) -> bool:
    """Whether the last step's ``usage`` leaves no room for the model's output in its context."""
    limits = model.limits
    if not limits.context:
        return False
    reserve = min(limits.output or OUTPUT_TOKEN_MAX, OUTPUT_TOKEN_MAX)
    usable = limits.input or limits.context - reserve
    return tokens(usage) > usable


def enabled(session: Session, key: str) -> bool:
    """``[compaction] auto`` / ``prune``: on unless set to ``false``."""
    return session.project.config.get(f"compaction.{key}") is not False


def prune(session: Session) -> int:
    """Clear old tool outputs (see the module docstring); the number of tokens cleared."""
    from ..transcript import ToolCallPart

    protected, candidates, turns = 0, [], 0
    for message in reversed(history(session)):
        if message.role == "user":
            turns += 1
        if turns < 2:
            continue
        if message.role == "assistant" and message.summary:
            break
        for part in reversed(message.parts):
            if not isinstance(part, ToolCallPart) or part.status != "completed" or is_pruned(part):
                continue
            size = len(part.output or "") // 4
            protected += size
            if protected > PRUNE_PROTECT:
                candidates.append((part, size))
    cleared = sum(size for _, size in candidates)
    if cleared < PRUNE_MINIMUM:
        return 0
    for part, _ in candidates:
        part.metadata = {**(part.metadata or {}), "compacted": True}
        session.transcript.update_part(part)
    return cleared


async def compact(session: Session, model: ChatModel, *, auto: bool, on_text: Any = None) -> str:
    """Summarise the session with ``model`` and mark it compacted; the summary's text."""
    from ..transcript import CompactionPart, TextPart
    from .base import Message, TextDelta
    from .hooks import CompactingOutput

    if enabled(session, "prune"):
        prune(session)
    before = conversation(session)
    output = CompactingOutput()
    await session.project.plugins.acall("session_compacting", session_id=session.id, output=output)
    prompt = output.prompt or "\n\n".join([SUMMARY_PROMPT, *output.context])
    transcript = session.transcript
    request = transcript.add_user(None, session.agent.name, session.model)
    transcript.add_part(request, CompactionPart(auto))
    summary = session.step()
    summary.summary = True
    messages = [Message("system", SUMMARY_SYSTEM), *before, Message("user", prompt)]
    text = ""
    part: Any = None
    try:
        async for event in model.stream(messages):
            if isinstance(event, TextDelta):
                text += event.text
                if part is None:
                    part = TextPart(text)
                    transcript.add_part(summary, part)
                part.text = text
                if on_text is not None:
                    on_text(event.text)
    except BaseException:
        if part is not None:
            transcript.update_part(part)
        transcript.finish(summary, None, error="CompactionFailed")
        raise
    if part is not None:
        transcript.update_part(part)
    transcript.finish(summary, "stop")
    if session.remember:  # the summary starts the history: nearby AGENTS.md files may be shown again
        session.project.store.forget_instructions(session.id)
    if auto:
        session.user(CONTINUE, synthetic=True)
    return text
