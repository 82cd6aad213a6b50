"""Exactly one export is admitted however many initiate requests race for it (SPEC 8, issue 9.10)."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import Env
from tests.exports.helpers import initiate

PARALLEL = 20


async def race(env: Env, trials: int) -> None:
    """Per trial a fresh project and PARALLEL initiates at once: one 202, the rest refused, one task stored."""
    env.hold_jobs()
    for trial in range(trials):
        project = await env.make_project()

        responses = await asyncio.gather(*(initiate(project, {"format": "ndjson"}) for _ in range(PARALLEL)))

        statuses = sorted(r.status_code for r in responses)
        assert statuses == [202] + [429] * (PARALLEL - 1), (trial, [r.text for r in responses if r.status_code >= 500])
        assert {r.json()["error"]["reason"] for r in responses if r.status_code == 429} == {
            "MaximumConcurrentJobLimitExceeded"
        }
        rows = await project.fetch("SELECT COUNT(*) AS n FROM userio_export_task WHERE project_id = $1", project.id)
        assert rows[0]["n"] == 1, "one task stored"


async def test_racing_initiates_admit_exactly_one_export(env):
    await race(env, trials=10)


@pytest.mark.hard
async def test_fifty_races_of_twenty_initiates_admit_exactly_one_export_each(env):
    await race(env, trials=50)
