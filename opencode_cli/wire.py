"""Provider wire shapes: the ``tools`` payload of a request, and tool calls as models emit them.

Payloads (``render``): OpenAI chat completions (``{"type": "function", "function": {...}}``, the parameters
as the session's profile made them), Anthropic messages (``{"name", "description", "input_schema",
"eager_input_streaming": true}``) and Gemini (``{"functionDeclarations": [...]}``, each declaration's
parameters through :func:`opencode_cli.schema.to_gemini`, Google's OpenAPI-style subset).
Calls (``parse_calls``): an OpenAI ``{"name", "arguments": "<json text>"}`` (also inside
``{"type": "function", "function": {...}}`` or a message's ``tool_calls``), an Anthropic ``tool_use``
block (or a message whose ``content`` holds them), a Gemini ``functionCall``, or a list of any of these.
Results (``result``): a dispatched call's :class:`~opencode_cli.session.ToolPart` as the provider takes
it back: an OpenAI ``tool`` message, an Anthropic ``tool_result`` block, a Gemini ``functionResponse``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .schema import to_gemini
from .session import ToolCall, ToolPart, WireTool

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
        declarations = [
            {"name": t.name, "description": t.description, "parameters": to_gemini(t.parameters)}
            for t in tools
        ]
        return [{"functionDeclarations": declarations}]
    raise WireError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")


def parse_calls(value: Any) -> list[ToolCall]:
    """Every tool call in ``value`` (already parsed JSON), in order."""
    if isinstance(value, list):
        return [call for item in value for call in parse_calls(item)]
    if not isinstance(value, dict):
        raise WireError("a tool call must be a JSON object or a list of them")
    if isinstance(value.get("tool_calls"), list):
        return parse_calls(value["tool_calls"])
    if isinstance(value.get("content"), list):
        blocks = [
            block for block in value["content"] if isinstance(block, dict) and block.get("type") == "tool_use"
        ]
        if not blocks:
            raise WireError("the message's content has no tool_use block")
        return parse_calls(blocks)
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
    raise WireError(
        'not a tool call: expected {"name", "arguments"}, a tool_use block, a functionCall, or a list'
    )


def _name(value: dict[str, Any]) -> str:
    name = value.get("name")
    if not isinstance(name, str):
        raise WireError('a tool call needs a string "name"')
    return name


def loads(text: str) -> list[ToolCall]:
    """Parse JSON text holding one call or several."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise WireError("not valid JSON: nested too deeply") from None
    except ValueError as error:  # also a number of more digits than Python converts
        raise WireError(f"not valid JSON: {str(error).split('; use sys.')[0]}") from None
    try:
        return parse_calls(value)
    except RecursionError:
        raise WireError("the tool calls are nested too deeply") from None


def result(part: ToolPart, format: str) -> dict[str, Any]:
    """The tool result of ``part`` in ``format``, for the next request.

    * ``openai``: the ``{"role": "tool", "tool_call_id", "content"}`` message (text only: chat completions
      take no images in a tool message; send attachments in a user message of your own if the model
      should see them);
    * ``anthropic``: the ``{"type": "tool_result", "tool_use_id", "content", "is_error"}`` block for the
      next user message, with images and PDFs as ``image`` / ``document`` blocks after the text;
    * ``gemini``: the ``{"functionResponse": {"name", "response"}}`` part (``{"output": …}``, or
      ``{"error": …}`` for a failed call), named as the model called it.
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
