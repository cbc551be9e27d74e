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

Code mode (core §3.5 step 2, §6.1 "Code Mode early return"): with ``OPENCODE_EXPERIMENTAL_CODE_MODE`` the
tools of MCP servers are not offered (the resource tools still are); a script run by ``execute`` calls
them. :func:`code_mode_tools` is the one list of the MCP tools a script may call: ``execute`` is offered
only when it is not empty, and its description ends with their catalogue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .permission import disabled, match
from .record import Record
from .registry import INVALID
from .steps import Steps, drive

if TYPE_CHECKING:
    from .agents import Agent
    from .flags import Flags
    from .modelref import ModelRef
    from .permission import Ruleset
    from .registry import Hidden, Registry, ToolDefinition, ToolEntry

#: Why a tool the permission rules deny for every pattern is not offered (core spec §8.4).
DENIED_WHOLLY = "denied wholly by the agent's permission rules"
#: Why an MCP tool is not offered in code mode (core spec §6.1).
CALLED_FROM_CODE = "code mode: called from scripts of the execute tool (OPENCODE_EXPERIMENTAL_CODE_MODE)"
#: The resource tools of MCP (core spec §6.1): offered in code mode too.
MCP_RESOURCE_TOOLS = frozenset({"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"})
#: The built-ins a code-mode script may call with ``[experimental] code_mode_builtins`` (read-only ones).
CODE_MODE_BUILTINS = ("read", "glob", "grep")


class Situation(Record):
    """What the per-tool rules look at (built for each offer, never changed).

    ``mcp_tools``: how many MCP tools a script may call (code mode offers ``execute`` only when there are
    some; :func:`offered` counts them). ``code_mode_builtins``: ``[experimental] code_mode_builtins``,
    scripts may call read, glob and grep too. ``task_agents``: the subagents the calling agent may start,
    appended to ``task``'s description (core §3.6). ``catalogue``: how code mode describes what a script
    may call (the MCP tools, then the built-ins), handed in by the project from
    :mod:`opencode_cli.codemode`; ``None``: ``execute`` gets no catalogue.
    """

    __slots__ = ("catalogue", "code_mode_builtins", "flags", "mcp_tools", "model", "task_agents")

    def __init__(
        self,
        model: ModelRef | None,
        flags: Flags,
        mcp_tools: int = 0,
        code_mode_builtins: bool = False,
        task_agents: str = "",
        catalogue: Callable[[list[ToolEntry], list[ToolEntry]], str] | None = None,
    ) -> None:
        self.model = model
        self.flags = flags
        self.mcp_tools = mcp_tools
        self.code_mode_builtins = code_mode_builtins
        self.task_agents = task_agents
        self.catalogue = catalogue

    def with_mcp_tools(self, count: int) -> Situation:
        """The same situation with ``count`` MCP tools a script may call."""
        return Situation(
            self.model, self.flags, count, self.code_mode_builtins, self.task_agents, self.catalogue
        )


class ToolRule(Record):
    """A rule of the spec that hides a built-in tool (a row of :data:`RULES`); ``hide`` returns the reason,
    or ``None``. ``per_model``: the rule needs a model (without one it does not apply, and ``tools list``
    says so). ``builtin_only``: the rule is a condition on registering the built-in (core §3.1), not a
    filter by id."""

    __slots__ = ("builtin_only", "hide", "per_model", "spec", "tools")

    def __init__(
        self,
        tools: tuple[str, ...],
        spec: str,
        hide: Callable[[Situation], str | None],
        per_model: bool = False,
        builtin_only: bool = False,
    ) -> None:
        self.tools = tools
        self.spec = spec
        self.hide = hide
        self.per_model = per_model
        self.builtin_only = builtin_only


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
        return "offered only when MCP tools are connected and allowed (code mode)"
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


def is_mcp_tool(entry: ToolEntry) -> bool:
    """Whether ``entry`` is a tool of an MCP server (the resource tools are not)."""
    return entry.source.kind == "mcp" and entry.id not in MCP_RESOURCE_TOOLS


def _callable(entry: ToolEntry, denied: Iterable[str], config_switches: Mapping[str, Any] | None) -> bool:
    return (
        entry.gate is None
        and entry.id not in denied
        and not (config_switches and switched_off(entry.id, config_switches))
    )


def code_mode_tools(
    registry: Registry,
    ruleset: Ruleset,
    *,
    config_switches: Mapping[str, Any] | None = None,
    denied: Iterable[str] | None = None,
) -> list[ToolEntry]:
    """The MCP tools a code-mode script may call (and ``execute``'s catalogue lists): connected, not
    denied wholly by ``ruleset`` (core §3.5 step 2), not switched off by ``[tools]``."""
    if denied is None:
        denied = disabled([entry.id for entry in registry.all()], ruleset)
    denied = set(denied)
    return [e for e in registry.all() if is_mcp_tool(e) and _callable(e, denied, config_switches)]


def code_mode_builtins(
    registry: Registry,
    ruleset: Ruleset,
    *,
    config_switches: Mapping[str, Any] | None = None,
    denied: Iterable[str] | None = None,
) -> list[ToolEntry]:
    """The built-ins a script may call with ``[experimental] code_mode_builtins`` (read, glob, grep), when
    registered as built-ins, not denied wholly and not switched off."""
    if denied is None:
        denied = disabled([entry.id for entry in registry.all()], ruleset)
    denied = set(denied)
    entries = [registry.entries.get(tool_id) for tool_id in CODE_MODE_BUILTINS]
    return [
        e
        for e in entries
        if e is not None and e.source.kind == "builtin" and _callable(e, denied, config_switches)
    ]


def describe_task(caller: Agent, agents: Mapping[str, Agent]) -> str:
    """The agent list of ``task``'s description (core §3.6): agents that are not primary-only and that
    the caller's ``task`` rules do not deny, by name."""
    from .collate import sort_key
    from .permission import evaluate

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


class Offer(Record):
    """The tools offered, in registry order, and the others with the reason."""

    __slots__ = ("hidden", "tools")

    def __init__(self, tools: list[ToolDefinition] | None = None, hidden: list[Hidden] | None = None) -> None:
        self.tools: list[ToolDefinition] = [] if tools is None else tools
        self.hidden: list[Hidden] = [] if hidden is None else hidden

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
    if situation.flags.experimental_code_mode and is_mcp_tool(entry):
        return CALLED_FROM_CODE
    if config_switches and switched_off(entry.id, config_switches):
        return "switched off by [tools] in config"
    if request_switches and switched_off(entry.id, request_switches):
        return "switched off for this request"
    if entry.id in denied:
        return DENIED_WHOLLY
    return None


def offered(registry: Registry, situation: Situation, ruleset: Ruleset, **options: Any) -> Offer:
    """:func:`offer_steps` from sync code (``options``: its keyword arguments)."""
    return drive(offer_steps(registry, situation, ruleset, **options))


def offer_steps(
    registry: Registry,
    situation: Situation,
    ruleset: Ruleset,
    *,
    config_switches: Mapping[str, Any] | None = None,
    request_switches: Mapping[str, Any] | None = None,
    schemas: bool = False,
) -> Steps[Offer]:
    """Decide what is offered: the offered tools get their definitions (after the ``tool_definition``
    hooks, the steps; one that cannot be described is hidden as failed), the others their reason. Each
    schema is made when it is first read, so a listing never pays for one; ``schemas=True`` makes them
    now, for whoever sends them, so that a tool whose parameters cannot be described is hidden as failed
    too. :func:`offered` drives it from sync code, ``adrive`` (:mod:`opencode_cli.steps`) on a loop."""
    from .registry import Hidden

    denied = disabled([entry.id for entry in registry.all()], ruleset)
    scripted: list[ToolEntry] = []
    if situation.flags.experimental_code_mode:
        scripted = code_mode_tools(registry, ruleset, config_switches=config_switches, denied=denied)
        situation = situation.with_mcp_tools(len(scripted))
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
            definition = yield from registry.safe_definition_steps(entry, situation.model, schema=schemas)
            if definition is not None:
                if entry.id == "task" and entry.source.kind == "builtin" and situation.task_agents:
                    described = definition.output.description
                    definition.output.description = "\n".join(
                        p for p in (described, situation.task_agents) if p
                    )
                if entry.id == "execute" and entry.source.kind == "builtin" and scripted:
                    catalogue = _code_mode_catalogue(registry, ruleset, scripted, situation, config_switches)
                    described = definition.output.description
                    definition.output.description = "\n".join(p for p in (described, catalogue) if p)
                offer.tools.append(definition)
                continue
            reason = entry.gate
        if reason is not None:
            offer.hidden.append(Hidden(entry, reason))
    return offer


def _code_mode_catalogue(
    registry: Registry,
    ruleset: Ruleset,
    scripted: list[ToolEntry],
    situation: Situation,
    config_switches: Mapping[str, Any] | None,
) -> str:
    """The catalogue ``execute``'s description ends with (core §3.5 step 3)."""
    if situation.catalogue is None:
        return ""
    builtins = (
        code_mode_builtins(registry, ruleset, config_switches=config_switches)
        if situation.code_mode_builtins
        else []
    )
    return situation.catalogue(scripted, builtins)
