"""What a model is sent of a session: its transcript as chat messages (:func:`conversation`), from the
last compaction on (:func:`history`), a pruned tool output read as :data:`CLEARED`.

:mod:`~opencode_cli.models.loop` sends it each step; :mod:`~opencode_cli.models.compaction` summarises it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..session import Session

#: What a pruned tool output reads as for the model (core spec §6.3).
CLEARED = "[Old tool result content cleared]"
#: The compaction request as the model sees it in the continued history.
COMPACTION_QUESTION = "What did we do so far?"


def is_pruned(part: Any) -> bool:
    """Whether a tool part's output was cleared by :func:`~opencode_cli.models.compaction.prune`."""
    return bool((part.metadata or {}).get("compacted"))


def history(session: Session) -> list[Any]:
    """The transcript's messages the model is sent: from the last completed compaction on (its request
    and its summary first), or all of them; read from the store when the session is not all in memory
    (:meth:`~opencode_cli.transcript.Transcript.since_summary`)."""
    return session.transcript.since_summary()


def conversation(session: Session) -> list[Any]:
    """The transcript as chat messages (after the system prompt): a user message's text parts joined
    and its files (images, PDFs) carried; an assistant's text and calls, then one tool message for each
    call, with the files of its result."""
    from ..transcript import CompactionPart, FilePart, TextPart, ToolCallPart
    from .base import Message, ToolCallRequest

    messages: list[Any] = []
    for message in history(session):
        if message.role == "user":
            texts = [part.text for part in message.parts if isinstance(part, TextPart)]
            if any(isinstance(part, CompactionPart) for part in message.parts):
                texts.append(COMPACTION_QUESTION)
            files = [_file(part) for part in message.parts if isinstance(part, FilePart)]
            messages.append(Message("user", "\n\n".join(texts), files=files))
            continue
        text = "".join(part.text for part in message.parts if isinstance(part, TextPart))
        calls = [part for part in message.parts if isinstance(part, ToolCallPart)]
        if not text and not calls:
            continue
        requests = [ToolCallRequest(part.call_id, part.tool, json.dumps(part.input)) for part in calls]
        extra = message.provider_state or {}
        messages.append(Message("assistant", text or None, tool_calls=requests, extra=extra))
        for part in calls:
            shown = part.status == "completed" and not is_pruned(part)
            files = [_file(item) for item in part.attachments] if shown else []
            messages.append(Message("tool", _tool_text(part), tool_call_id=part.call_id, files=files))
    return messages


def _file(part: Any) -> Any:
    from .base import FileContent

    return FileContent(part.mime, part.url, part.filename)


def _tool_text(part: Any) -> str:
    """What the model sees for a finished (or interrupted) call (core spec §6.3)."""
    from ..errors import INTERRUPTED

    if part.status == "completed":
        return CLEARED if is_pruned(part) else (part.output or "")
    if part.status == "error":
        return part.error or ""
    return INTERRUPTED
