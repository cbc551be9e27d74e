"""Agents: the built-in ones (build, plan, general, explore) with OpenCode's default rulesets, plus
agents declared in config ``[agent.NAME]`` (core spec §8.6, §5.3, §5.4)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import ConfigError
from .permission import Rule, Ruleset, evaluate, from_config

Mode = Literal["primary", "subagent", "all"]


@dataclass
class Agent:
    """An agent: a name, a mode, a description and the permission rules its tool calls are judged by."""

    name: str
    mode: Mode
    description: str = ""
    permission: Ruleset = field(default_factory=list)
    hidden: bool = False
    builtin: bool = True

    @property
    def task_capable(self) -> bool:
        """Whether the agent may launch subagents (``task`` is not denied): picks the truncation hint."""
        return evaluate("task", "*", self.permission).action != "deny"

    def as_dict(self) -> dict[str, Any]:
        """JSON shape for ``opencode agents list --json``."""
        return {
            "name": self.name,
            "mode": self.mode,
            "description": self.description,
            "hidden": self.hidden,
            "builtin": self.builtin,
            "permission": [{**rule.as_dict(), "source": rule.source} for rule in self.permission],
        }


def _rules(table: Mapping[str, Any], home: str, source: str = "defaults") -> Ruleset:
    return from_config(table, home, source)


def _legacy_tools(tools: Mapping[str, Any], source: str) -> Ruleset:
    """The deprecated ``tools = {name = bool}`` switches as rules (write/edit/patch share ``edit``)."""
    rules = []
    for name, enabled in tools.items():
        key = "edit" if name in ("write", "edit", "patch", "apply_patch", "multiedit") else name
        rules.append(Rule(key, "*", "allow" if enabled else "deny", source))
    return rules


def build_agents(
    config: Mapping[str, Any],
    *,
    home: str,
    truncate_glob: str,
    data_dir: Path,
    extra_allowed_dirs: Iterable[str] = (),
) -> dict[str, Agent]:
    """Every agent of a project, with rulesets in OpenCode's order: defaults, config, per-agent, exemption."""
    allowlist = {truncate_glob: "allow", **{pattern: "allow" for pattern in extra_allowed_dirs}}
    defaults = _rules(
        {
            "*": "allow",
            "doom_loop": "ask",
            "external_directory": {"*": "ask", **allowlist},
            "question": "deny",
            "plan_enter": "deny",
            "plan_exit": "deny",
            "read": {"*": "allow", "*.env": "ask", "*.env.*": "ask", "*.env.example": "allow"},
        },
        home,
    )
    plans = str(data_dir / "plans" / "*.md")
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
                    "edit": {"*": "deny", ".opencode/plans/*.md": "allow", plans: "allow"},
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
    agents: dict[str, Agent] = {}
    for name, agent in builtins.items():
        agents[name] = Agent(agent.name, agent.mode, agent.description, agent.permission + user_rules)
    for name, table in (config.get("agent") or {}).items():
        if not isinstance(table, Mapping):
            raise ConfigError(f"agent.{name} must be a table")
        base = agents.get(name)
        rules = list(base.permission) if base else defaults + user_rules
        if isinstance(table.get("tools"), Mapping):
            rules += _legacy_tools(table["tools"], f"agent.{name}.tools")
        if "permission" in table:
            rules += _config_rules(table["permission"], home, f"agent.{name}.permission")
        mode = table.get("mode", base.mode if base else "all")
        if mode not in ("primary", "subagent", "all"):
            raise ConfigError(f"agent.{name}.mode must be primary, subagent or all, not {mode!r}")
        agents[name] = Agent(
            name,
            mode,
            str(table.get("description", base.description if base else "")),
            rules,
            hidden=bool(table.get("hidden", False)),
            builtin=base is not None,
        )
    exemption = Rule("external_directory", truncate_glob, "allow", "truncation exemption")
    for agent in agents.values():
        opted_out = any(
            r.permission == "external_directory" and r.action == "deny" and r.pattern == truncate_glob
            for r in agent.permission
        )
        if not opted_out:
            agent.permission.append(exemption)
    return agents


def _config_rules(value: Any, home: str, where: str) -> Ruleset:
    try:
        return from_config(value, home, where)
    except (ValueError, AttributeError) as error:
        raise ConfigError(f"{where}: {error}") from None
