"""Google's Gemini format: our messages as ``contents`` (plain dicts the ``google-genai`` SDK validates),
its streamed responses as our events. Nothing here imports the SDK.

* the system prompt is the ``system_instruction``; an assistant's calls are ``function_call`` parts (with
  the ``thought_signature`` Gemini gave them, sent back as the API requires), tool results
  ``function_response`` parts of one user turn, their images ``inline_data`` parts after them;
* tools are the project's Gemini declarations (:func:`opencode_cli.gemini_schema.to_gemini`).
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from .base import Event, FileContent, Message, TextDelta, ToolCallRequest, ToolCalls, ToolCallStarted

FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content-filter"}


def gemini_tools(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Wire tools (Gemini's ``functionDeclarations`` shape) as the SDK's ``tools`` config."""
    declarations = [item for tool in tools for item in tool.get("functionDeclarations", [])]
    return [{"function_declarations": declarations}] if declarations else []


def _blob(file: FileContent) -> dict[str, Any]:
    return {"inline_data": {"mime_type": file.mime, "data": base64.b64decode(file.data)}}


def _args(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def to_gemini(messages: Iterable[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """The system instruction and the ``contents`` of a request."""
    system: list[str] = []
    contents: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for message in messages:
        if message.role == "system":
            if message.content:
                system.append(message.content)
        elif message.role == "user":
            parts: list[dict[str, Any]] = [{"text": message.content}] if message.content else []
            contents.append({"role": "user", "parts": parts + [_blob(f) for f in message.files]})
        elif message.role == "assistant":
            signatures = message.extra.get("google", {}).get("signatures", {})
            parts = [{"text": message.content}] if message.content else []
            for call in message.tool_calls:
                names[call.id] = call.name
                part: dict[str, Any] = {"function_call": {"name": call.name, "args": _args(call.arguments)}}
                if call.id in signatures:
                    part["thought_signature"] = base64.b64decode(signatures[call.id])
                parts.append(part)
            contents.append({"role": "model", "parts": parts or [{"text": " "}]})
        else:
            name = names.get(message.tool_call_id or "", "")
            response = {"name": name, "response": {"output": message.content or ""}}
            part = {"function_response": response}
            images = [_blob(f) for f in message.files if f.is_image]
            last = contents[-1] if contents else None
            if last is not None and last["role"] == "user" and last.get("tool_results"):
                results = [p for p in last["parts"] if "function_response" in p]
                media = [p for p in last["parts"] if "function_response" not in p]
                last["parts"] = [*results, part, *media, *images]
            else:
                contents.append({"role": "user", "parts": [part, *images], "tool_results": True})
    for content in contents:
        content.pop("tool_results", None)
    return ("\n\n".join(system) or None), contents


class GeminiAssembler:
    """Turns the streamed ``GenerateContentResponse`` objects of one reply into our events."""

    def __init__(self) -> None:
        self.calls_: list[ToolCallRequest] = []
        self.signatures: dict[str, str] = {}
        self.reason: str | None = None
        self.usage: dict[str, Any] = {}

    def feed(self, response: Any) -> list[Event]:
        """Our events of one streamed response."""
        events: list[Event] = []
        metadata = getattr(response, "usage_metadata", None)
        if metadata is not None:
            for ours, theirs in (
                ("input_tokens", "prompt_token_count"),
                ("output_tokens", "candidates_token_count"),
            ):
                value = getattr(metadata, theirs, None)
                if isinstance(value, int):
                    self.usage[ours] = value
        for candidate in (getattr(response, "candidates", None) or [])[:1]:
            content = getattr(candidate, "content", None)
            for part in getattr(content, "parts", None) or []:
                call = getattr(part, "function_call", None)
                if call is not None:
                    call_id = getattr(call, "id", None) or f"call_{uuid.uuid4().hex[:24]}"
                    arguments = json.dumps(dict(call.args or {}))
                    events.append(ToolCallStarted(len(self.calls_), call_id, call.name))
                    self.calls_.append(ToolCallRequest(call_id, call.name, arguments))
                    signature = getattr(part, "thought_signature", None)
                    if signature:
                        self.signatures[call_id] = base64.b64encode(signature).decode()
                elif getattr(part, "text", None) and not getattr(part, "thought", False):
                    events.append(TextDelta(part.text))
            reason = getattr(candidate, "finish_reason", None)
            if reason is not None:
                self.reason = getattr(reason, "value", str(reason))
        return events

    def calls(self) -> ToolCalls | None:
        """The reply's function calls, or ``None``."""
        return ToolCalls(list(self.calls_)) if self.calls_ else None

    def finish_reason(self) -> str:
        """OpenCode's name of the reply's finish reason."""
        if self.calls_:
            return "tool-calls"
        return FINISH_REASONS.get(self.reason or "", "other")
