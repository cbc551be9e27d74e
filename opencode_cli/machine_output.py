"""Stdout kept for machine output: JSON (``--json``, ``run --format json``, ``tools schema``) and the MCP
protocol (``mcp serve`` over stdio).

Tools and plugins are other people's code: a ``print()`` in a tool file at import, in a tool's body, in a
plugin's hook, or the output of a process one starts with the inherited stdout, must never land in what a
program reads. A command whose stdout is machine output calls :func:`claim` before it loads anything: from
then on file descriptor 1 is the process's stderr (so ``sys.stdout``, ``print()`` from any thread, C code and
child processes all write there), and the command writes its output through :func:`stream` (or, for a
protocol on the loop, :func:`wire_fd`), which keeps the real stdout.

Under an in-process runner (Click's ``CliRunner``), whose ``sys.stdout`` is no file descriptor, the claim is
made at the Python level: :func:`stream` keeps the runner's stdout and ``sys.stdout`` becomes its stderr
until the runner restores both.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

_claimed: tuple[object, TextIO, int | None] | None = None
"""``(sys.stdout after the claim, the machine output stream, its file descriptor)``."""


def claim() -> None:
    """Keep stdout for machine output; everything else written to stdout goes to stderr (idempotent)."""
    global _claimed
    if claimed():
        return
    real = sys.stdout
    try:
        fd = real.fileno()
    except (AttributeError, ValueError, OSError):
        fd = None
    if fd != 1:  # an in-process runner's stream: it stays the output, the rest goes to its stderr
        sys.stdout = sys.stderr
        _claimed = (sys.stdout, real, None)
        return
    real.flush()
    wire = os.dup(1)
    os.set_inheritable(wire, False)  # no child process gets the protocol's end
    os.dup2(2, 1)
    out = open(wire, "w", encoding=real.encoding, errors=real.errors, closefd=True)  # noqa: SIM115
    _claimed = (sys.stdout, out, wire)


def claimed() -> bool:
    """Whether this process (or runner invocation) has claimed stdout."""
    return _claimed is not None and sys.stdout is _claimed[0]


def stream() -> TextIO:
    """Where machine output goes: the kept stdout once claimed, else ``sys.stdout``."""
    return _claimed[1] if _claimed is not None and claimed() else sys.stdout


def wire_fd() -> int:
    """The file descriptor of the real stdout (``1`` until a claim moves it)."""
    if _claimed is not None and claimed() and _claimed[2] is not None:
        return _claimed[2]
    return 1
