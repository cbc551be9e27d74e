"""OpenTelemetry for the telemetry tests: the process's providers with in-memory exporters (what a library
host sets up), and a real OTLP/HTTP receiver on 127.0.0.1 that decodes what an exporter sends.

Import the fixtures into a test module (``from _otel import memory, otlp_receiver``).
"""

from __future__ import annotations

import gzip
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

#: A generous bound on waiting for spans to arrive.
BOUND = 60.0


@dataclass
class Memory:
    """The in-memory exporters of the process's providers: :meth:`spans` and :meth:`metrics`."""

    exporter: Any
    reader: Any

    def spans(self) -> list[Any]:
        """The finished spans so far (the SDK's ``ReadableSpan``), in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[Any]:
        return [span for span in self.spans() if span.name == name]

    def metrics(self) -> dict[str, list[Any]]:
        """Each metric's data points by name (collected now)."""
        found: dict[str, list[Any]] = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found.setdefault(metric.name, []).extend(metric.data.data_points)
        return found


def _reset_globals() -> None:
    """Let the providers be set again: OpenTelemetry sets each global once per process (its own tests
    reset these the same way)."""
    from opentelemetry import metrics, trace
    from opentelemetry.metrics import _internal as metrics_internal
    from opentelemetry.util._once import Once

    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None
    metrics_internal._METER_PROVIDER_SET_ONCE = Once()
    metrics_internal._METER_PROVIDER = None
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    assert metrics  # imported for its globals


@pytest.fixture
def memory(monkeypatch: pytest.MonkeyPatch) -> Iterator[Memory]:
    """A library host's own providers, set globally for the test: spans and metrics kept in memory. The
    ``OTEL_*`` variables of the outer environment are removed."""
    import os

    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    for name in [name for name in os.environ if name.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    _reset_globals()
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer_provider = TracerProvider(shutdown_on_exit=False)
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(meter_provider)
    sdk = sys.modules.get("mcp.shared._otel")
    if sdk is not None:  # the mcp SDK took its tracer from the provider of its import: this test's, now
        monkeypatch.setattr(sdk, "_tracer", trace.get_tracer("mcp-python-sdk"))
    try:
        yield Memory(exporter, reader)
    finally:
        tracer_provider.shutdown()
        meter_provider.shutdown()
        _reset_globals()


# -- a real OTLP/HTTP receiver ------------------------------------------------------------------------


@dataclass
class Received:
    """A span as the receiver decoded it from an export request."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    attributes: dict[str, Any]
    resource: dict[str, Any]


@dataclass
class Receiver:
    """An OTLP/HTTP receiver: ``endpoint`` (``http://127.0.0.1:PORT``), the spans and metric names that
    reached it, the paths it was sent to."""

    endpoint: str
    spans: list[Received] = field(default_factory=list)
    metric_names: set[str] = field(default_factory=set)
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(self, condition: Callable[[Receiver], Any], what: str) -> Any:
        deadline = time.monotonic() + BOUND
        while True:
            with self.lock:
                value = condition(self)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"gave up waiting for {what}; received {[s.name for s in self.spans]}")
            time.sleep(0.02)


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
        ExportMetricsServiceResponse,
    )
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            with receiver.lock:
                receiver.paths.append(self.path)
            if self.path == "/v1/traces":
                request = ExportTraceServiceRequest.FromString(body)
                spans = [
                    Received(
                        span.name,
                        span.trace_id.hex(),
                        span.span_id.hex(),
                        span.parent_span_id.hex(),
                        span.kind,
                        _attributes(span.attributes),
                        _attributes(resource.resource.attributes),
                    )
                    for resource in request.resource_spans
                    for scope in resource.scope_spans
                    for span in scope.spans
                ]
                with receiver.lock:
                    receiver.spans.extend(spans)
                answer = ExportTraceServiceResponse().SerializeToString()
            elif self.path == "/v1/metrics":
                metrics = ExportMetricsServiceRequest.FromString(body)
                names = {
                    metric.name
                    for resource in metrics.resource_metrics
                    for scope in resource.scope_metrics
                    for metric in scope.metrics
                }
                with receiver.lock:
                    receiver.metric_names |= names
                answer = ExportMetricsServiceResponse().SerializeToString()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    return Handler


@pytest.fixture
def otlp_receiver() -> Iterator[Receiver]:
    """A real OTLP/HTTP receiver on a free port of 127.0.0.1 (``/v1/traces``, ``/v1/metrics``), stopped
    at teardown."""
    receiver = Receiver("")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(receiver))
    receiver.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def otlp_env(receiver: Receiver, service: str) -> dict[str, str]:
    """The environment that sends a process's spans and metrics to ``receiver`` quickly."""
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_SERVICE_NAME": service,
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_METRIC_EXPORT_INTERVAL": "200",
    }
