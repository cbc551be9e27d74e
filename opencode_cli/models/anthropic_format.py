"""Anthropic's Messages format: our messages as its ``system`` and ``messages``, its streamed events as
ours. Nothing here talks to the network or imports the SDK: events are read by attribute, as the
``anthropic`` SDK's objects have them.

* the system prompt is a list of text blocks; tool results are ``tool_result`` blocks of a user message
  (consecutive results in one message), their images as ``image`` blocks inside;
* prompt caching as OpenCode applies it: the first two system blocks and the last two messages carry
  ``cache_control: {"type": "ephemeral"}`` (on their last block);
* an assistant message sends back its ``thinking`` blocks first (``Message.extra["anthropic"]``), as the
  API requires while tool calls go on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import Event, FileContent, Message, TextDelta, ToolCallRequest, ToolCalls, ToolCallStarted

EPHEMERAL = {"type": "ephemeral"}

#: Anthropic's ``stop_reason`` values in OpenCode's (the AI SDK's) names; any other is ``other``.
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool-calls",
    "refusal": "content-filter",
}


def anthropic_tools(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Wire tools in Anthropic's shape; those already in it (``input_schema``) pass unchanged."""
    out = []
    for tool in tools:
        if "input_schema" in tool:
            out.append(dict(tool))
            continue
        function = tool.get("function", tool)
        out.append(
            {
                "name": function["name"],
                "description": function.get("description", ""),
                "input_schema": function.get("parameters") or {"type": "object"},
                "eager_input_streaming": True,
            }
        )
    return out


def _file_block(file: FileContent) -> dict[str, Any]:
    source = {"type": "base64", "media_type": file.mime, "data": file.data}
    return {"type": "image" if file.is_image else "document", "source": source}


def _input(arguments: str) -> Any:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def to_anthropic(messages: Iterable[Message]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``system`` blocks and the ``messages`` of a Messages request, cache marks included."""
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            if message.content:
                system.append({"type": "text", "text": message.content})
            continue
        if message.role == "tool":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
            content: list[dict[str, Any]] = [{"type": "text", "text": message.content or ""}]
            content += [_file_block(file) for file in message.files if file.is_image]
            block["content"] = content
            if out and out[-1]["role"] == "user" and out[-1]["content"][-1]["type"] == "tool_result":
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
            continue
        if message.role == "user":
            blocks = [{"type": "text", "text": message.content}] if message.content else []
            blocks += [_file_block(file) for file in message.files]
            out.append({"role": "user", "content": blocks or [{"type": "text", "text": " "}]})
            continue
        blocks = [dict(block) for block in message.extra.get("anthropic", {}).get("thinking", [])]
        if message.content:
            blocks.append({"type": "text", "text": message.content})
        blocks += [
            {"type": "tool_use", "id": call.id, "name": call.name, "input": _input(call.arguments)}
            for call in message.tool_calls
        ]
        out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": " "}]})
    for block in system[:2]:
        block["cache_control"] = EPHEMERAL
    for sent in out[-2:]:
        sent["content"][-1]["cache_control"] = EPHEMERAL
    return system, out


@dataclass
class _Block:
    type: str
    id: str = ""
    name: str = ""
    text: list[str] = field(default_factory=list)
    signature: str = ""
    data: str = ""


class AnthropicAssembler:
    """Turns the raw events of one streamed Messages reply into our events.

    :meth:`feed` each event; when the stream has ended, :attr:`reason` is the ``stop_reason`` (``None``
    if none came: the stream broke off), :attr:`usage` the usage reported, :meth:`calls` the tool calls
    and :meth:`thinking` the thinking blocks to send back with the next request.
    """

    def __init__(self) -> None:
        self._blocks: dict[int, _Block] = {}
        self.reason: str | None = None
        self.usage: dict[str, Any] = {}
        self.error: str | None = None

    def feed(self, event: Any) -> list[Event]:
        """Our events of one raw event."""
        kind = getattr(event, "type", "")
        if kind == "message_start":
            self._usage(getattr(getattr(event, "message", None), "usage", None))
        elif kind == "content_block_start":
            block = event.content_block
            entry = _Block(block.type, getattr(block, "id", "") or "", getattr(block, "name", "") or "")
            entry.data = getattr(block, "data", "") or ""
            text = getattr(block, "text", None) or getattr(block, "thinking", None)
            if text:
                entry.text.append(text)
            self._blocks[event.index] = entry
            if block.type == "tool_use":
                calls = sum(1 for b in self._blocks.values() if b.type == "tool_use") - 1
                return [ToolCallStarted(calls, entry.id, entry.name)]
            if block.type == "text" and text:
                return [TextDelta(text)]
        elif kind == "content_block_delta":
            current = self._blocks.get(event.index)
            delta = event.delta
            if current is None:
                return []
            if delta.type == "text_delta":
                current.text.append(delta.text)
                return [TextDelta(delta.text)]
            if delta.type == "input_json_delta":
                current.text.append(delta.partial_json)
            elif delta.type == "thinking_delta":
                current.text.append(delta.thinking)
            elif delta.type == "signature_delta":
                current.signature += delta.signature
        elif kind == "message_delta":
            self.reason = getattr(event.delta, "stop_reason", None) or self.reason
            self._usage(getattr(event, "usage", None))
        elif kind == "error":
            self.error = getattr(getattr(event, "error", None), "message", None) or "error"
        return []

    def _usage(self, usage: Any) -> None:
        if usage is None:
            return
        data = usage.model_dump(exclude_none=True) if hasattr(usage, "model_dump") else dict(usage)
        self.usage.update({key: value for key, value in data.items() if isinstance(value, int)})

    def calls(self) -> ToolCalls | None:
        """The tool calls of the reply, in order, or ``None``."""
        calls = [
            ToolCallRequest(block.id, block.name, "".join(block.text) or "{}")
            for _, block in sorted(self._blocks.items())
            if block.type == "tool_use"
        ]
        return ToolCalls(calls) if calls else None

    def thinking(self) -> list[dict[str, Any]]:
        """The reply's thinking (and redacted thinking) blocks, as the next request sends them back."""
        blocks: list[dict[str, Any]] = []
        for _, block in sorted(self._blocks.items()):
            if block.type == "thinking":
                blocks.append(
                    {"type": "thinking", "thinking": "".join(block.text), "signature": block.signature}
                )
            elif block.type == "redacted_thinking":
                blocks.append({"type": "redacted_thinking", "data": block.data})
        return blocks


def finish_reason(raw: str) -> str:
    """OpenCode's name of an Anthropic ``stop_reason``."""
    return FINISH_REASONS.get(raw, "other")
