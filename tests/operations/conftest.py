"""A deployment with metrics (and, where asked, tracing) on, a token endpoint, an imported user and a client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from example_app.oauth import jwks, token
from litestar_userio import MetricsConfig
from litestar_userio.observability import telemetry
from tests.tokens.conftest import TokenWorld

METRICS = "/metrics"


@pytest.fixture
async def observed(backend, make_env) -> AsyncIterator[Any]:
    """Factory: a `TokenWorld` on `backend` with metrics on (plus `**overrides`); telemetry off again afterwards."""

    async def factory(**overrides: Any) -> TokenWorld:
        env = await make_env(backend, route_handlers=[token, jwks], metrics=MetricsConfig(), **overrides)
        project = await env.make_project()
        await env.services.tokens.applications.create(project.id, "jwt-app", issue_jwt_access_token=True)
        return TokenWorld(env, project, "")

    yield factory
    telemetry.reset()


async def scrape(env) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """`GET /metrics` as Prometheus does (plain HTTP, by IP, no token): every sample by name and labels."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=env.app), base_url="http://10.0.0.7") as client:
        response = await client.get(METRICS)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def delta(before: dict, after: dict, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)
