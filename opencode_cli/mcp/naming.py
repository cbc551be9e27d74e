"""The ids MCP tools get: ``<server>_<tool>``, sanitized, at most 64 characters, one prefix per server.

Providers accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI and Anthropic refuse the whole
request otherwise). Every other character becomes ``_`` (as OpenCode does); an id longer than 64 characters
keeps a readable start and ends with a short hash of the full id (:func:`fit`), the same every time, so
calls find their tool. Two servers whose names sanitize alike (``time.v2`` and ``time_v2``) would give the
same ids: the later one in the config gets its name and a short hash of it as its prefix
(:func:`prefixes`), and a note says so. :func:`renamed` gives a tool's id and why it is not plainly
``<server>_<tool>``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import NamedTuple

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


class Prefix(NamedTuple):
    """The prefix of one server's tool ids, and the earlier server whose name sanitizes alike, if any."""

    prefix: str
    server: str
    like: str | None = None
    """The server that came first in the config with a name that sanitizes as ``server``'s does (then
    ``prefix`` is not ``server``'s sanitized name)."""

    @property
    def note(self) -> str | None:
        """The warning when the prefix is not the sanitized name (``None`` when it is)."""
        if self.like is None:
            return None
        taken = sanitize(self.server)
        return (
            f'MCP servers "{self.like}" and "{self.server}" both give tool ids "{taken}_…"; '
            f'the tools of "{self.server}" are named "{self.prefix}_…"'
        )

    @property
    def reason(self) -> str | None:
        """Why the server's tool ids do not start with its sanitized name (``None`` when they do)."""
        return None if self.like is None else f'server "{self.server}" sanitizes like "{self.like}"'


def prefixes(servers: Iterable[str]) -> dict[str, Prefix]:
    """Each server's id prefix, in config order: its sanitized name, or, when a server earlier in the
    config has a name that sanitizes alike, that name, ``_`` and a short hash of its own name."""
    found: dict[str, Prefix] = {}
    taken: dict[str, str] = {}
    for name in servers:
        prefix = sanitize(name)
        like = taken.get(prefix)
        if like is not None:
            prefix = f"{prefix}_{_digest(name, 4)}"
        taken.setdefault(prefix, name)
        found[name] = Prefix(prefix, name, like)
    return found


def renamed(prefix: Prefix, tool: str) -> tuple[str, str | None]:
    """The id of ``tool`` of the server of ``prefix``, and why it is not ``<server>_<tool>`` sanitized
    (its server was renamed, it was shortened), ``None`` when it is. ``tools list --all`` shows that
    reason."""
    full = f"{prefix.prefix}_{sanitize(tool)}"
    made = fit(full)
    reasons = [prefix.reason] if prefix.reason else []
    if made != full:
        reasons.append(f'"{full}" has more than {MAX_ID} characters')
    return made, "; ".join(reasons) or None
