"""The probes and the metrics endpoint: no admin JWT, no `Host` or HTTPS rule, nothing revealed.

See docs/reference.md#operations.

A probe comes by IP over plain HTTP from the orchestrator; these answer `{"status": ...}` and the metrics, and
nothing else, and are meant for the internal network (`docs/operations.md`).
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get
from litestar.status_codes import HTTP_200_OK, HTTP_503_SERVICE_UNAVAILABLE

from litestar_userio.observability import telemetry
from litestar_userio.web.providers import services_of

__all__ = ["HealthController", "MetricsController"]


class HealthController(Controller):
    """Liveness and readiness probes: `GET /live`, `GET /ready` (200 or 503), mounted at `UserIOConfig.health_path`."""

    include_in_schema = False
    opt = {"exclude_from_auth": True}

    @get("/live", name="userio-health-live", sync_to_thread=False)
    def live(self) -> dict[str, str]:
        """The process answers."""
        return {"status": "ok"}

    @get("/ready", name="userio-health-ready")
    async def ready(self, request: Request[Any, Any, Any]) -> Response[dict[str, str]]:
        """200 when the database, the queue and the hook pool are usable, else 503."""
        try:
            ok = await services_of(request.app.state).ready()
        except Exception:  # not started, or failing in a way the probe need not know
            ok = False
        if ok:
            return Response({"status": "ok"}, status_code=HTTP_200_OK)
        return Response({"status": "unavailable"}, status_code=HTTP_503_SERVICE_UNAVAILABLE)


class MetricsController(Controller):
    """Prometheus scrapes this: `GET /`, mounted at `MetricsConfig.path`."""

    include_in_schema = False
    opt = {"exclude_from_auth": True}

    @get("/", name="userio-metrics", sync_to_thread=False)
    def metrics(self) -> Response[bytes]:
        """The exposition of this process's `userio_*` metrics."""
        from litestar_userio.observability.metrics import CONTENT_TYPE

        body = telemetry.metrics.exposition() if telemetry.metrics is not None else b""
        return Response(body, media_type=CONTENT_TYPE)
