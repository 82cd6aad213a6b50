"""The session's example-app deployment leaves the tests' own database alone."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from litestar_userio.config import QueueConfig
from tests.conftest import Backend
from tests.helpers import IMPORT
from userio_core.clock import FrozenClock


async def test_the_running_deployment_never_sweeps_a_tests_finished_import(
    postgres_deployment, postgres_url, redis_url, make_env
):
    """Its workers sweep every few seconds with the real clock; an import finished under a clock months back
    still answers, unchanged, after two of their sweeps."""
    env = await make_env(
        Backend("postgres-arq", postgres_url, redis_url), clock=FrozenClock(datetime(2026, 1, 5, tzinfo=UTC))
    )
    project = await env.make_project()
    response = await project.post(IMPORT, {"identifier": "email", "records": [{"email": "ada@example.com"}]})
    assert response.status_code == 202, response.text
    await env.drain()
    finished = await project.get(response.headers["location"])
    assert finished.status_code == 200 and finished.json()["status"] == "completed", finished.text

    await asyncio.sleep(2 * QueueConfig().sweep_interval.total_seconds() + 1)  # the time passing is the point

    again = await project.get(response.headers["location"])
    assert again.status_code == 200, again.text
    assert again.json() == finished.json()
