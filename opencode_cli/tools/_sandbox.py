"""Whether and how a bash command is sandboxed (see :mod:`opencode_cli.sandbox`).

:func:`prepare` decides once per call: the ``[sandbox]`` settings (or ``--sandbox``), the ``sandbox``
permission (a command the rules or an approved ask let out runs unsandboxed), what the kernel supports
(a loud warning, or a refusal with ``required = true``, where it cannot), and the plan with its rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import sandbox
from ..errors import PermissionFailure
from ..permission import NO_MATCH, evaluate, merge

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..permission import Rule
    from ..sandbox.landlock import Rules

PERMISSION = "sandbox"


@dataclass
class Sandboxed:
    """A call that runs in the sandbox: its plan and the launcher's rules."""

    plan: sandbox.Plan
    rules: Rules


def settings_of(ctx: ToolContext) -> sandbox.Settings:
    """The sandbox settings the call runs under (the project's config, then ``OPENCODE_SANDBOX``)."""
    return sandbox.settings(ctx.project.config.data, ctx.env)


def _rules(ctx: ToolContext) -> list[Rule]:
    session = ctx.session
    return merge(session.agent.permission, session.rules)


def decide(patterns: list[str], rules: list[Rule]) -> str:
    """``allow``, ``ask`` or ``deny`` for running the command unsandboxed: only rules that name the
    ``sandbox`` permission count (a blanket ``"*" = "allow"`` does not let commands out), matched as
    bash's are; with none, ``deny``. Every pattern must be allowed for ``allow``."""
    own = [rule for rule in rules if rule.permission == PERMISSION]
    actions = []
    for pattern in patterns:
        rule = evaluate(PERMISSION, pattern, own)
        actions.append("deny" if rule.source == NO_MATCH else rule.action)
    if "deny" in actions or not actions:
        return "deny"
    return "ask" if "ask" in actions else "allow"


async def _let_out(ctx: ToolContext, patterns: list[str], command: str) -> bool:
    action = decide(patterns, _rules(ctx))
    if action != "ask":
        return action == "allow"
    try:
        await ctx.ask(PERMISSION, patterns, always=patterns, metadata={"command": command})
    except PermissionFailure:
        return False  # rejected or denied: it runs in the sandbox
    return True


async def prepare(
    ctx: ToolContext, patterns: list[str], command: str, spill: Path | None
) -> Sandboxed | None:
    """The sandbox of this call, or ``None`` when it runs unsandboxed (mode off, let out, or no Landlock:
    see :func:`opencode_cli.sandbox.confine`, which also refuses when the sandbox is required)."""
    settings = settings_of(ctx)
    if not settings.on or await _let_out(ctx, patterns or [command], command):
        return None
    confined = sandbox.confine(
        settings, directory=ctx.directory, worktree=ctx.worktree, env=ctx.env, spill=spill
    )
    return None if confined is None else Sandboxed(*confined)
