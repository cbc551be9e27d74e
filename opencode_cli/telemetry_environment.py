"""What the environment says of OpenTelemetry: whether it is configured, and whether content is captured.

The decision :mod:`opencode_cli.telemetry` stands on, kept outside that package so that the ``telemetry``
built-in plugin, which asks :func:`configured` at every start, loads this small module alone while
OpenTelemetry is not configured. Nothing of OpenTelemetry is imported here.
"""

from __future__ import annotations

import os
import sys

#: Environment variables that configure OpenTelemetry's export (any one set, and not to ``none``).
CONFIGURING = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_TRACES_EXPORTER",
    "OTEL_METRICS_EXPORTER",
    "OTEL_SERVICE_NAME",
)

#: The opt-in to recording tool arguments and results on spans (they may hold secrets): the variable the
#: OpenTelemetry GenAI instrumentations read, with any of these values.
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CAPTURE_VALUES = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event"})


def configured() -> bool:
    """Whether OpenTelemetry is configured for this process (see :mod:`opencode_cli.telemetry`)."""
    return host_provider() or from_environment()


def from_environment() -> bool:
    """Whether the environment configures an export (and does not switch the SDK off)."""
    environ = os.environ
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = [
        environ.get(name, "").strip().lower() for name in ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER")
    ]
    if all(value == "none" for value in exporters):
        return False
    return any(environ.get(name) for name in CONFIGURING)


def host_provider() -> bool:
    """Whether the process set a global ``TracerProvider`` of its own (a library host did, before opening
    its project). Looked up only when OpenTelemetry's API is imported already: nothing is imported here."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None or isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return False
    return os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() != "true"


def capture_content() -> bool:
    """Whether the user opted in to tool arguments and results on spans (:data:`CAPTURE_CONTENT`)."""
    return os.environ.get(CAPTURE_CONTENT, "").strip().lower() in CAPTURE_VALUES
