"""``[sandbox]`` in ``opencode.toml``, and the ``--sandbox MODE`` override (``OPENCODE_SANDBOX``).

::

    [sandbox]
    mode = "workspace-write"   # "off" (the default) | "workspace-write" | "read-only"
    network = false            # TCP connect/bind (default false when a mode is on)
    writable = ["~/.cache/pip"]  # more roots that may be written (relative: to the project)
    read = "project"           # "all" (the default) | "project": reads confined too
    readable = ["~/src/shared"]  # more roots that may be read when read = "project"
    required = true            # refuse to run when the kernel cannot enforce the mode

A wrong value is a :class:`~opencode_cli.errors.ConfigError` naming the key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..errors import ConfigError

MODES = ("off", "workspace-write", "read-only")
READS = ("all", "project")
#: The environment variable ``--sandbox MODE`` sets; it wins over the config's ``mode``.
MODE_ENV = "OPENCODE_SANDBOX"


@dataclass(frozen=True)
class Settings:
    """The sandbox a command runs in (``mode = "off"``: none)."""

    mode: str = "off"
    network: bool = False
    writable: tuple[str, ...] = ()
    read: str = "all"
    readable: tuple[str, ...] = ()
    required: bool = False

    @property
    def on(self) -> bool:
        """Whether commands are to be sandboxed."""
        return self.mode != "off"

    def with_writable(self, extra: tuple[str, ...]) -> Settings:
        """The same settings with more writable roots (a local MCP server's own)."""
        return replace(self, writable=(*self.writable, *extra))


def check_mode(value: Any, where: str) -> str:
    """``value`` if it names a mode, else a :class:`ConfigError` naming ``where``."""
    if value not in MODES:
        raise ConfigError(f"{where} must be one of {', '.join(repr(m) for m in MODES)}, not {value!r}")
    return str(value)


def paths_of(value: Any, where: str) -> tuple[str, ...]:
    """A list of path strings, checked."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{where} must be a list of paths, not {value!r}")
    return tuple(value)


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where} must be true or false, not {value!r}")
    return value


def settings(config: Mapping[str, Any], env: Mapping[str, str] = os.environ) -> Settings:
    """The sandbox settings of a merged config (its ``sandbox`` table), the mode overridden by
    ``OPENCODE_SANDBOX`` when that is set."""
    table = config.get("sandbox")
    if table is None:
        table = {}
    if not isinstance(table, Mapping):
        raise ConfigError("sandbox must be a table ([sandbox])")
    mode = check_mode(table.get("mode", "off"), "sandbox.mode")
    override = env.get(MODE_ENV)
    if override:
        mode = check_mode(override, MODE_ENV)
    read = table.get("read", "all")
    if read not in READS:
        raise ConfigError(f'sandbox.read must be "all" or "project", not {read!r}')
    return Settings(
        mode=mode,
        network=_boolean(table.get("network", False), "sandbox.network"),
        writable=paths_of(table.get("writable"), "sandbox.writable"),
        read=read,
        readable=paths_of(table.get("readable"), "sandbox.readable"),
        required=_boolean(table.get("required", False), "sandbox.required"),
    )


def server_sandbox(config: Mapping[str, Any], table: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A local MCP server's ``sandbox = true`` and ``writable = […]`` (``table`` is its ``[mcp.NAME]``,
    ``where`` that name for errors) as the fields of its config: ``sandbox`` (``[sandbox]``, in its mode or
    ``workspace-write`` when that is off, plus the server's roots) and ``writable``; empty when off."""
    enabled = table.get("sandbox", False)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{where}.sandbox must be true or false, not {enabled!r}")
    writable = paths_of(table.get("writable"), f"{where}.writable")
    if not enabled:
        return {}
    shared = settings(config, {})
    chosen = replace(shared, mode=shared.mode if shared.on else "workspace-write").with_writable(writable)
    return {"sandbox": chosen, "writable": writable}
