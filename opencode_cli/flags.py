"""``OPENCODE_*`` environment flags, parsed once per :class:`~opencode_cli.project.Project`.

Booleans follow OpenCode's rules: ``true yes on 1 y`` are true, ``false no off 0 n`` are false (lower-case
only); any other value is a configuration error naming the variable. "Experimental" flags take their
own variable when set and otherwise the value of ``OPENCODE_EXPERIMENTAL``.

``OPENCODE_DISABLE_DEFAULT_PLUGINS`` is not read: in OpenCode it switches off the npm plugins bundled with
it (sign-in helpers for some providers), not its tools, and nothing here corresponds to them. The built-in
plugins here are the tools and the providers themselves; switch any of them off by name instead
(``[plugins] disabled``, ``opencode -p no:NAME``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NamedTuple

from .errors import ConfigError

_TRUE = frozenset({"true", "yes", "on", "1", "y"})
_FALSE = frozenset({"false", "no", "off", "0", "n"})


def parse_bool(name: str, value: str) -> bool:
    """Parse one boolean flag value, or raise :class:`ConfigError` naming the variable."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(
        f"environment variable {name}={value!r} is not a boolean "
        "(use one of: true yes on 1 y / false no off 0 n)"
    )


def parse_int(name: str, value: str) -> int:
    """Parse one integer flag value, or raise :class:`ConfigError` naming the variable."""
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"environment variable {name}={value!r} is not an integer") from None


class Flags(NamedTuple):
    """The runtime flags the tool layer reads (core spec §3.2): an immutable record (a named tuple, which
    costs a fraction of a frozen dataclass to define, and every command defines it)."""

    client: str = "cli"
    enable_question_tool: bool = False
    enable_exa: bool = False
    enable_parallel: bool = False
    experimental_code_mode: bool = False
    experimental_lsp_tool: bool = False
    experimental_plan_mode: bool = False
    experimental_background_subagents: bool = False
    pure: bool = False
    disable_plugin_autoload: bool = False
    disable_project_config: bool = False
    bash_default_timeout_ms: int | None = None
    output_token_max: int | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Flags:
        """Read every flag from ``env``; raises :class:`ConfigError` on a malformed value."""

        def boolean(name: str, default: bool = False) -> bool:
            value = env.get(name)
            return default if value is None else parse_bool(name, value)

        def any_of(*names: str) -> bool:
            return any(boolean(name) for name in names)

        experimental = boolean("OPENCODE_EXPERIMENTAL")

        def experimental_flag(name: str) -> bool:
            return boolean(name, experimental)

        def integer(name: str) -> int | None:
            value = env.get(name)
            return None if value is None else parse_int(name, value)

        return cls(
            client=env.get("OPENCODE_CLIENT") or "cli",
            enable_question_tool=boolean("OPENCODE_ENABLE_QUESTION_TOOL"),
            enable_exa=any_of("OPENCODE_EXPERIMENTAL", "OPENCODE_ENABLE_EXA", "OPENCODE_EXPERIMENTAL_EXA"),
            enable_parallel=any_of("OPENCODE_ENABLE_PARALLEL", "OPENCODE_EXPERIMENTAL_PARALLEL"),
            experimental_code_mode=experimental_flag("OPENCODE_EXPERIMENTAL_CODE_MODE"),
            experimental_lsp_tool=experimental_flag("OPENCODE_EXPERIMENTAL_LSP_TOOL"),
            experimental_plan_mode=experimental_flag("OPENCODE_EXPERIMENTAL_PLAN_MODE"),
            experimental_background_subagents=experimental_flag("OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS"),
            pure=boolean("OPENCODE_PURE"),
            disable_plugin_autoload=boolean("OPENCODE_DISABLE_PLUGIN_AUTOLOAD"),
            disable_project_config=boolean("OPENCODE_DISABLE_PROJECT_CONFIG"),
            bash_default_timeout_ms=integer("OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS"),
            output_token_max=integer("OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX"),
        )

    @property
    def question_tool_enabled(self) -> bool:
        """``question`` is offered to the app, cli and desktop clients, or when forced on."""
        return self.client in {"app", "cli", "desktop"} or self.enable_question_tool
