"""``opencode stats``: what the sessions kept in the store used and did, per model and per tool.

Per model: the steps (assistant messages), their tokens and cost (as each message recorded them,
:mod:`opencode_cli.models.usage`). Per tool: calls, errors, refusals (a permission denied or rejected; the
doom-loop guard), interruptions, invalid arguments, the median and 95th percentile of how long a call ran,
and how many outputs were truncated (with the bytes cut where the spilled file is still there). A call's
kind of ending is read from the exact texts the model was given (:mod:`opencode_cli.errors`).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .errors import INTERRUPTED, InvalidArgumentsError, RejectedError

#: How a failed call ended, by the start of the text the model was given.
_REFUSALS = (
    ("denied", "The user has specified a rule which prevents you from using this specific tool call."),
    ("rejected", RejectedError.MESSAGE),
    ("rejected", "The user rejected permission to use this specific tool call with the following feedback:"),
    ("doom_loop", "This call was refused: it is the third identical"),
)
INVALID = "The arguments provided to the tool are invalid"


def ending(part: dict[str, Any]) -> str:
    """How a stored tool part ended: ``completed``, ``running`` (not ended), ``interrupted``,
    ``denied``, ``rejected``, ``doom_loop``, ``invalid`` (arguments) or ``error``."""
    state = part.get("state") or {}
    status = state.get("status")
    if status == "completed":
        return "invalid" if part.get("tool") == "invalid" else "completed"
    if status != "error":
        return "running"
    error = str(state.get("error") or "")
    if error == INTERRUPTED:
        return "interrupted"
    if (state.get("metadata") or {}).get("permission") == "doom_loop":
        return "doom_loop"
    for kind, start in _REFUSALS:
        if error.startswith(start):
            return kind
    tool = str(part.get("tool"))
    called = InvalidArgumentsError.TEMPLATE.split("{detail}")[0].format(tool=tool)
    return "invalid" if error.startswith((INVALID, called)) else "error"


@dataclass
class ToolStats:
    """One tool's figures."""

    calls: int = 0
    errors: int = 0
    refused: int = 0
    doom_loop: int = 0
    interrupted: int = 0
    invalid: int = 0
    truncated: int = 0
    bytes_truncated: int = 0
    durations: list[int] = field(default_factory=list)

    def add(self, part: dict[str, Any]) -> None:
        """Count one stored tool part."""
        self.calls += 1
        kind = ending(part)
        self.errors += kind in ("error", "denied", "rejected", "doom_loop", "invalid")
        self.refused += kind in ("denied", "rejected")
        self.doom_loop += kind == "doom_loop"
        self.interrupted += kind == "interrupted"
        self.invalid += kind == "invalid"
        state = part.get("state") or {}
        times = state.get("time") or {}
        if isinstance(times.get("start"), int) and isinstance(times.get("end"), int):
            self.durations.append(max(0, times["end"] - times["start"]))
        metadata = state.get("metadata") or {}
        if metadata.get("truncated") is True:
            self.truncated += 1
            self.bytes_truncated += _cut(metadata.get("outputPath"), state.get("output") or "")

    def as_dict(self) -> dict[str, Any]:
        """The figures, durations as ``median_ms`` and ``p95_ms`` (``None`` without a finished call)."""
        return {
            "calls": self.calls,
            "errors": self.errors,
            "refused": self.refused,
            "doom_loop": self.doom_loop,
            "interrupted": self.interrupted,
            "invalid_arguments": self.invalid,
            "median_ms": percentile(self.durations, 50),
            "p95_ms": percentile(self.durations, 95),
            "truncated": self.truncated,
            "bytes_truncated": self.bytes_truncated,
        }


def _cut(path: Any, shown: str) -> int:
    """The bytes a truncation left out: the spilled file's size less what the model was shown (0 once the
    file is gone)."""
    try:  # the spill directory is one commands can write: a link planted there is not followed
        found = os.lstat(path) if isinstance(path, str) else None
    except OSError:
        return 0
    size = found.st_size if found is not None and stat.S_ISREG(found.st_mode) else 0
    return max(0, size - len(shown.encode("utf-8", "replace")))


def percentile(values: list[int], rank: int) -> int | None:
    """The ``rank``-th percentile of ``values`` (nearest rank), or ``None`` for no value."""
    if not values:
        return None
    ordered = sorted(values)
    index = max(0, -(-rank * len(ordered) // 100) - 1)
    return ordered[min(index, len(ordered) - 1)]


@dataclass
class ModelStats:
    """One model's figures."""

    steps: int = 0
    tokens: dict[str, int] = field(
        default_factory=lambda: {"input": 0, "output": 0, "reasoning": 0, "cache_read": 0, "cache_write": 0}
    )
    cost: float = 0.0

    def add(self, info: dict[str, Any]) -> None:
        """Count one stored assistant message."""
        self.steps += 1
        tokens = info.get("tokens") or {}
        cache = tokens.get("cache") or {}
        for key, value in (
            *tokens.items(),
            ("cache_read", cache.get("read")),
            ("cache_write", cache.get("write")),
        ):
            if key in self.tokens and isinstance(value, int):
                self.tokens[key] += value
        cost = info.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            self.cost += cost

    def as_dict(self) -> dict[str, Any]:
        """The figures, the cost rounded to a millionth of a dollar."""
        return {"steps": self.steps, "tokens": dict(self.tokens), "cost": round(self.cost, 6)}


def gather(
    messages: Iterable[tuple[str, dict[str, Any]]],
    parts: Iterable[tuple[str, dict[str, Any]]],
    directory: str | None = None,
) -> dict[str, Any]:
    """The figures of ``messages`` and ``parts`` (each with its session's directory; only ``directory``'s
    when given): ``{"models": {provider/model: …}, "tools": {tool: …}}``, each sorted by use."""
    models: dict[str, ModelStats] = {}
    tools: dict[str, ToolStats] = {}
    for where, info in messages:
        if directory is None or where == directory:
            name = "/".join(filter(None, (info.get("providerID"), info.get("modelID")))) or "-"
            models.setdefault(name, ModelStats()).add(info)
    for where, part in parts:
        if directory is None or where == directory:
            tools.setdefault(str(part.get("tool")), ToolStats()).add(part)
    return {
        "models": {k: v.as_dict() for k, v in sorted(models.items(), key=lambda kv: (-kv[1].steps, kv[0]))},
        "tools": {k: v.as_dict() for k, v in sorted(tools.items(), key=lambda kv: (-kv[1].calls, kv[0]))},
    }


def since(days: int | None, now: float | None = None) -> int:
    """The epoch milliseconds ``days`` days ago (0: from the start)."""
    if not days:
        return 0
    return int(((now if now is not None else time.time()) - days * 86400) * 1000)
