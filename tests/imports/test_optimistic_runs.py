"""A chunk's first run skips looking up stored users when a sample of its records names none (ImportService._apply).

The stored users below sit where the sample does not look (records 1-4 of 41: the sample takes every fifth),
so the first run inserts them as new users, the unique index on login ids refuses the chunk, and the next run
looks every record up. What the user sees must be exactly what a run that looked up from the start gives.
"""

from __future__ import annotations

import pytest

from tests.helpers import import_one, run_import, user_row

pytestmark = pytest.mark.engine

NEW = [{"email": f"new{i}@example.com", "name": "new"} for i in range(40)]


async def user_count(project) -> int:
    rows = await project.fetch("SELECT COUNT(*) AS n FROM userio_user WHERE project_id = $1", project.id)
    return int(rows[0]["n"])


async def test_a_stored_user_the_sample_misses_is_updated_not_inserted_again(backend, make_env):
    env = await make_env(backend)
    project = await env.make_project()
    stored = await import_one(project, {"email": "kept@example.com", "name": "before"})

    records = [*NEW[:2], {"email": "KEPT@example.com", "name": "after"}, *NEW[2:]]
    body = await run_import(project, records, upsert=True)

    assert body["summary"] == {"total": 41, "inserted": 40, "updated": 1, "skipped": 0, "failed": 0}
    assert body["details"][2]["outcome"] == "updated"
    assert body["details"][2]["user_id"] == stored["user_id"]
    assert await user_count(project) == 41
    assert (await user_row(project, stored["user_id"]))["standard"]["name"] == "after"


async def test_without_upsert_the_missed_stored_user_is_skipped(backend, make_env):
    env = await make_env(backend)
    project = await env.make_project()
    stored = await import_one(project, {"email": "kept@example.com", "name": "before"})

    records = [*NEW[:3], {"email": "kept@example.com", "name": "after"}, *NEW[3:]]
    body = await run_import(project, records)

    assert body["summary"] == {"total": 41, "inserted": 40, "updated": 0, "skipped": 1, "failed": 0}
    assert body["details"][3] | {"record": None} == {
        "index": 3,
        "record": None,
        "outcome": "skipped",
        "user_id": stored["user_id"],
        "warnings": [{"message": "skipping because upsert = false and user exists"}],
    }
    assert await user_count(project) == 41


async def test_a_login_id_of_another_stored_user_fails_that_record_alone(backend, make_env):
    env = await make_env(backend)
    project = await env.make_project()
    await import_one(project, {"email": "owner@example.com", "phone_number": "+14155550100"})

    records = [*NEW[:1], {"email": "thief@example.com", "phone_number": "+14155550100"}, *NEW[1:]]
    body = await run_import(project, records, upsert=True)

    assert body["summary"] == {"total": 41, "inserted": 40, "updated": 0, "skipped": 0, "failed": 1}
    failed = body["details"][1]
    assert failed["outcome"] == "failed"
    assert failed["errors"][0]["reason"] == "InvariantViolated"
    assert failed["errors"][0]["info"] == {"cause": {"kind": "DuplicatedIdentity"}}
    assert await user_count(project) == 41
    owners = await project.fetch(
        "SELECT COUNT(*) AS n FROM userio_identity WHERE project_id = $1 AND normalized_value = '+14155550100'",
        project.id,
    )
    assert owners[0]["n"] == 1
