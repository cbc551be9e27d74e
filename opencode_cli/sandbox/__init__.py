"""The sandbox: bash's commands (and local MCP servers) confined by the kernel's Landlock LSM.

- :mod:`.settings`: ``[sandbox]`` and ``--sandbox MODE``;
- :mod:`.plan`: the effective writable/readable lists of a call, what the kernel supports, the model's note;
- :mod:`.landlock`: the ctypes binding (standard library only);
- :mod:`.launcher`: the script every bash command and local MCP server starts through (the reaper that
  makes them die with the host, and where the rules are applied between fork and exec).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .settings import MODE_ENV, MODES, Settings, settings

if TYPE_CHECKING:
    from .plan import Plan, SandboxRequired, Support, build, confine, support

_FROM_PLAN = ("Plan", "SandboxRequired", "Support", "build", "confine", "support")


def __getattr__(name: str) -> Any:
    """The plan's names, imported on first use (the config check needs only the settings, not ctypes)."""
    if name in _FROM_PLAN:
        from . import plan

        return getattr(plan, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MODES",
    "MODE_ENV",
    "Plan",
    "SandboxRequired",
    "Settings",
    "Support",
    "build",
    "confine",
    "settings",
    "support",
]
