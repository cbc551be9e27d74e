"""The ``opencode`` command (Typer). Data goes to stdout, diagnostics to stderr.

Exit codes: 0 ok, 1 tool error, 2 usage or validation error.
"""

from __future__ import annotations


def main() -> None:
    """Entry point of the ``opencode`` console script.

    The cyclic garbage collector is off while a command starts: importing and building the project
    allocates many objects that all live until the end, and sweeping them over and over is most of what a
    collection would do then. A command that goes on to run for a while turns it back on
    (:func:`~opencode_cli.cli.common.collect_from_now_on`); at the exit, what is left is frozen so that the
    interpreter's last collection does not sweep it once more.
    """
    import gc
    import signal
    import sys

    gc.disable()
    signal.signal(signal.SIGTERM, _terminated)  # a call's own loop turns it into an abort while it runs
    try:
        from .app import app_for

        app_for(sys.argv[1:])()
    finally:
        gc.freeze()


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM outside a call (while the command starts or prints): end at once, as ``terminated``."""
    import sys

    print("terminated", file=sys.stderr, flush=True)
    raise SystemExit(143)
