"""The sandbox: bash's commands (and local MCP servers) confined by the kernel's Landlock LSM.

- :mod:`.settings`: ``[sandbox]`` and ``--sandbox MODE``;
- :mod:`.plan`: the effective writable/readable lists of a call, what the kernel supports, the model's note;
- :mod:`.landlock`: the ctypes binding (standard library only);
- :mod:`.mounts`: the read-only binds of the project's configuration in a private mount namespace;
- :mod:`.launcher`: the launcher every bash command, local MCP server and language server starts under (the
  reaper that makes them die with the host; its keepers confine themselves to a call's rules before they
  start its command).
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
