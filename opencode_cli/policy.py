"""What a model is offered: the one place that decides (core spec §3.5, §6.2, §8.4).

:func:`offered` is used by every host: ``tools list``/``inspect``/``schema``/``call``, a session's
``resolve``, the watcher's reports, and later the MCP server. A registered tool is left out, with the
first reason that applies, when

1. the registry gated it (a plugin's ``gate``, or it failed to load);
2. a per-tool rule of the spec hides it (:data:`RULES`). The request filters of core §3.5 and §6.2
   (``invalid``; edit/write vs apply_patch; websearch) go by id, whatever the source, as OpenCode's do;
   the conditions on registering a built-in (core §3.1: ``question``, ``execute``, ``lsp``, ``plan_exit``)
   apply to the built-in only, so a user's tool that happens to be called ``execute`` is offered;
3. ``[tools]`` in config switches it off (``bash = false``; keys may use ``*``), as OpenCode's
   ``tools: {name: false}``;
4. the request switches it off (a per-prompt ``tools`` map);
5. the permission rules deny it wholly (:func:`opencode_cli.permission.disabled`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .permission import disabled, match
from .registry import INVALID

if TYPE_CHECKING:
    from .agents import Agent
    from .flags import Flags
    from .modelref import ModelRef
    from .permission import Ruleset
    from .registry import Hidden, Registry, ToolDefinition, ToolEntry

#: Why a tool the permission rules deny for every pattern is not offered (core spec §8.4).
DENIED_WHOLLY = "denied wholly by the agent's permission rules"


@dataclass(frozen=True)
class Situation:
    """What the per-tool rules look at."""

    model: ModelRef | None
    flags: Flags
    mcp_tools: int = 0
    """How many MCP tools are connected (code mode offers ``execute`` only when there are some)."""
    task_agents: str = ""
    """The subagents the calling agent may start, appended to ``task``'s description (core §3.6)."""


@dataclass(frozen=True)
class ToolRule:
    """A rule of the spec that hides a built-in tool; ``hide`` returns the reason, or ``None``."""

    tools: tuple[str, ...]
    spec: str
    hide: Callable[[Situation], str | None]
    per_model: bool = False
    """The rule needs a model: without one it does not apply (and ``tools list`` says so)."""
    builtin_only: bool = False
    """The rule is a condition on registering the built-in (core §3.1), not a filter by id."""


def uses_apply_patch(model_id: str) -> bool:
    """OpenCode's rule: GPT models other than ``gpt-4*`` and ``*oss*`` edit with ``apply_patch``."""
    return "gpt-" in model_id and "oss" not in model_id and "gpt-4" not in model_id


def _never(situation: Situation) -> str:
    return "never offered to a model: calls to unknown tools are repaired into it"


def _question(situation: Situation) -> str | None:
    if situation.flags.question_tool_enabled:
        return None
    return (
        f"offered only to the app, cli and desktop clients (OPENCODE_CLIENT is {situation.flags.client!r}) "
        "or with OPENCODE_ENABLE_QUESTION_TOOL"
    )


def _websearch(situation: Situation) -> str | None:
    model, flags = situation.model, situation.flags
    if (
        model is None
        or model.provider in ("opencode", "opencode-go")
        or flags.enable_exa
        or flags.enable_parallel
    ):
        return None
    return "offered only for the opencode provider (or with OPENCODE_ENABLE_EXA / _PARALLEL)"


def _apply_patch(situation: Situation) -> str | None:
    model = situation.model
    if model is None or uses_apply_patch(model.id):
        return None
    return f"{model.id} edits with edit/write (apply_patch is for gpt- models other than gpt-4 and oss)"


def _edit_write(situation: Situation) -> str | None:
    model = situation.model
    return f"{model.id} edits with apply_patch" if model is not None and uses_apply_patch(model.id) else None


def _execute(situation: Situation) -> str | None:
    if not situation.flags.experimental_code_mode:
        return "code mode is off (OPENCODE_EXPERIMENTAL_CODE_MODE)"
    if situation.mcp_tools == 0:
        return "offered only when MCP tools are connected (code mode)"
    return None


def _lsp(situation: Situation) -> str | None:
    if situation.flags.experimental_lsp_tool:
        return None
    return "the lsp tool is experimental (OPENCODE_EXPERIMENTAL_LSP_TOOL)"


def _plan_exit(situation: Situation) -> str | None:
    flags = situation.flags
    if not flags.experimental_plan_mode:
        return "experimental plan mode is off (OPENCODE_EXPERIMENTAL_PLAN_MODE)"
    if flags.client != "cli":
        return f"offered only to the cli client in plan mode (OPENCODE_CLIENT is {flags.client!r})"
    return None


#: The per-tool rules of the spec, one place for all of them.
RULES: tuple[ToolRule, ...] = (
    ToolRule((INVALID,), "core §4.1, §6.2 (activeTools leaves out invalid)", _never),
    ToolRule(("question",), "core §3.1 item 2; builtin-tools §1.10", _question, builtin_only=True),
    ToolRule(("websearch",), "core §3.5 step 1", _websearch, per_model=True),
    ToolRule(("apply_patch",), "core §3.5 step 1 (usePatch)", _apply_patch, per_model=True),
    ToolRule(("edit", "write"), "core §3.5 step 1 (usePatch)", _edit_write, per_model=True),
    ToolRule(
        ("execute",), "core §3.1 item 15, §3.5 step 2; builtin-tools §15.3", _execute, builtin_only=True
    ),
    ToolRule(("lsp",), "core §3.1 item 16; builtin-tools §15.1", _lsp, builtin_only=True),
    ToolRule(("plan_exit",), "core §3.1 item 17; builtin-tools §15.2", _plan_exit, builtin_only=True),
)

_RULE_BY_TOOL: dict[str, ToolRule] = {tool: rule for rule in RULES for tool in rule.tools}


def depends_on_model(entry: ToolEntry) -> bool:
    """Whether a per-model rule decides if ``entry`` is offered (edit/write/apply_patch, websearch)."""
    rule = _RULE_BY_TOOL.get(entry.id)
    return rule is not None and rule.per_model


def rule_reason(entry: ToolEntry, situation: Situation) -> str | None:
    """Why the spec's per-tool rule hides ``entry`` (``None``: no rule, or it is offered)."""
    rule = _RULE_BY_TOOL.get(entry.id)
    if rule is None or (rule.builtin_only and entry.source.kind != "builtin"):
        return None
    return rule.hide(situation)


def describe_task(caller: Agent, agents: Mapping[str, Agent]) -> str:
    """The agent list of ``task``'s description (core §3.6): agents that are not primary-only and that
    the caller's ``task`` rules do not deny, by name."""
    from .permission import evaluate
    from .tools._collate import sort_key

    allowed = [
        agent
        for agent in agents.values()
        if agent.mode != "primary" and evaluate("task", agent.name, caller.permission).action != "deny"
    ]
    lines = ["Available agent types and the tools they have access to:"]
    for agent in sorted(allowed, key=lambda a: sort_key(a.name)):
        description = agent.description or "This subagent should only be called manually by the user."
        lines.append(f"- {agent.name}: {description}")
    return "\n".join(lines)


def switched_off(tool_id: str, switches: Mapping[str, Any]) -> bool:
    """Whether a ``{name: bool}`` map (``[tools]`` in config, a per-request map) turns ``tool_id`` off; the
    last matching key decides, and keys may use ``*``."""
    verdict = None
    for pattern, on in switches.items():
        if isinstance(on, bool) and match(tool_id, pattern):
            verdict = on
    return verdict is False


@dataclass
class Offer:
    """The tools offered, in registry order, and the others with the reason."""

    tools: list[ToolDefinition] = field(default_factory=list)
    hidden: list[Hidden] = field(default_factory=list)

    def ids(self) -> list[str]:
        """The ids offered, in order."""
        return [definition.id for definition in self.tools]


def hidden_reason(
    entry: ToolEntry,
    situation: Situation,
    *,
    config_switches: Mapping[str, Any] | None = None,
    request_switches: Mapping[str, Any] | None = None,
    denied: Iterable[str] = (),
) -> str | None:
    """Why ``entry`` is not offered, the first reason in the order of the module docstring."""
    if entry.gate is not None:
        return entry.gate
    reason = rule_reason(entry, situation)
    if reason is not None:
        return reason
    if config_switches and switched_off(entry.id, config_switches):
        return "switched off by [tools] in config"
    if request_switches and switched_off(entry.id, request_switches):
        return "switched off for this request"
    if entry.id in denied:
        return DENIED_WHOLLY
    return None


def offered(
    registry: Registry,
    situation: Situation,
    ruleset: Ruleset,
    *,
    config_switches: Mapping[str, Any] | None = None,
    request_switches: Mapping[str, Any] | None = None,
) -> Offer:
    """Decide what is offered: the offered tools get their definitions (after the ``tool_definition``
    hooks; one that cannot be described is hidden as failed), the others their reason."""
    from .registry import Hidden

    denied = disabled([entry.id for entry in registry.all()], ruleset)
    offer = Offer()
    for entry in list(registry.entries.values()):
        reason = hidden_reason(
            entry,
            situation,
            config_switches=config_switches,
            request_switches=request_switches,
            denied=denied,
        )
        if reason is None:
            definition = registry.safe_definition(entry, situation.model)
            if definition is not None:
                if entry.id == "task" and entry.source.kind == "builtin" and situation.task_agents:
                    described = definition.output.description
                    definition.output.description = "\n".join(
                        p for p in (described, situation.task_agents) if p
                    )
                offer.tools.append(definition)
                continue
            reason = entry.gate
        if reason is not None:
            offer.hidden.append(Hidden(entry, reason))
    return offer
