"""The repair of a raw call (core spec §4.2): what tool and arguments a call as the model sent it becomes.

A name that is only wrong in case becomes the lower-case tool; an unknown name, or arguments that are not
valid JSON, turn the call into ``invalid`` with ``{tool, error}``. ``invalid`` itself is never offered but
is a tool of the request all the same (OpenCode leaves it out of ``activeTools`` only), so a model that
calls it by name has it run, unless the rules deny it wholly (as an agent denying ``*`` does): then the
repaired call cannot run, and fails as the AI SDK's does, naming ``invalid``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..parts import ToolCall
from ..permission import Ruleset, disabled, merge
from ..registry import INVALID

#: The longest part of unparseable arguments the invalid-JSON error quotes.
QUOTED_ARGUMENTS = 2000


class Repaired(NamedTuple):
    """A repaired call: the tool it runs as and its arguments, whether it was rerouted to ``invalid``, and
    the error of a reroute that cannot run (``None`` when it can)."""

    name: str
    args: dict[str, Any]
    rerouted: bool = False
    refusal: str | None = None


def repair(
    call: ToolCall, offered: Mapping[str, Any], *rulesets: Ruleset, lists_invalid: bool = True
) -> Repaired:
    """Repair ``call`` against the ``offered`` tools (by name) under ``rulesets`` (the agent's, then the
    session's: merged, later ones winning, only when a reroute needs them). ``lists_invalid``: whether
    the unknown-tool error names ``invalid`` among the available tools (see ``Session.lists_invalid``)."""
    if type(call.arguments) is dict and call.name in offered:  # most calls: nothing to repair
        return Repaired(call.name, dict(call.arguments))

    def has_invalid() -> bool:  # asked only when a call needs rerouting: it costs a rules walk
        return bool(offered) and not disabled([INVALID], merge(*rulesets))

    def unavailable(tool: str, with_invalid: bool) -> str:
        from ..collate import sort_key  # OpenCode's order of names: only an unknown tool's error needs it

        names = sorted([*offered, *([INVALID] if with_invalid and lists_invalid else [])], key=sort_key)
        listing = f"Available tools: {', '.join(names)}." if names else "No tools are available."
        return f"Model tried to call unavailable tool '{tool}'. {listing}"

    def rerouted(error: str) -> Repaired:
        available = has_invalid()
        return Repaired(
            INVALID,
            {"tool": call.name, "error": error},
            True,
            None if available else unavailable(INVALID, False),
        )

    name = call.name
    if name not in offered and not (name == INVALID and has_invalid()):
        lowered = name.lower()
        if lowered != name and lowered in offered:
            name = lowered
        else:
            return rerouted(unavailable(call.name, has_invalid()))
    raw = call.arguments
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return Repaired(name, {})
    if not isinstance(raw, str):
        return Repaired(name, dict(raw) if isinstance(raw, dict) else raw)
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError) as error:  # not JSON, nested too deeply, a number too long
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        text = raw if len(raw) <= QUOTED_ARGUMENTS else raw[:QUOTED_ARGUMENTS] + f"… ({len(raw)} characters)"
        return rerouted(
            f"Invalid input for tool {name}: JSON parsing failed: Text: {text}.\nError message: {reason}"
        )
    return Repaired(name, parsed)
