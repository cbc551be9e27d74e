"""OpenAI's chat-completions format: our messages as its ``messages``, its streamed chunks as our events.

Nothing here talks to the network or imports the SDK: chunks are read by attribute (``choices``,
``delta``, ``tool_calls``, ``finish_reason``, ``usage``), as the ``openai`` SDK's objects have them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..wire import TOOL_MEDIA_NOTE  # the user message that carries tool results' images (wire.media)
from .base import Event, FileContent, Message, TextDelta, ToolCallRequest, ToolCalls, ToolCallStarted

#: OpenAI's ``finish_reason`` values in OpenCode's (the AI SDK's) names; any other is ``other``.
FINISH_REASONS = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}


def finish_reason(raw: str) -> str:
    """OpenCode's name of an OpenAI ``finish_reason``."""
    return FINISH_REASONS.get(raw, "other")


def to_openai(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The ``messages`` of a chat-completions request: an assistant's calls as ``tool_calls`` of
    ``type: function``, a tool result as role ``tool`` with its ``tool_call_id``. A tool message holds
    only text, so the files of a run of tool results follow them in one user message (as OpenCode does
    for providers whose tool results cannot hold media)."""
    out: list[dict[str, Any]] = []
    pending: list[FileContent] = []
    for message in messages:
        if message.role != "tool" and pending:
            out.append(_media_message(pending))
            pending = []
        out.append(_message(message))
        if message.role == "tool":
            pending.extend(message.files)
    if pending:
        out.append(_media_message(pending))
    return out


def _media_message(files: list[FileContent]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": TOOL_MEDIA_NOTE}, *map(file_part, files)]}


def file_part(file: FileContent) -> dict[str, Any]:
    """A file as a content part: ``image_url`` for an image, ``file`` (with its data URL) otherwise."""
    if file.is_image:
        return {"type": "image_url", "image_url": {"url": file.url}}
    return {"type": "file", "file": {"filename": file.filename or "file", "file_data": file.url}}


def _message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content or ""}
    if message.role == "user" and message.files:
        text = [{"type": "text", "text": message.content}] if message.content else []
        return {"role": "user", "content": [*text, *map(file_part, message.files)]}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content or ""}


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    announced: bool = False


class StreamAssembler:
    """Turns the chunks of one streamed reply into events, and assembles its tool calls.

    :meth:`feed` each chunk (text deltas come out at once, a :class:`ToolCallStarted` when a call's id
    and name are known); when the stream ends, :attr:`reason` is the last ``finish_reason`` seen (``None``
    if none came: the stream broke off), :attr:`usage` the usage reported, and :meth:`calls` the
    assembled calls in index order. A call's pieces are matched by ``index`` (by id, or the latest call,
    for servers that send none); its id and name are taken from the first piece that has them and its
    arguments are the concatenation of every piece's, kept as text.
    """

    def __init__(self) -> None:
        self._calls: dict[int, _Call] = {}
        self.reason: str | None = None
        self.usage: dict[str, Any] | None = None

    def feed(self, chunk: Any) -> list[Event]:
        """The events of one chunk."""
        events: list[Event] = []
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = usage.model_dump(exclude_none=True) if hasattr(usage, "model_dump") else dict(usage)
        for choice in getattr(chunk, "choices", None) or ():
            if (getattr(choice, "index", 0) or 0) != 0:
                continue  # one reply is asked for: other choices are not ours
            delta = getattr(choice, "delta", None)
            if delta is not None:
                text = getattr(delta, "content", None)
                if text:
                    events.append(TextDelta(text))
                for piece in getattr(delta, "tool_calls", None) or ():
                    started = self._add(piece)
                    if started is not None:
                        events.append(started)
            if getattr(choice, "finish_reason", None):
                self.reason = choice.finish_reason
        return events

    def _index(self, piece: Any) -> int:
        index = getattr(piece, "index", None)
        if isinstance(index, int):
            return index
        piece_id = getattr(piece, "id", None)
        for known, call in self._calls.items():
            if piece_id and call.id == piece_id:
                return known
        if piece_id or not self._calls:
            return len(self._calls)
        return max(self._calls)

    def _add(self, piece: Any) -> ToolCallStarted | None:
        index = self._index(piece)
        call = self._calls.setdefault(index, _Call())
        call.id = call.id or (getattr(piece, "id", None) or "")
        function = getattr(piece, "function", None)
        if function is not None:
            call.name = call.name or (getattr(function, "name", None) or "")
            if getattr(function, "arguments", None):
                call.arguments.append(function.arguments)
        if call.announced or not call.name:
            return None
        call.id = call.id or f"call_{uuid.uuid4().hex[:24]}"  # a server that sends no id
        call.announced = True
        return ToolCallStarted(index, call.id, call.name)

    def calls(self) -> ToolCalls | None:
        """The assembled calls in index order, or ``None`` when the model called no tool."""
        if not self._calls:
            return None
        return ToolCalls(
            [
                ToolCallRequest(
                    call.id or f"call_{uuid.uuid4().hex[:24]}", call.name, "".join(call.arguments)
                )
                for _, call in sorted(self._calls.items())
            ]
        )
