"""``opencode permissions check`` and ``opencode agents list``: read-only views; they never ask."""

from __future__ import annotations

import re

from ..agents import Agent
from ..boundary import CONFIG_COVERS, CONFIG_PERMISSION
from ..config import Config
from ..permission import NO_MATCH, Rule, evaluate, match
from .common import err, friendly_errors, make_project, print_json, unasked_in


def check(permission: str, pattern: str, agent_name: str | None, as_json: bool) -> None:
    """Print the decision for ``permission`` on ``pattern`` and the rule (with its source) behind it; a
    permission no tool asks (a typo) gets a warning on stderr with the close matches."""
    with friendly_errors():
        project = make_project()
        agent = project.generation.agent(agent_name)
        rule = evaluate(permission, pattern, agent.permission)
        origin = rule_origin(project.config, rule)
        problem = unasked_in(project, permission)
    if problem is not None:
        err(f"warning: {problem}")
    matched = rule.source != NO_MATCH
    covers = CONFIG_COVERS if match(permission, CONFIG_PERMISSION) and permission != "*" else None
    if as_json:
        print_json(
            {
                "permission": permission,
                "pattern": pattern,
                "agent": agent.name,
                "action": rule.action,
                "rule": {**rule.as_dict(), "source": rule.source, **({"file": origin} if origin else {})}
                if matched
                else None,
                **({"covers": covers} if covers else {}),
            }
        )
        return
    print(rule.action)
    if matched:
        where = f"{rule.source} in {origin}" if origin else rule.source
        print(f"rule: {rule.permission} {rule.pattern} -> {rule.action}  (from {where}, agent {agent.name})")
    else:
        print(f"rule: none matched; {rule.action} is the default (agent {agent.name})")
    if covers:
        print(f"config is asked on top of edit for {covers}; a [permission.config] rule can allow it")


def rule_origin(config: Config, rule: Rule) -> str | None:
    """The config file (or variable) that set a configured rule; ``None`` for built-in rules."""
    match = re.fullmatch(
        r"(?:parent: )?(?:(permission|config tools)|agent\.(.+)\.(permission|tools))", rule.source
    )
    if match is None:
        return None
    if match.group(1):
        prefix = ["permission"] if match.group(1) == "permission" else ["tools"]
    else:
        prefix = ["agent", match.group(2), match.group(3)]
    source = config.origin([*prefix, rule.permission, rule.pattern])
    return source.describe() if source else None


def list_agents(as_json: bool) -> None:
    """Print every agent (disabled ones are gone) with its mode, description and the model settings
    its config sets."""
    with friendly_errors():
        agents = list(make_project().generation.agents.values())
    if as_json:
        print_json({"agents": [agent.as_dict() for agent in agents]})
        return
    width = max(len(agent.name) for agent in agents)
    for agent in agents:
        hidden = " (hidden)" if agent.hidden else ""
        settings = _settings(agent)
        extra = f"  [{settings}]" if settings else ""
        print(f"{agent.name:<{width}}  {agent.mode:<8}  {agent.description}{hidden}{extra}")


def _settings(agent: Agent) -> str:
    """``model openai/gpt-5, steps 8, temperature 0.2``: the model settings config gives ``agent``."""
    parts = [
        f"{label} {value}"
        for label, value in (
            ("model", agent.model),
            ("steps", agent.steps),
            ("temperature", agent.temperature),
            ("top_p", agent.top_p),
            ("color", agent.color),
        )
        if value is not None
    ]
    if agent.prompt is not None:
        parts.append(f"prompt {len(agent.prompt)} chars")
    if agent.options:
        parts.append(f"options {' '.join(agent.options)}")
    return ", ".join(parts)
