"""Permission rules: wildcard matching, evaluation, merging, and which tools a ruleset hides.

A rule is ``{permission, pattern, action}`` with action ``allow``, ``ask`` or ``deny``. Rulesets are plain
lists; merging is concatenation and the **last** matching rule wins (core spec §8).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Literal

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny")


@dataclass(frozen=True)
class Rule:
    """One permission rule."""

    permission: str
    pattern: str
    action: Action

    def as_dict(self) -> dict[str, str]:
        """The rule as OpenCode prints it in error messages."""
        return asdict(self)


Ruleset = list[Rule]


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    pattern = pattern.replace("\\", "/")
    optional_tail = pattern.endswith(" *")
    body = pattern[:-2] if optional_tail else pattern
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in body)
    if optional_tail:
        regex += "( .*)?"
    return re.compile(regex, re.DOTALL)


def match(value: str, pattern: str) -> bool:
    """OpenCode's wildcard match: ``*`` matches anything (``/`` included), ``?`` one character.

    A pattern ending in ``" *"`` also matches without its tail, so ``ls *`` matches ``ls`` but not
    ``lstmeval``. Backslashes count as slashes on both sides; matching is case-sensitive.
    """
    if pattern == "*":
        return True
    if "*" not in pattern and "?" not in pattern:
        return value.replace("\\", "/") == pattern.replace("\\", "/")
    return _compile(pattern).fullmatch(value.replace("\\", "/")) is not None


def evaluate(permission: str, pattern: str, *rulesets: Iterable[Rule]) -> Rule:
    """The last rule matching both ``permission`` and ``pattern``; ``ask`` when none does."""
    found: Rule | None = None
    for ruleset in rulesets:
        for rule in ruleset:
            if match(permission, rule.permission) and match(pattern, rule.pattern):
                found = rule
    return found or Rule(permission, "*", "ask")


def merge(*rulesets: Iterable[Rule]) -> Ruleset:
    """Concatenate rulesets; later ones win because evaluation takes the last match."""
    return [rule for ruleset in rulesets for rule in ruleset]


def _expand(pattern: str, home: str) -> str:
    if pattern == "~" or pattern == "$HOME":
        return home
    for prefix in ("~/", "$HOME/"):
        if pattern.startswith(prefix):
            return home.rstrip("/") + "/" + pattern[len(prefix) :]
    return pattern


def from_config(config: Mapping[str, Any] | str, home: str) -> Ruleset:
    """Rules from a ``[permission]`` table, in the table's key order.

    A string value is one rule for pattern ``*``; a table gives one rule per pattern, with ``~``,
    ``~/x``, ``$HOME`` and ``$HOME/x`` expanded. A bare string for the whole table means ``{"*": it}``.
    Values that are not actions raise :class:`ValueError` naming the key.
    """
    if isinstance(config, str):
        config = {"*": config}
    rules: Ruleset = []
    for permission, value in config.items():
        if isinstance(value, str):
            rules.append(Rule(permission, "*", _action(value, permission)))
        elif isinstance(value, Mapping):
            for pattern, action in value.items():
                rules.append(
                    Rule(permission, _expand(pattern, home), _action(action, f"{permission}.{pattern}"))
                )
        else:
            raise ValueError(f"permission.{permission} must be an action or a table of pattern = action")
    return rules


def _action(value: Any, where: str) -> Action:
    if value not in ACTIONS:
        raise ValueError(f"permission.{where} = {value!r} is not one of allow, ask, deny")
    return value


_SHARED_KEYS = {
    "edit": "edit",
    "write": "edit",
    "apply_patch": "edit",
    "list_mcp_resources": "read",
    "list_mcp_resource_templates": "read",
    "read_mcp_resource": "read",
}


def permission_key(tool_id: str) -> str:
    """The permission a tool asks under: edit, write and apply_patch share ``edit``."""
    return _SHARED_KEYS.get(tool_id, tool_id)


def disabled(tool_ids: Iterable[str], ruleset: Iterable[Rule]) -> set[str]:
    """The tools a ruleset denies wholly, so they are not offered to the model (core spec §8.4).

    A tool is hidden when the last rule whose *permission* matches its key has pattern ``*`` and
    action ``deny``; patterns of other rules are not looked at.
    """
    rules = list(ruleset)
    hidden: set[str] = set()
    for tool_id in tool_ids:
        key = permission_key(tool_id)
        last = next((r for r in reversed(rules) if match(key, r.permission)), None)
        if last is not None and last.pattern == "*" and last.action == "deny":
            hidden.add(tool_id)
    return hidden
