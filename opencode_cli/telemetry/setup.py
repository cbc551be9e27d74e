"""The process's tracer and meter providers made from the environment, when nobody else made them.

A library host that sets its own providers is left alone (:func:`opencode_cli.telemetry.host_provider`).
Otherwise the standard variables decide, as OpenTelemetry's SDK documents them: ``OTEL_TRACES_EXPORTER`` and
``OTEL_METRICS_EXPORTER`` (``otlp`` by default, ``console`` to stderr, ``none``, or a comma-separated list),
``OTEL_EXPORTER_OTLP_PROTOCOL`` / ``_TRACES_`` / ``_METRICS_`` (``http/protobuf``, the one the ``otel`` extra
brings; ``grpc`` when its exporter is installed), the endpoints, headers and timeouts (read by the exporters
themselves), ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` (``service.name`` is ``opencode`` unless
they name one). Spans are exported in batches; both providers flush when the process exits.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from opentelemetry import metrics, trace

#: The service name when the environment gives none.
SERVICE_NAME = "opencode"


def install() -> None:
    """Make and set the global providers from the environment (once; a no-op when they are set)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return
    named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    resource = Resource.create({} if named else {"service.name": SERVICE_NAME})
    tracer_provider = TracerProvider(resource=resource)
    for exporter in _exporters("traces"):
        tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(tracer_provider)
    readers = [_reader(exporter) for exporter in _exporters("metrics")]
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=readers))


def _reader(exporter: Any) -> Any:
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    return PeriodicExportingMetricReader(exporter)


def _exporters(signal: str) -> list[Any]:
    """The exporters ``OTEL_{SIGNAL}_EXPORTER`` names (``otlp`` when unset)."""
    names = os.environ.get(f"OTEL_{signal.upper()}_EXPORTER", "otlp")
    found = []
    for name in filter(None, (part.strip().lower() for part in names.split(","))):
        if name == "none":
            return []
        exporter = _exporter(signal, name)
        if exporter is not None:
            found.append(exporter)
    return found


def _exporter(signal: str, name: str) -> Any:
    if name == "console":
        if signal == "traces":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            return ConsoleSpanExporter(out=sys.stderr)  # stdout carries machine output and the protocol
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return ConsoleMetricExporter(out=sys.stderr)
    if name != "otlp":
        _warn(f"OTEL_{signal.upper()}_EXPORTER={name} is not supported here (otlp, console, none)")
        return None
    protocol = (
        os.environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    )
    try:
        if protocol == "grpc":
            if signal == "traces":
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found]
                    OTLPSpanExporter,
                )

                return OTLPSpanExporter()
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (  # type: ignore[import-not-found]
                OTLPMetricExporter,
            )

            return OTLPMetricExporter()
        if signal == "traces":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                OTLPSpanExporter as HttpSpanExporter,
            )

            return HttpSpanExporter()
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
            OTLPMetricExporter as HttpMetricExporter,
        )

        return HttpMetricExporter()
    except ImportError as error:
        _warn(f"the OTLP {protocol} exporter is not installed ({error.name}): no {signal} are sent")
        return None


def _warn(message: str) -> None:
    print(f"opencode: {message}", file=sys.stderr)
