"""OpenTelemetry spans of the plugin's background work; Litestar's own plugin makes the request spans.

A job carries the trace context of the request that created it (a W3C `traceparent` in a small dict, passed as a
job argument), so one trace shows the admin request and then each of its chunks or its export on whichever worker
ran them.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from opentelemetry import trace
from opentelemetry.propagate import extract, inject

__all__ = ["Tracing", "without_url"]

_SCOPE = "litestar_userio"


class Tracing:
    """Spans through `tracer_provider` (None: the process's global one)."""

    def __init__(self, tracer_provider: Any = None) -> None:
        self.tracer = trace.get_tracer(_SCOPE, tracer_provider=tracer_provider)

    def span(
        self, name: str, attributes: Mapping[str, str | int] | None, parent: Mapping[str, str] | None
    ) -> AbstractContextManager[Any]:
        """A span made current, a child of `parent` when one is carried, else of the current span."""
        context = extract(dict(parent)) if parent else None
        return self.tracer.start_as_current_span(name, context=context, attributes=dict(attributes or {}))

    def carrier(self) -> dict[str, str] | None:
        """The current span's context for a job to carry, or None outside any span."""
        carrier: dict[str, str] = {}
        inject(carrier)
        return carrier or None


def without_url(span: Any, scope: Any) -> None:
    """Replace a request span's `http.url` by the path: a query string may carry a signature (download URLs)."""
    if span is not None and span.is_recording():
        span.set_attribute("http.url", scope.get("path", ""))
