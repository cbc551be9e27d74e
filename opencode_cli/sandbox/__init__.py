"""The sandbox: bash's commands (and local MCP servers) confined by the kernel's Landlock LSM.

- :mod:`.settings`: ``[sandbox]`` and ``--sandbox MODE``;
- :mod:`.plan`: the effective writable/readable lists of a call, what the kernel supports, the model's note;
- :mod:`.landlock`: the ctypes binding (standard library only);
- :mod:`.launcher`: the script every bash command and local MCP server starts through (the reaper that
  makes them die with the host, and where the rules are applied between fork and exec).
"""

from __future__ import annotations

from .plan import Plan, Support, build, support
from .settings import MODE_ENV, MODES, Settings, settings

__all__ = ["MODES", "MODE_ENV", "Plan", "Settings", "Support", "build", "settings", "support"]
