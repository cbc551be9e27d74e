"""Which shell the bash tool runs commands with, and the name its description shows.

:func:`choose` picks ``$SHELL`` when it is bash, zsh or sh, otherwise ``bash`` on ``PATH`` (``/bin/zsh``
on macOS), otherwise ``/bin/sh``. fish and nu are never used: their syntax is not POSIX. Kept apart from
:mod:`._shell` (which runs the command) because listing tools needs the choice and nothing else.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping

ACCEPTED = frozenset({"bash", "zsh", "sh"})


def name(shell: str) -> str:
    """The shell's name as the description shows it: ``bash``, ``zsh``, ``sh``."""
    return os.path.basename(shell)


def choose(env: Mapping[str, str]) -> str:
    """The shell to run commands with, for an environment ``env`` (see the module docstring)."""
    search = env.get("PATH")
    preferred = env.get("SHELL")
    if preferred and name(preferred) in ACCEPTED:
        found = _executable(preferred, search)
        if found:
            return found
    if sys.platform == "darwin" and os.access("/bin/zsh", os.X_OK):
        return "/bin/zsh"
    return shutil.which("bash", path=search) or shutil.which("bash") or "/bin/sh"


def _executable(shell: str, search: str | None) -> str | None:
    if os.path.isabs(shell):
        return shell if os.access(shell, os.X_OK) and not os.path.isdir(shell) else None
    return shutil.which(shell, path=search)
