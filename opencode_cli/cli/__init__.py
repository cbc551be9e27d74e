"""The ``opencode`` command (Typer). Data goes to stdout, diagnostics to stderr.

Exit codes: 0 ok, 1 tool error, 2 usage or validation error.
"""

from __future__ import annotations


def main() -> None:
    """Entry point of the ``opencode`` console script."""
    import sys

    from .app import app_for

    app_for(sys.argv[1:])()
