"""A child that dies with us: ``python -c LAUNCHER cmd args…`` asks the kernel for SIGKILL when its parent
dies (``PR_SET_PDEATHSIG``, Linux; elsewhere it only execs), then becomes ``cmd`` with ``execvp``.

For children another library starts (the MCP SDK's stdio transport), where :func:`spawn` cannot be used.
The launcher is a few lines given to ``-c``: it imports nothing of ours.
"""

from __future__ import annotations

LAUNCHER = """\
import ctypes, os, signal, sys
if sys.platform.startswith("linux"):
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:
        sys.exit(1)
os.execvp(sys.argv[1], sys.argv[1:])
"""


def launcher() -> list[str]:
    """The interpreter arguments that run :data:`LAUNCHER` (put the command and its arguments after)."""
    return ["-c", LAUNCHER]
