"""The ``telemetry`` built-in plugin: an OpenTelemetry ``execute_tool`` span around every tool call, when
OpenTelemetry is configured (:mod:`opencode_cli.telemetry`).

The plugin object is chosen when a project loads its plugins (:data:`plugin`, the entry point's
attribute): with OpenTelemetry configured then, :class:`~opencode_cli.telemetry.plugin.Tracing` (imported
then, with :mod:`opencode_cli.telemetry`); otherwise :class:`Untraced`, which has no hooks, so that a call
pays nothing for a switch that is off (a library host sets its provider before it opens its project), and a
start imports no more than :mod:`opencode_cli.telemetry_environment` to decide. Switch it off with ``-p
no:telemetry`` or ``[plugins] disabled = ["telemetry"]``; the ``opencode run`` spans and ``mcp serve``'s
metrics of that project go with it.
"""

from __future__ import annotations

from typing import Any

from ..telemetry_environment import configured


class Untraced:
    """The plugin when OpenTelemetry is not configured: no hooks (the project still lists it, and its
    ``opencode run`` and ``mcp serve`` spans follow the same switch)."""


def __getattr__(name: str) -> Any:
    """:data:`plugin`, chosen each time a project loads it."""
    if name == "plugin":
        if not configured():
            return Untraced()
        from ..telemetry.plugin import Tracing

        return Tracing()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
