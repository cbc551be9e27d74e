"""Permission asks of a served call, put to the person behind the MCP client.

A client that declared the elicitation capability gets a form: once, always or reject, and optional
feedback for the model (with a reject). With ``--yes`` every ask is approved once. Otherwise nobody can be
asked: the ask is rejected, and the call's result names the flag that would allow it (:func:`hint`).
"""

from __future__ import annotations

import shlex
import sys
from typing import Any

from ...permission import Request as PermissionRequest
from ...session import Decision
from .calls import CURRENT, declares_elicitation

__all__ = ["DECISION_SCHEMA", "declares_elicitation", "hint", "make_prompt", "message_for"]

#: The form a client shows: ``decision`` (required) and ``feedback`` (optional).
DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "title": "Allow this?",
            "description": "once: just this call · always: this and the like for the rest of this session "
            "· reject: refuse the call",
            "enum": ["once", "always", "reject"],
            "enumNames": ["Allow once", "Allow always", "Reject"],
        },
        "feedback": {
            "type": "string",
            "title": "Feedback for the model",
            "description": "With a reject: what to do instead (optional).",
        },
    },
    "required": ["decision"],
}


def message_for(request: PermissionRequest) -> str:
    """The question a person is shown."""
    patterns = ", ".join(request.patterns) or "*"
    lines = [f"OpenCode asks for permission: {request.permission} on {patterns}"]
    command = request.metadata.get("command") if isinstance(request.metadata, dict) else None
    if isinstance(command, str) and command:
        lines.append(f"command: {command}")
    if request.always and request.always != request.patterns:
        lines.append(f"'always' would allow: {', '.join(request.always)}")
    return "\n".join(lines)


def make_prompt(yes: bool) -> Any:
    """The sessions' prompt: ``--yes`` approves once; else the current call's client is asked through
    elicitation if it can be, and otherwise the ask is rejected and remembered for :func:`hint`."""

    async def approve(request: PermissionRequest) -> Decision:
        return Decision("once")

    async def ask(request: PermissionRequest) -> Decision:
        call = CURRENT.get()
        patterns = ", ".join(request.patterns)
        if call is None or not call.can_elicit():
            said = f"{request.permission} on {patterns} rejected: nobody can be asked"
            if call is not None:
                call.unanswered.append(request)
                await call.log("warning", said, event="denial", permission=request.permission)
            print(f"opencode mcp serve: {said}", file=sys.stderr, flush=True)
            return Decision("reject")
        await call.log("info", f"asking for {request.permission} on {patterns}", event="ask")
        try:
            result = await call.elicit(message_for(request), DECISION_SCHEMA)
        except Exception:  # the client failed to answer: nobody approved
            return Decision("reject")
        if result is None or result.action != "accept":  # unanswered, declined or cancelled
            return Decision("reject")
        content = result.content or {}
        decision = content.get("decision")
        if decision in ("once", "always"):
            return Decision(decision)
        feedback = content.get("feedback")
        return Decision("reject", feedback.strip() or None if isinstance(feedback, str) else None)

    return approve if yes else ask


def hint(unanswered: list[PermissionRequest]) -> str:
    """What a result adds when asks were rejected because nobody could be asked: the flags to allow them."""
    if not unanswered:
        return ""
    flags = []
    for request in unanswered:
        for pattern in request.patterns or ["*"]:
            flag = f"--allow {shlex.quote(f'{request.permission}={pattern}')}"
            if flag not in flags:
                flags.append(flag)
    return (
        "\n\nNobody could be asked for this permission: the MCP client does not support elicitation. "
        f"To allow it, start `opencode mcp serve` with {' '.join(flags)} (or --yes to approve every ask), "
        "or add an allow rule under [permission] in opencode.toml."
    )
