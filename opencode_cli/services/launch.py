"""The launcher of child processes that must die with us: ``python -E -s -S launcher.py … -- cmd args…``.

The launcher (:mod:`opencode_cli.sandbox.launcher`, a standalone script) stays between us and the command
as the reaper of everything the command starts: when we die (even by SIGKILL) the kernel signals it
(``PR_SET_PDEATHSIG``) and it kills every descendant, orphans included (``PR_SET_CHILD_SUBREAPER``). Given
Landlock rules, it applies them in the command's process between fork and exec. Linux only for both; on
other systems it only runs the command.

bash's commands start through it (:mod:`opencode_cli.tools._shell`), and so do local MCP servers, which the
MCP SDK starts (so :func:`~.processes.spawn` cannot be used there).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..sandbox.landlock import Rules

SCRIPT = Path(__file__).resolve().parent.parent / "sandbox" / "launcher.py"


def launcher(rules: Rules | None = None, status: int = -1) -> list[str]:
    """The interpreter arguments that run the launcher (put the command and its arguments after).

    ``rules``: the sandbox to apply (``None``: none). ``status``: a descriptor the child inherits
    (``pass_fds``) on which the launcher reports the command's exit (``exit CODE``) or why it could not
    run it (``exec ERRNO MESSAGE``, ``sandbox MESSAGE``), and then stays to reap its background jobs;
    -1: the launcher exits with the command's code instead, killing what the command left behind.
    """
    words = [] if rules is None else rules.as_args()
    return ["-E", "-s", "-S", str(SCRIPT), str(os.getpid()), str(status), *words, "--"]
