"""What the model gets from MCP: tool results and resource contents mapped to text and attachments.

Core spec §6.1 ("MCP tools" and "MCP resource tools"). The functions here read MCP objects by attribute
(``mcp.types`` pydantic models, snake_case fields) or by key (their camelCase JSON wire form, as plain
dicts), so this module never imports ``mcp``.

* :func:`tool_result` maps a ``CallToolResult``: an error result raises :class:`ToolError`; text parts
  become the output, images become data-URL attachments, embedded resources give their text and/or
  their blob (an attachment, or an omission note). OpenCode has no branch for ``audio`` and
  ``resource_link`` parts: they are dropped, as there.
* :func:`raw_content` is the content OpenCode hands on beside the mapped result (its ``content`` key),
  as JSON dicts; it is kept out of :attr:`ToolResult.metadata` so the metadata stays OpenCode's.
* :func:`resource_pieces` formats the contents of a ``ReadResourceResult`` for ``read_mcp_resource``.
* :func:`js_stringify` writes JSON the way JavaScript's ``JSON.stringify`` does (number formatting, key
  order), for the texts OpenCode builds with it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from ..errors import ToolError
from ..results import Attachment, ToolResult

SUPPORTED_ATTACHMENT_MIMES = ("application/pdf", "image/gif", "image/jpeg", "image/png", "image/webp")
"""The blob types a resource may be attached as; any other binary resource is replaced by a note."""

MAX_BLOB = 10 * 1024 * 1024
"""Decoded size above which a binary resource is not attached (10 MiB)."""

DEFAULT_MIME = "application/octet-stream"
"""The MIME type of a resource content that names none (as OpenCode assumes)."""

TOOL_ERROR = "MCP tool returned an error"
"""The error text of an ``isError`` result that has no non-blank text part."""

# JavaScript's ``\s`` (and what ``String.prototype.trim`` removes): not the same set as Python's.
_JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_SPACE_RE = re.compile(f"[{re.escape(_JS_SPACE)}]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


# -- reading MCP objects ---------------------------------------------------------------------------------


def wire_field(item: Any, name: str, wire: str | None = None) -> Any:
    """``item.name`` for an MCP model, ``item[wire or name]`` for its JSON form; ``None`` when absent."""
    if isinstance(item, Mapping):
        return item.get(wire or name)
    return getattr(item, name, None)


def is_record(item: Any) -> bool:
    """Whether ``item`` is an object (an MCP model or a JSON object), as OpenCode's ``isRecord``."""
    return isinstance(item, Mapping) or hasattr(item, "model_dump")


def to_json(item: Any) -> Any:
    """The camelCase JSON wire form of an MCP object (``None`` fields left out); JSON values unchanged."""
    if hasattr(item, "model_dump"):
        return item.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(item, Mapping):
        return {str(k): to_json(v) for k, v in item.items()}
    if isinstance(item, list | tuple):
        return [to_json(v) for v in item]
    return item


# -- sizes -------------------------------------------------------------------------------------------------


def blob_size(b64: str | bytes) -> int:
    """The decoded size of base64 text: ``floor(len * 3 / 4) - padding``, whitespace ignored, never < 0."""
    text = b64.decode("ascii", "replace") if isinstance(b64, bytes) else b64
    trimmed = _JS_SPACE_RE.sub("", text)
    padding = 2 if trimmed.endswith("==") else 1 if trimmed.endswith("=") else 0
    return max(0, len(trimmed) * 3 // 4 - padding)


def format_size(n: int) -> str:
    """``N B`` below 1024, else ``ceil(N / 1024) KB`` below 1 MiB, else ``ceil(N / 2**20) MB``."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{math.ceil(n / 1024)} KB"
    return f"{math.ceil(n / (1024 * 1024))} MB"


def _blob_problem(uri: str, mime: str, blob: str) -> str | None:
    """The omission note for a blob that cannot be attached, or ``None`` if it can."""
    size = blob_size(blob)
    if mime not in SUPPORTED_ATTACHMENT_MIMES:
        return (
            f"[Binary MCP resource omitted: {uri} ({mime}, {format_size(size)}) "
            "is not a supported attachment type]"
        )
    if size > MAX_BLOB:
        limit = format_size(MAX_BLOB)
        return f"[Binary MCP resource omitted: {uri} ({mime}, {format_size(size)}) exceeds {limit}]"
    return None


# -- resource contents (read_mcp_resource) ---------------------------------------------------------------


def resource_pieces(
    contents: Sequence[Any],
    attachments_out: list[Attachment],
    *,
    filename_is_uri: bool = True,
    uri: str = "",
) -> list[str]:
    """The text pieces for resource contents (``TextResourceContents``/``BlobResourceContents``).

    Each item gives one piece: text -> ``Resource: {uri}\\nMIME: {mime}\\n{text}``; a blob of an
    unsupported type or over 10 MiB -> an omission note; another blob ->
    ``[Binary MCP resource attached: {uri} ({mime})]`` and a data-URL attachment appended to
    ``attachments_out`` (named by its URI unless ``filename_is_uri`` is false); neither ->
    ``[MCP resource content without text or blob: {uri}]``. An item without a URI uses ``uri``; one
    without a MIME type uses ``application/octet-stream``. Items that are not objects are skipped.
    """
    pieces: list[str] = []
    for item in contents:
        if not is_record(item):
            continue
        item_uri = wire_field(item, "uri")
        item_uri = item_uri if isinstance(item_uri, str) else uri
        mime = wire_field(item, "mime_type", "mimeType")
        mime = mime if isinstance(mime, str) else DEFAULT_MIME
        text = wire_field(item, "text")
        if isinstance(text, str):
            pieces.append(f"Resource: {item_uri}\nMIME: {mime}\n{text}")
            continue
        blob = wire_field(item, "blob")
        if isinstance(blob, str):
            problem = _blob_problem(item_uri, mime, blob)
            if problem is not None:
                pieces.append(problem)
                continue
            pieces.append(f"[Binary MCP resource attached: {item_uri} ({mime})]")
            attachments_out.append(
                Attachment(
                    mime=mime,
                    url=f"data:{mime};base64,{blob}",
                    filename=item_uri if filename_is_uri else None,
                )
            )
            continue
        pieces.append(f"[MCP resource content without text or blob: {item_uri}]")
    return pieces


# -- tool results (MCP tools) ----------------------------------------------------------------------------


def _content(result: Any) -> list[Any]:
    """The result's content, replaced by one text part with the structured content's JSON when empty."""
    content = list(wire_field(result, "content") or [])
    structured = wire_field(result, "structured_content", "structuredContent")
    if not content and structured is not None:
        return [{"type": "text", "text": js_stringify(to_json(structured))}]
    return content


def error_text(result: Any) -> str:
    """The message of an ``isError`` result: its non-blank text parts joined by blank lines."""
    texts = [
        text
        for item in wire_field(result, "content") or []
        if wire_field(item, "type") == "text"
        and isinstance(text := wire_field(item, "text"), str)
        and text.strip(_JS_SPACE)
    ]
    return "\n\n".join(texts) or TOOL_ERROR


def raw_content(result: Any) -> list[dict[str, Any]]:
    """The content OpenCode returns beside the mapped result, as camelCase JSON dicts.

    It is the MCP result's content (after the structured-content substitution of :func:`tool_result`).
    """
    return [to_json(item) for item in _content(result)]


def tool_result(result: Any) -> ToolResult:
    """Map a ``CallToolResult`` to what the model gets (before truncation, which :meth:`Tool.run` does).

    * ``isError``: raise :class:`ToolError` with the non-blank text parts joined by ``"\\n\\n"``, or
      ``MCP tool returned an error``;
    * empty content with ``structuredContent``: one text part with its JSON (as ``JSON.stringify``);
    * text -> text; image -> attachment ``data:{mime};base64,{data}`` (no text); embedded resource ->
      its text if non-empty, and its blob if non-empty: an attachment named by the resource URI, or
      the omission note of :func:`resource_pieces` (the blob's MIME type defaults to
      ``application/octet-stream``); ``audio`` and ``resource_link`` parts are dropped, as in OpenCode.

    The output is the texts joined by ``"\\n\\n"``; the title is empty and the metadata empty.
    """
    if wire_field(result, "is_error", "isError"):
        raise ToolError(error_text(result))
    texts: list[str] = []
    attachments: list[Attachment] = []
    for item in _content(result):
        kind = wire_field(item, "type")
        if kind == "text":
            text = wire_field(item, "text")
            texts.append(text if isinstance(text, str) else "")
        elif kind == "image":
            mime = wire_field(item, "mime_type", "mimeType")
            data = wire_field(item, "data")
            attachments.append(Attachment(mime=str(mime), url=f"data:{mime};base64,{data}"))
        elif kind == "resource":
            resource = wire_field(item, "resource")
            if resource is None:
                continue
            text = wire_field(resource, "text")
            if isinstance(text, str) and text:
                texts.append(text)
            blob = wire_field(resource, "blob")
            if isinstance(blob, str) and blob:
                uri = wire_field(resource, "uri")
                mime = wire_field(resource, "mime_type", "mimeType")
                mime = mime if isinstance(mime, str) else DEFAULT_MIME
                problem = _blob_problem(str(uri), mime, blob)
                if problem is not None:
                    texts.append(problem)
                    continue
                attachments.append(Attachment(mime=mime, url=f"data:{mime};base64,{blob}", filename=str(uri)))
    return ToolResult(output="\n\n".join(texts), title="", metadata={}, attachments=attachments)


# -- JSON as JavaScript writes it ------------------------------------------------------------------------


def _js_number(value: float) -> str:
    """``String(value)`` for a JavaScript number (ECMAScript Number::toString, radix 10)."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()[1:]
    digits = "".join(map(str, digits_tuple))
    k = len(digits)
    n = int(exponent) + k  # value = 0.d1d2...dk * 10**n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        text = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + text


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < 2**32 - 1


def _js_keys(obj: Mapping[Any, Any]) -> list[tuple[str, Any]]:
    """Keys in JavaScript's own-property order: array indices ascending, then the rest as inserted."""
    items = [(str(k), v) for k, v in obj.items()]
    indices = sorted((kv for kv in items if _is_array_index(kv[0])), key=lambda kv: int(kv[0]))
    return indices + [kv for kv in items if not _is_array_index(kv[0])]


def _js_string(text: str) -> str:
    """A JSON string literal as ``JSON.stringify`` writes it (lone surrogates escaped)."""
    return _SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def _encode(value: Any, indent: int | None, level: int) -> str:
    if value is None or value is True or value is False:
        return json.dumps(value)
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, int):
        return str(value) if abs(value) <= 2**53 else _js_number(float(value))
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, Mapping):
        parts = [
            (json.dumps(k, ensure_ascii=False), _encode(v, indent, level + 1)) for k, v in _js_keys(value)
        ]
        if not parts:
            return "{}"
        if indent is None:
            return "{" + ",".join(f"{k}:{v}" for k, v in parts) + "}"
        inner, outer = "\n" + " " * (indent * (level + 1)), "\n" + " " * (indent * level)
        return "{" + inner + ("," + inner).join(f"{k}: {v}" for k, v in parts) + outer + "}"
    if isinstance(value, list | tuple):
        items = [_encode(v, indent, level + 1) for v in value]
        if not items:
            return "[]"
        if indent is None:
            return "[" + ",".join(items) + "]"
        inner, outer = "\n" + " " * (indent * (level + 1)), "\n" + " " * (indent * level)
        return "[" + inner + ("," + inner).join(items) + outer + "]"
    if hasattr(value, "model_dump"):
        return _encode(to_json(value), indent, level)
    return _js_string(str(value))


def js_stringify(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value, null, indent)`` for JSON data: compact by default, JS number formatting
    (``1.0`` -> ``1``, ``1e-7``, ``1e+21``), integer-like keys first as JavaScript orders them.
    """
    return _encode(value, indent, 0)
