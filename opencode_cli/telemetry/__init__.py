"""OpenTelemetry traces and metrics of the tool layer, when the user configured OpenTelemetry.

*Configured* means one of the standard ways: an exporter or endpoint in the environment
(``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_TRACES_EXPORTER``,
``OTEL_METRICS_EXPORTER``, ``OTEL_SERVICE_NAME``…) with the ``otel`` extra installed, or a
``TracerProvider`` that a library host set globally before it opened its project. ``OTEL_SDK_DISABLED=true``
switches it all off, and so does switching off the ``telemetry`` built-in plugin (``-p no:telemetry``,
``[plugins] disabled = ["telemetry"]``) for that project.

This module is the one place that decides, and it imports nothing of OpenTelemetry: without the extra, or
with it installed and not configured, :func:`tracing` answers ``None`` from the environment and
``sys.modules`` alone, and every instrumented place goes on as if this package did not exist. What the
environment says is read by :mod:`opencode_cli.telemetry_environment` (outside this package, so that the
``telemetry`` built-in plugin asks :func:`configured` at every start without importing it). When it is
configured, :mod:`.instruments` (which imports OpenTelemetry) does the work: the ``execute_tool`` span of
each call (through the hooks of :mod:`.plugin`, the ``telemetry`` plugin's wrapper of the ``tool_call``
hook), ``invoke_agent`` and
``chat`` spans of ``opencode run``, and ``mcp serve``'s metrics. The MCP client and server spans, with the
trace context carried in ``params._meta`` both ways, are the mcp SDK's own (it traces every request); they
go to the same providers, which :mod:`.setup` makes from the environment when the host made none.
"""

from __future__ import annotations

import sys
import weakref
from typing import TYPE_CHECKING, Any

from ..telemetry_environment import capture_content, configured, from_environment, host_provider

__all__ = ["capture_content", "configured", "instruments_now", "off", "tracing"]

if TYPE_CHECKING:
    from ..plugins import Plugins
    from .instruments import Instruments

#: The name of the built-in plugin that switches telemetry for a project.
PLUGIN = "telemetry"


#: Per project (its plugins): whether its ``telemetry`` plugin is on, and whether the environment
#: configures an export, as first seen (reading the environment costs microseconds; a call, less).
_decided: weakref.WeakKeyDictionary[Plugins, tuple[bool, bool]] = weakref.WeakKeyDictionary()


def tracing(plugins: Plugins | None) -> Instruments | None:
    """The instruments to record with, or ``None``: OpenTelemetry is not configured, its packages are
    missing (said once on stderr; not looked for again), or the ``telemetry`` plugin is switched off in
    ``plugins``' project (``None``: no project)."""
    decided = _decided.get(plugins) if plugins is not None else None
    if decided is None:
        plugin_on = plugins is None or plugins.record_for(PLUGIN) is not None
        decided = (plugin_on, from_environment())
        if plugins is not None:
            _decided[plugins] = decided
    plugin_on, environment = decided
    if not plugin_on or _warned or not (environment or host_provider()):
        return None
    try:
        from .instruments import current
    except ImportError as error:  # the otel extra is not installed
        _missing(error)
        return None
    return current()


def instruments_now() -> Instruments | None:
    """The instruments made so far (``None``: nothing was traced in this process), for hooks with no
    project at hand: they act on the call traced in their own task, if there is one."""
    module = sys.modules.get(f"{__name__}.instruments")
    return None if module is None else module.made()


_warned = False


def _missing(error: ImportError) -> None:
    global _warned
    if not _warned:
        _warned = True
        print(
            f"opencode: OpenTelemetry is configured in the environment, but {error.name or 'it'} is not "
            "installed: no traces are sent (pip install 'opencode-tools[otel]')",
            file=sys.stderr,
        )


def off() -> Any:
    """A recorder that records nothing: what an instrumented place uses when :func:`tracing` is ``None``."""
    return _OFF


class _Off:
    """Every recorder's methods, doing nothing and giving this recorder back; a context manager that
    gives itself (``with off().chat(model) as chat: chat.finished(...)`` does nothing)."""

    def __enter__(self) -> _Off:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return _nothing


def _nothing(*args: Any, **kwargs: Any) -> _Off:
    return _OFF


_OFF = _Off()
