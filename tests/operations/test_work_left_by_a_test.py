"""The tests of a session share one database: the work a test leaves pending must not run in a later test.

A sweep (and an in-process runner's start) adopts every project's pending work, as it must in production, so a
chunk a test posted and never drained ran minutes later among another test's jobs and counters. `make_env`
deletes its projects' pending work when its test ends (`Env.forget_unfinished_work`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.helpers import IMPORT, run_import
from tests.operations.conftest import delta, scrape
from userio_core.clock import FrozenClock

pytestmark = pytest.mark.engine


async def test_a_chunk_left_pending_by_an_earlier_test_is_not_run_by_a_later_one(backend, make_env, observed):
    earlier = await make_env(backend, clock=FrozenClock(datetime.now(UTC) - timedelta(minutes=4)))
    earlier.hold_jobs()
    left = await earlier.make_project()
    posted = await left.post(IMPORT, {"records": [{"email": "left@example.com"}], "identifier": "email"})
    assert posted.status_code == 202, posted.text
    await earlier.forget_unfinished_work()  # what the fixture does when the earlier test ends

    world = await observed()
    before = await scrape(world.env)
    await run_import(world.project, [{"email": "grace@example.com"}])
    after = await scrape(world.env)

    assert delta(before, after, "userio_import_records_total", outcome="inserted", reason="") == 1
    assert await left.fetch("SELECT id FROM userio_user WHERE project_id = $1", left.id) == []
