"""What a tool call produces: :class:`ToolResult` and its :class:`Attachment` files.

A tool's function may return a :class:`ToolResult`, a string, a mapping with an ``output`` key, ``None`` or
any JSON-serialisable value; :func:`as_result` turns each into a :class:`ToolResult`, and
:func:`unicode_text` makes its text valid Unicode before any wire carries it. The wrap that calls them is
:meth:`opencode_cli.contract.Tool.run`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["Attachment", "ToolResult", "as_result", "unicode_text"]


@dataclass
class Attachment:
    """A file handed to the model with a result (``url`` is usually a ``data:`` URL)."""

    mime: str
    url: str
    filename: str | None = None
    type: Literal["file"] = "file"
    id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON shape; keys that are ``None`` are left out."""
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class ToolResult:
    """What a tool call produces: the text the model sees, a title, metadata and attachments."""

    output: str = ""
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    attachments: list[Attachment] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON shape (``title``, ``metadata``, ``output``, ``attachments``)."""
        return {
            "title": self.title,
            "metadata": self.metadata,
            "output": self.output,
            "attachments": [a.as_dict() for a in self.attachments],
        }


def as_result(value: Any) -> ToolResult:
    """What a tool's function returned, as a :class:`ToolResult`: a string is the output, ``None`` an
    empty result, a mapping with an ``output`` key gives the fields it has, anything else is shown as
    indented JSON."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult()
    if isinstance(value, str):
        return ToolResult(output=value)
    if isinstance(value, Mapping) and "output" in value:
        attachments = [
            a if isinstance(a, Attachment) else Attachment(**a) for a in value.get("attachments") or []
        ]
        return ToolResult(
            output=str(value["output"]),
            title=str(value.get("title") or ""),
            metadata=dict(value.get("metadata") or {}),
            attachments=attachments,
        )
    return ToolResult(output=json.dumps(value, indent=2, default=str, ensure_ascii=False))


def unicode_text(text: str) -> str:
    """``text`` as valid Unicode, what every wire can carry: a file name that is not UTF-8 (a lone
    surrogate for each such byte, as the OS gives it) shows U+FFFD in each byte's place, as ``glob``
    lists it; any other lone surrogate becomes U+FFFD too."""
    if not isinstance(text, str) or text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")
