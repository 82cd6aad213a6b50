"""OpenTelemetry spans of the plugin's background work; Litestar's own plugin makes the request spans.

A job carries the trace context of the request that created it (a W3C `traceparent` in a small dict, passed as a
job argument), so one trace shows the admin request and then each of its chunks or its export on whichever worker
ran them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.propagate import extract, inject
from opentelemetry.trace import Span, Status, StatusCode

__all__ = ["Tracing", "without_url"]

_SCOPE = "litestar_userio"


class Tracing:
    """Spans through `tracer_provider` (None: the process's global one)."""

    def __init__(self, tracer_provider: Any = None) -> None:
        self.tracer = trace.get_tracer(_SCOPE, tracer_provider=tracer_provider)

    def span(
        self, name: str, attributes: Mapping[str, str | int] | None, parent: Mapping[str, str] | None
    ) -> _CurrentSpan:
        """A span made current, a child of `parent` when one is carried, else of the current span."""
        context = extract(dict(parent)) if parent else None
        return _CurrentSpan(self.tracer.start_span(name, context=context, attributes=attributes))

    def carrier(self) -> dict[str, str] | None:
        """The current span's context for a job to carry, or None outside any span."""
        carrier: dict[str, str] = {}
        inject(carrier)
        return carrier or None


class _CurrentSpan:
    """`start_as_current_span` without its generator-based context manager, which costs as much as the span."""

    __slots__ = ("_span", "_token")

    def __init__(self, span: Span) -> None:
        self._span = span

    def __enter__(self) -> Span:
        self._token = otel_context.attach(trace.set_span_in_context(self._span))
        return self._span

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        otel_context.detach(self._token)
        if error is not None:
            self._span.set_status(Status(StatusCode.ERROR, type(error).__name__))  # the type only: no message text
        self._span.end()


def without_url(span: Any, scope: Any) -> None:
    """Replace a request span's `http.url` by the path: a query string may carry a signature (download URLs)."""
    if span is not None and span.is_recording():
        span.set_attribute("http.url", scope.get("path", ""))
