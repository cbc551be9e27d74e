"""Checking one setting before ``opencode config set`` writes it.

The checks are the ones a load makes (unknown keys, the typed settings, agents, permission rules, MCP
servers), turned from warnings into refusals: a setting that a later load would ignore or reject is not
written at all. Only the part of the config the setting touches is checked, so a problem elsewhere does
not stop an unrelated ``set``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import paths
from .config import Config, deep_merge, unknown_keys
from .errors import ConfigError

if TYPE_CHECKING:
    from .project import Project


def nested(parts: list[str], value: Any) -> dict[str, Any]:
    """``{"a": {"b": value}}`` for the parts ``["a", "b"]``."""
    table: Any = value
    for part in reversed(parts):
        table = {part: table}
    return table


def _non_negative_int(dotted: str) -> Callable[[Config], None]:
    def check(config: Config) -> None:
        value = config.get(dotted)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{dotted} must be a whole number of 0 or more, not {value!r}")

    return check


def _positive_ints(config: Config) -> None:
    config.positive_int("tool_output.max_lines")
    config.positive_int("tool_output.max_bytes")


def _strings(dotted: str) -> Callable[[Config], None]:
    def check(config: Config) -> None:
        value = config.get(dotted)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{dotted} must be a list of strings, not {value!r}")

    return check


def _plugins(config: Config) -> None:
    if config.get("plugins.disabled") is not None:
        _strings("plugins.disabled")(config)


def _model(config: Config) -> None:
    value = config.get("model")
    if not isinstance(value, str) or "/" not in value.strip("/"):
        raise ConfigError(f"model must be a string like provider/model, not {value!r}")


def _tools(config: Config) -> None:
    table = config.get("tools")
    if not isinstance(table, dict):
        raise ConfigError(f"tools must be a table of tool ids (or globs) and true/false, not {table!r}")
    for key, value in table.items():
        if not isinstance(value, bool):
            raise ConfigError(f"tools.{key} must be true or false, not {value!r}")


def _agents_and_rules(project: Project) -> Callable[[Config], None]:
    def check(config: Config) -> None:
        from .agents import build_agents

        env = project.env
        build_agents(
            config.data,
            home=str(paths.home_dir(env)),
            truncate_glob=project.generation.truncator.glob,
            data_dir=paths.data_dir(env),
            root=project.root,
            extra_allowed_dirs=[paths.within(paths.tmp_dir())],
        )

    return check


def _mcp(dotted: str) -> Callable[[Config], None]:
    def check(config: Config) -> None:
        from .mcp.config import servers

        _, warnings = servers(config.data)
        for warning in warnings:  # a key no server type takes (``mcp.NAME.model``)
            if warning.startswith(f"unknown config key '{dotted}'"):
                raise ConfigError(warning.removesuffix("; it is ignored"))

    return check


def check_setting(project: Project, dotted: str, value: Any) -> str | None:
    """Why ``dotted = value`` cannot be set in ``project``'s config, or ``None`` when it can."""
    parts = dotted.split(".")
    if not all(parts):
        return f"{dotted!r} is not a config key (keys are names joined by dots)"
    patch = nested(parts, value)
    for problem in unknown_keys(patch):
        return problem
    checks: dict[str, Callable[[Config], None]] = {
        "tool_output": _positive_ints,
        "subagent_depth": _non_negative_int("subagent_depth"),
        "plugins": _plugins,
        "model": _model,
        "tools": _tools,
        "agent": _agents_and_rules(project),
        "permission": _agents_and_rules(project),
        "mcp": _mcp(dotted),
    }
    check = checks.get(parts[0])
    if check is None:
        return None  # one of OpenCode's keys this package keeps but does not read
    try:
        check(Config(deep_merge(project.config.data, patch)))
    except ConfigError as error:
        return str(error)
    return None
