"""The ids MCP tools get: ``<server>_<tool>``, sanitized, at most 64 characters, one prefix per server.

Providers accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI and Anthropic refuse the whole
request otherwise). Every other character becomes ``_`` (as OpenCode does); an id longer than 64 characters
keeps a readable start and ends with a short hash of the full id (:func:`fit`), the same every time, so
calls find their tool. Two servers whose names sanitize alike (``time.v2`` and ``time_v2``) would give the
same ids: the later one in the config gets its name and a short hash of it as its prefix
(:func:`prefixes`), and a note says so.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

#: What a provider accepts as a tool name.
VALID_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: The longest tool id sent to a model.
MAX_ID = 64
#: Hex digits of the hash that ends a shortened id (or a renamed prefix).
HASH_DIGITS = 8


def sanitize(name: str) -> str:
    """A server or tool name as it may stand in a tool id."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)


def _digest(text: str, digits: int = HASH_DIGITS) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:digits]


def fit(tool_id: str) -> str:
    """``tool_id`` if it has at most :data:`MAX_ID` characters, else its start, ``_`` and a hash of it."""
    if len(tool_id) <= MAX_ID:
        return tool_id
    return f"{tool_id[: MAX_ID - HASH_DIGITS - 1]}_{_digest(tool_id)}"


def tool_id(prefix: str, tool: str) -> str:
    """The id of ``tool`` of the server whose prefix is ``prefix``."""
    return fit(f"{prefix}_{sanitize(tool)}")


def prefixes(servers: Iterable[str]) -> dict[str, tuple[str, str | None]]:
    """Each server's id prefix, in config order, and a note when it is not its sanitized name (another
    server came first with a name that sanitizes alike)."""
    found: dict[str, tuple[str, str | None]] = {}
    taken: dict[str, str] = {}
    for name in servers:
        prefix = sanitize(name)
        note = None
        if prefix in taken:
            first = taken[prefix]
            renamed = f"{prefix}_{_digest(name, 4)}"
            note = (
                f'MCP servers "{first}" and "{name}" both give tool ids "{prefix}_…"; '
                f'the tools of "{name}" are named "{renamed}_…"'
            )
            prefix = renamed
        taken.setdefault(prefix, name)
        found[name] = (prefix, note)
    return found
