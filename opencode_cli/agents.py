"""Agents: the built-in ones (build, plan, general, explore) with OpenCode's default rulesets, plus
agents declared in config ``[agent.NAME]`` (core spec §8.6, §5.3, §5.4).

An ``[agent.NAME]`` table takes OpenCode's keys: ``model`` (``provider/model``), ``prompt``, ``steps`` (or
the deprecated ``maxSteps``), ``temperature``, ``top_p``, ``mode``, ``description``, ``color``,
``hidden``, ``disable``, ``permission``, the legacy ``tools`` switches and ``options``; any other key is
collected into ``options``. A table for a built-in agent changes only the keys it sets.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

from .errors import ConfigError
from .modelref import ModelRef
from .permission import Rule, Ruleset, evaluate, from_config

Mode = Literal["primary", "subagent", "all"]

#: Keys of an ``[agent.NAME]`` table read here; any other key goes into :attr:`Agent.options`.
KNOWN_KEYS = frozenset(
    {
        "model", "prompt", "steps", "maxSteps", "temperature", "top_p", "mode", "description", "color",
        "hidden", "disable", "permission", "tools", "options",
    }
)  # fmt: skip


@dataclass
class Agent:
    """An agent: a name, a mode, a description and the permission rules its tool calls are judged by,
    plus what config sets for its model calls (``None``: not set, the session's default applies)."""

    name: str
    mode: Mode
    description: str = ""
    permission: Ruleset = field(default_factory=list)
    hidden: bool = False
    builtin: bool = True
    model: ModelRef | None = None
    prompt: str | None = None
    #: The most agentic iterations (model turns) per prompt.
    steps: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    color: str | None = None
    #: Other keys of the agent's config table, passed on to the provider as they are.
    options: dict[str, Any] = field(default_factory=dict)

    _task_capable: tuple[tuple[Rule, ...], bool] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def task_capable(self) -> bool:
        """Whether the agent may launch subagents (``task`` is not denied): picks the truncation hint.

        Asked on every call, so the answer is kept with the exact rules it was worked out from, and
        worked out again when they differ."""
        rules = tuple(self.permission)
        known = self._task_capable
        if known is not None and known[0] == rules:
            return known[1]
        capable = evaluate("task", "*", rules).action != "deny"
        self._task_capable = (rules, capable)
        return capable

    def as_dict(self) -> dict[str, Any]:
        """JSON shape for ``opencode agents list --json``."""
        return {
            "name": self.name,
            "mode": self.mode,
            "description": self.description,
            "hidden": self.hidden,
            "builtin": self.builtin,
            # a fixed key order here (opencode-tools's own listing), whatever form the rule was written in
            "permission": [
                {"permission": r.permission, "pattern": r.pattern, "action": r.action, "source": r.source}
                for r in self.permission
            ],
            "model": str(self.model) if self.model else None,
            "prompt": self.prompt,
            "steps": self.steps,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "color": self.color,
            "options": self.options,
        }


def _rules(table: Mapping[str, Any], home: str, source: str = "defaults") -> Ruleset:
    return from_config(table, home, source)


def _legacy_tools(tools: Mapping[str, Any], source: str) -> Ruleset:
    """The deprecated ``tools = {name = bool}`` switches as rules (write/edit/patch share ``edit``).

    OpenCode turns each into ``permission[name] = action`` before ``fromConfig``, so they are short rules."""
    rules = []
    for name, enabled in tools.items():
        key = "edit" if name in ("write", "edit", "patch", "apply_patch", "multiedit") else name
        rules.append(Rule(key, "*", "allow" if enabled else "deny", source, short=True))
    return rules


def build_agents(
    config: Mapping[str, Any],
    *,
    home: str,
    truncate_glob: str,
    data_dir: Path,
    extra_allowed_dirs: Iterable[str] = (),
    root: str | os.PathLike[str] | None = None,
) -> dict[str, Agent]:
    """Every agent of a project, with rulesets in OpenCode's order: defaults, config, per-agent, exemption.

    ``root`` is the project's root (its git worktree, or the directory outside git): the ``edit`` patterns
    the file tools ask with are relative to it, so the plan agent's plan-file rules are too (see
    :func:`plan_patterns`). Left out, the global plans folder stays an absolute pattern, which no ``edit``
    pattern matches.
    """
    allowlist = {truncate_glob: "allow", **{pattern: "allow" for pattern in extra_allowed_dirs}}
    defaults = _rules(
        {
            "*": "allow",
            "config": "ask",
            "doom_loop": "ask",
            "external_directory": {"*": "ask", **allowlist},
            "mcp_sampling": "ask",  # an MCP server asking the session's model (mcp.asks)
            "question": "deny",
            "plan_enter": "deny",
            "plan_exit": "deny",
            "read": {"*": "allow", "*.env": "ask", "*.env.*": "ask", "*.env.example": "allow"},
        },
        home,
    )
    local_plans, global_plans = plan_patterns(data_dir, root)
    builtins = {
        "build": Agent(
            "build",
            "primary",
            "The default agent: writes and runs code with every tool its permissions allow.",
            defaults + _rules({"question": "allow", "plan_enter": "allow"}, home, "defaults.build"),
        ),
        "plan": Agent(
            "plan",
            "primary",
            "Plans without changing files: edits are denied except plan files.",
            defaults
            + _rules(
                {
                    "question": "allow",
                    "plan_exit": "allow",
                    "task": {"general": "deny"},
                    "edit": {"*": "deny", local_plans: "allow", global_plans: "allow"},
                    "config": "deny",
                },
                home,
                "defaults.plan",
            ),
        ),
        "general": Agent(
            "general",
            "subagent",
            "A general-purpose subagent for research and multi-step tasks run in parallel.",
            defaults + _rules({"todowrite": "deny"}, home, "defaults.general"),
        ),
        "explore": Agent(
            "explore",
            "subagent",
            "A fast read-only subagent for finding files, searching code and answering questions about it.",
            defaults
            + _rules(
                {
                    "*": "deny",
                    **{
                        name: "allow"
                        for name in ("grep", "glob", "list", "bash", "webfetch", "websearch", "read")
                    },
                    # "*": deny above would deny other paths outright; upstream asks (spec §11.11)
                    "external_directory": {"*": "ask", **allowlist},
                    "config": "deny",
                },
                home,
                "defaults.explore",
            ),
        ),
    }
    user_rules: Ruleset = []
    if isinstance(config.get("tools"), Mapping):
        user_rules += _legacy_tools(config["tools"], "config tools")
    if "permission" in config:
        user_rules += _config_rules(config["permission"], home, "permission")
    agents = {
        name: replace(agent, permission=agent.permission + user_rules) for name, agent in builtins.items()
    }
    tables = config.get("agent") or {}
    if not isinstance(tables, Mapping):
        raise ConfigError(f"agent must be a table, not {tables!r}")
    for name, table in tables.items():
        if not isinstance(table, Mapping):
            raise ConfigError(f"agent.{name} must be a table")
        base = agents.get(name) or Agent(name, "all", permission=defaults + user_rules, builtin=False)
        agent = _configure(base, table, home, f"agent.{name}")
        if _get(table, f"agent.{name}", "disable", _is_bool, "true or false"):
            agents.pop(name, None)
        else:
            agents[name] = agent
    exemption = Rule("external_directory", truncate_glob, "allow", "truncation exemption")
    for agent in agents.values():
        opted_out = any(
            r.permission == "external_directory" and r.action == "deny" and r.pattern == truncate_glob
            for r in agent.permission
        )
        if not opted_out:
            agent.permission.append(exemption)
    return agents


def plan_patterns(data_dir: Path, root: str | os.PathLike[str] | None) -> tuple[str, str]:
    """The plan agent's plan files as ``edit`` patterns: ``.opencode/plans/*.md`` and the global
    ``<data>/plans/*.md`` relative to ``root`` (``../…`` when the data folder is elsewhere), as OpenCode's
    ``path.relative(Instance.worktree, …)`` gives it, with ``/`` separators."""
    global_plans = os.path.join(str(data_dir), "plans", "*.md")
    if root is not None:
        global_plans = os.path.relpath(global_plans, os.fspath(root))
    return ".opencode/plans/*.md", global_plans.replace(os.sep, "/")


def _config_rules(value: Any, home: str, where: str) -> Ruleset:
    try:
        return from_config(value, home, where)
    except (ValueError, AttributeError) as error:
        raise ConfigError(f"{where}: {error}") from None


def _configure(base: Agent, table: Mapping[str, Any], home: str, where: str) -> Agent:
    """``base`` with the keys an ``[agent.NAME]`` table sets; the keys it leaves out keep their value."""
    get = partial(_get, table, where)
    rules = list(base.permission)
    tools = get("tools", _is_table, "a table")
    if tools:
        rules += _legacy_tools(tools, f"{where}.tools")
    if "permission" in table:
        rules += _config_rules(table["permission"], home, f"{where}.permission")
    mode = table.get("mode", base.mode)
    if mode not in ("primary", "subagent", "all"):
        raise ConfigError(f"{where}.mode must be primary, subagent or all, not {mode!r}")
    model = get("model", _is_model, 'a "provider/model" string')
    steps = get("steps", _is_steps, "an integer >= 1")
    max_steps = get("maxSteps", _is_steps, "an integer >= 1")  # deprecated alias; steps wins
    options = get("options", _is_table, "a table") or {}
    extra = {key: value for key, value in table.items() if key not in KNOWN_KEYS}
    return replace(
        base,
        mode=mode,
        description=get("description", _is_str, "a string", base.description),
        permission=rules,
        hidden=get("hidden", _is_bool, "true or false", base.hidden),
        model=ModelRef.parse(model) if model else base.model,
        prompt=get("prompt", _is_str, "a string", base.prompt),
        steps=steps or max_steps or base.steps,
        temperature=get("temperature", _is_number, "a number", base.temperature),
        top_p=get("top_p", _is_number, "a number", base.top_p),
        color=get("color", _is_str, "a string", base.color),
        options={**base.options, **options, **extra},
    )


def _get(
    table: Mapping[str, Any],
    where: str,
    key: str,
    check: Callable[[Any], bool],
    expected: str,
    default: Any = None,
) -> Any:
    """``table[key]`` if it passes ``check``, ``default`` if unset; any other value is a ConfigError."""
    value = table.get(key)
    if value is None:
        return default
    if not check(value):
        raise ConfigError(f"{where}.{key} must be {expected}, not {value!r}")
    return value


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_table(value: Any) -> bool:
    return isinstance(value, Mapping)


def _is_model(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _is_number(value: Any) -> bool:
    """A finite int or float; ``true`` is not a number (though Python's bool is an int)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_steps(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
