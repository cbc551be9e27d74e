"""Where opencode keeps its global files (XDG base directories, as OpenCode does)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def data_dir(env: Mapping[str, str] = os.environ) -> Path:
    """``$XDG_DATA_HOME/opencode``, by default ``~/.local/share/opencode``."""
    base = env.get("XDG_DATA_HOME") or str(_home(env) / ".local" / "share")
    return Path(base) / "opencode"


def config_dir(env: Mapping[str, str] = os.environ) -> Path:
    """The global config directory ``$XDG_CONFIG_HOME/opencode``, by default ``~/.config/opencode``."""
    base = env.get("XDG_CONFIG_HOME") or str(_home(env) / ".config")
    return Path(base) / "opencode"


def cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    """``$XDG_CACHE_HOME/opencode``, by default ``~/.cache/opencode``."""
    base = env.get("XDG_CACHE_HOME") or str(_home(env) / ".cache")
    return Path(base) / "opencode"


def runtime_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Where the host keeps its own bookkeeping (edit locks): ``$XDG_RUNTIME_DIR/opencode`` (the user's
    own, emptied at logout) when that is set, else ``<data>/run``. Never a place a command is given to
    write: the sandbox walls both off, and what an unsandboxed command plants there is replaced
    (:func:`opencode_cli.nofollow.own_dir`)."""
    base = env.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base):
        return Path(base) / "opencode"
    return data_dir(env) / "run"


def home_dir(env: Mapping[str, str] = os.environ) -> Path:
    """The user's home directory, honouring ``$HOME``."""
    return _home(env)


def tool_output_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Where truncated tool output is spilled: ``<data>/tool-output``."""
    return data_dir(env) / "tool-output"


def within(directory: str | Path) -> str:
    """The permission pattern that covers everything in ``directory`` (``<dir>/*``)."""
    return os.path.join(str(directory), "*")


def tmp_dir(env: Mapping[str, str] = os.environ) -> Path:
    """OpenCode's scratch directory ``<os tmp>/opencode``, with the system's temporary directory found as
    Node's ``os.tmpdir()`` finds it: ``TMPDIR``, ``TMP`` or ``TEMP`` (the first set; a trailing slash
    dropped), else ``/tmp``. Nothing is probed or created."""
    for name in ("TMPDIR", "TMP", "TEMP"):
        value = env.get(name)
        if value:
            return Path(value.rstrip("/") or "/") / "opencode"
    return Path("/tmp") / "opencode"
