"""Provider wire shapes: the ``tools`` payload of a request, and tool calls as models emit them.

Payloads (``render``): OpenAI chat completions (``{"type": "function", "function": {...}}``, the parameters
as the session's profile made them), Anthropic messages (``{"name", "description", "input_schema",
"eager_input_streaming": true}``) and Gemini (``{"functionDeclarations": [...]}``, each declaration's
parameters through :func:`opencode_cli.gemini_schema.to_gemini`, Google's OpenAPI-style subset).
Calls (``parse_calls``): an OpenAI ``{"name", "arguments": "<json text>"}`` (also inside
``{"type": "function", "function": {...}}`` or a message's ``tool_calls``), an Anthropic ``tool_use``
block (or a message whose ``content`` holds them), a Gemini ``functionCall``, or a list of any of these.
Results (``result``): a dispatched call's :class:`~opencode_cli.session.ToolPart` as the provider takes
it back: an OpenAI ``tool`` message, an Anthropic ``tool_result`` block, a Gemini ``functionResponse``;
``media`` adds the images a tool message cannot hold (OpenAI's user message, Gemini's ``inlineData``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .parts import ToolCall, ToolPart, WireTool

FORMATS = ("openai", "anthropic", "gemini")


class WireError(ValueError):
    """Input that is not a tool call in any known shape; the message says what was expected."""


def default_format(provider: str | None) -> str:
    """The payload format a provider speaks (``openai`` unless it is Anthropic or Google)."""
    return {"anthropic": "anthropic", "google": "gemini", "vertex": "gemini"}.get(provider or "", "openai")


def render(tools: Iterable[WireTool], format: str) -> Any:
    """The ``tools`` value of a request in ``format``."""
    tools = list(tools)
    if format == "openai":
        rendered = []
        for tool in tools:
            function: dict[str, Any] = {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            }
            if tool.strict is not None:
                function["strict"] = tool.strict
            rendered.append({"type": "function", "function": function})
        return rendered
    if format == "anthropic":
        # OpenCode marks every Anthropic tool for fine-grained (eager) streaming of its input
        return [
            {
                "name": t.name,
                "description": t.description,
                "input_schema": t.parameters,
                "eager_input_streaming": True,
            }
            for t in tools
        ]
    if format == "gemini":
        # Google takes an OpenAPI-style subset of JSON Schema: the one conversion, whatever the profile
        from .gemini_schema import to_gemini

        declarations = [
            {"name": t.name, "description": t.description, "parameters": to_gemini(t.parameters)}
            for t in tools
        ]
        return [{"functionDeclarations": declarations}]
    raise WireError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")


def parse_calls(value: Any) -> list[ToolCall]:
    """Every tool call in ``value`` (already parsed JSON), in order; an empty list for a reply that calls
    no tool (an OpenAI message without ``tool_calls``, Anthropic content or Gemini parts of text only)."""
    if isinstance(value, list):
        return [call for item in value if not _is_text(item) for call in parse_calls(item)]
    if not isinstance(value, dict):
        raise WireError("a tool call must be a JSON object or a list of them")
    if "tool_calls" in value and value["tool_calls"] is None:
        return []
    if isinstance(value.get("tool_calls"), list):
        return parse_calls(value["tool_calls"])
    if isinstance(value.get("content"), list):
        blocks = value["content"]
        return parse_calls([b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"])
    if isinstance(value.get("parts"), list):  # a Gemini content
        return parse_calls([p for p in value["parts"] if isinstance(p, dict) and "functionCall" in p])
    if value.get("type") == "function" and isinstance(value.get("function"), dict):
        inner = value["function"]
        return [ToolCall(_name(inner), inner.get("arguments"), value.get("id") or inner.get("id"))]
    if value.get("type") == "tool_use":
        return [ToolCall(_name(value), value.get("input") if "input" in value else {}, value.get("id"))]
    if isinstance(value.get("functionCall"), dict):
        inner = value["functionCall"]
        return [ToolCall(_name(inner), inner.get("args") or {}, inner.get("id"))]
    if "name" in value:
        arguments = value.get("arguments", value.get("input", value.get("args")))
        return [ToolCall(_name(value), arguments, value.get("id") or value.get("call_id"))]
    if "role" in value:  # a message that calls no tool
        return []
    raise WireError(
        'not a tool call: expected {"name", "arguments"}, a tool_use block, a functionCall, or a list'
    )


def _is_text(item: Any) -> bool:
    """A reply's text (an Anthropic ``text`` block, a Gemini ``text`` part) beside its calls."""
    return isinstance(item, dict) and (item.get("type") == "text" or ("text" in item and "name" not in item))


def _name(value: dict[str, Any]) -> str:
    name = value.get("name")
    if not isinstance(name, str):
        raise WireError('a tool call needs a string "name"')
    return name


def loads(text: str) -> list[ToolCall]:
    """Parse JSON text holding one call or several (``opencode tools call``: none is an error)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise WireError("not valid JSON: nested too deeply") from None
    except ValueError as error:  # also a number of more digits than Python converts
        raise WireError(f"not valid JSON: {str(error).split('; use sys.')[0]}") from None
    try:
        calls = parse_calls(value)
    except RecursionError:
        raise WireError("the tool calls are nested too deeply") from None
    if not calls:
        raise WireError("the input holds no tool call")
    return calls


def result(part: ToolPart, format: str) -> dict[str, Any]:
    """The tool result of ``part`` in ``format``, for the next request.

    * ``openai``: the ``{"role": "tool", "tool_call_id", "content"}`` message (text only: chat completions
      take no images in a tool message; :func:`media` gives the user message that carries them);
    * ``anthropic``: the ``{"type": "tool_result", "tool_use_id", "content", "is_error"}`` block for the
      next user message, with images and PDFs as ``image`` / ``document`` blocks after the text;
    * ``gemini``: the ``{"functionResponse": {"name", "response"}}`` part (``{"output": …}``, or
      ``{"error": …}`` for a failed call), named as the model called it (images: :func:`media`).
    """
    if format == "openai":
        return {"role": "tool", "tool_call_id": part.call_id, "content": part.text}
    if format == "anthropic":
        content: list[dict[str, Any]] = [{"type": "text", "text": part.text}]
        for attachment in part.attachments:
            block = _anthropic_attachment(attachment.mime, attachment.url)
            if block is not None:
                content.append(block)
        return {
            "type": "tool_result",
            "tool_use_id": part.call_id,
            "content": content if len(content) > 1 else part.text,
            "is_error": part.status == "error",
        }
    if format == "gemini":
        key = "output" if part.status == "completed" else "error"
        return {"functionResponse": {"name": part.requested or part.tool, "response": {key: part.text}}}
    raise WireError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")


#: The text of the user message that carries tool results' images where a tool message cannot (OpenCode's).
TOOL_MEDIA_NOTE = "Attached image(s) from tool result:"


def media(parts: Iterable[ToolPart], format: str) -> list[dict[str, Any]]:
    """What follows the :func:`result` items of ``parts`` so the model sees their images and PDFs, as
    ``opencode run`` sends them; extend the same list with it:

    * ``openai``: a tool message holds only text, so one user message (``Attached image(s) from tool
      result:`` and the files as ``image_url`` / ``file`` parts) to append after the tool messages; none
      when no part has an attachment;
    * ``gemini``: the images as ``inlineData`` parts, after the ``functionResponse`` parts of the same user
      turn;
    * ``anthropic``: nothing (the ``tool_result`` blocks hold them).
    """
    attachments = [attachment for part in parts for attachment in part.attachments]
    if format == "anthropic" or not attachments:
        if format not in FORMATS:
            raise WireError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
        return []
    if format == "openai":
        content: list[dict[str, Any]] = [{"type": "text", "text": TOOL_MEDIA_NOTE}]
        for item in attachments:
            if item.mime.startswith("image/"):
                content.append({"type": "image_url", "image_url": {"url": item.url}})
            else:
                file = {"filename": item.filename or "file", "file_data": item.url}
                content.append({"type": "file", "file": file})
        return [{"role": "user", "content": content}]
    if format == "gemini":
        found = []
        for item in attachments:
            header, comma, data = item.url.partition(",")
            if item.mime.startswith("image/") and comma and header.endswith(";base64"):
                found.append({"inlineData": {"mimeType": item.mime, "data": data}})
        return found
    raise WireError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")


def _anthropic_attachment(mime: str, url: str) -> dict[str, Any] | None:
    """An image or PDF ``data:`` URL as an Anthropic content block (other kinds: ``None``)."""
    header, comma, data = url.partition(",")
    if not (url.startswith("data:") and comma and header.endswith(";base64")):
        return None
    source = {"type": "base64", "media_type": mime, "data": data}
    if mime.startswith("image/"):
        return {"type": "image", "source": source}
    if mime == "application/pdf":
        return {"type": "document", "source": source}
    return None
