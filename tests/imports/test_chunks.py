"""Chunked imports on several workers give the result of a one-by-one run in index order (DECISIONS 3)."""

from __future__ import annotations

import json
import random

import pytest

from tests.helpers import IMPORT

pytestmark = pytest.mark.engine


def workload(seed: int, size: int, clusters: int = 40) -> list[dict]:
    """Records that keep hitting the same users: repeated identifiers, login ids that move, nulls.

    Each cluster has its own few login ids, so the task splits into many independent groups; inside a
    cluster, order matters.
    """
    rng = random.Random(seed)
    records = []
    for _ in range(size):
        c = rng.randrange(clusters)
        emails = [f"c{c}a@example.com", f"c{c}b@example.com"]
        record: dict = {"email": rng.choice(emails)}
        if rng.random() < 0.2:
            record["email"] = record["email"].upper()
        if rng.random() < 0.4:
            record["phone_number"] = rng.choice([f"+1415555{c:04d}", f"+1415556{c:04d}", None])
        if rng.random() < 0.3:
            record["preferred_username"] = rng.choice([f"user{c}", f"other{c}", None])
        if rng.random() < 0.5:
            record["name"] = rng.choice(["Ada", "Bob", None, "Zoë"])
        if rng.random() < 0.3:
            record["custom_attributes"] = {rng.choice("abc"): rng.choice([1, "x", None, [1, 2]])}
        if rng.random() < 0.3:
            record["roles"] = rng.sample(["r1", "r2", "r3"], rng.randint(0, 2))
        if rng.random() < 0.2:
            record["disabled"] = rng.random() < 0.5
        if rng.random() < 0.2:
            record["mfa"] = {"email": rng.choice([*emails, None])}
        if rng.random() < 0.1:
            record["email_verified"] = rng.random() < 0.5
        records.append(record)
    return records


async def canonical_state(project, details) -> tuple[list, dict]:
    """Details and stored users with user ids replaced by the index of the record that created them."""
    names: dict[str, str] = {}
    for detail in details:
        if detail.get("user_id") and detail["user_id"] not in names:
            names[detail["user_id"]] = f"user@{detail['index']}"
    canonical_details = [{**d, "user_id": names.get(d.get("user_id"))} for d in details]
    users = {}
    for user_id, name in names.items():
        rows = await project.fetch(
            "SELECT is_disabled, standard_attributes, custom_attributes FROM userio_user WHERE id = $1", user_id
        )
        ids = await project.fetch(
            "SELECT login_id_key, original_value FROM userio_identity WHERE user_id = $1 ORDER BY login_id_key", user_id
        )
        auths = await project.fetch(
            "SELECT kind, type, oob_target FROM userio_authenticator WHERE user_id = $1 ORDER BY type, oob_target",
            user_id,
        )
        roles = await project.fetch(
            "SELECT r.key FROM userio_user_role m JOIN userio_role r ON r.id = m.role_id WHERE m.user_id = $1 ORDER BY r.key",
            user_id,
        )
        users[name] = (
            bool(rows[0]["is_disabled"]),
            json.loads(rows[0]["standard_attributes"]),
            json.loads(rows[0]["custom_attributes"]),
            [tuple(r.values()) for r in ids],
            [tuple(r.values()) for r in auths],
            [r["key"] for r in roles],
        )
    return canonical_details, users


async def run(env, records):
    from litestar_userio.projects.settings import ProjectSettings

    project = await env.make_project(ProjectSettings(create_unknown_roles_on_import=True))
    response = await project.post(IMPORT, {"identifier": "email", "upsert": True, "records": records})
    assert response.status_code == 202
    await env.drain(workers=2)
    body = (await project.get(response.headers["location"])).json()
    assert body["status"] == "completed"
    return project, body


async def test_chunks_on_several_workers_equal_a_sequential_run(backend_all, make_env):
    records = workload(seed=7, size=400)
    sequential = await make_env(backend_all, imports={"chunk_size": 10_000})
    chunked = await make_env(backend_all, imports={"chunk_size": 3})

    reference_project, reference = await run(sequential, records)
    chunked_project, result = await run(chunked, records)

    chunk_count = await chunked_project.fetch(
        "SELECT COUNT(*) AS n FROM userio_import_chunk WHERE task_id = $1", result["id"]
    )
    assert chunk_count[0]["n"] > 5, "the workload must really be split"
    assert result["summary"] == reference["summary"]
    assert await canonical_state(chunked_project, result["details"]) == await canonical_state(
        reference_project, reference["details"]
    )


async def test_repeated_identifier_in_one_request_sees_earlier_records(backend, make_env):
    env = await make_env(backend, imports={"chunk_size": 1})
    project = await env.make_project()
    records = [
        {"email": "a@example.com", "name": "first"},
        {"email": "b@example.com"},
        {"email": "A@example.com", "name": "second"},
    ]

    response = await project.post(IMPORT, {"identifier": "email", "upsert": True, "records": records})
    await env.drain(workers=2)
    body = (await project.get(response.headers["location"])).json()

    assert [d["outcome"] for d in body["details"]] == ["inserted", "inserted", "updated"]
    assert body["details"][0]["user_id"] == body["details"][2]["user_id"]
    rows = await project.fetch(
        "SELECT standard_attributes FROM userio_user WHERE id = $1", body["details"][0]["user_id"]
    )
    assert json.loads(rows[0]["standard_attributes"])["name"] == "second"


async def test_concurrent_tasks_on_the_same_users_give_every_record_one_outcome(backend, make_env):
    """Two tasks racing for the same login ids: the loser re-runs its chunk and sees the winner's users."""
    env = await make_env(backend, imports={"chunk_size": 5})
    project = await env.make_project()
    emails = [f"shared{i}@example.com" for i in range(60)]
    first = [{"email": e, "name": "first"} for e in emails]
    second = [{"email": e.upper(), "name": "second"} for e in reversed(emails)]

    responses = [
        await project.post(IMPORT, {"identifier": "email", "upsert": True, "records": records})
        for records in (first, second)
    ]
    await env.drain(workers=3, max_jobs=12)
    bodies = [(await project.get(r.headers["location"])).json() for r in responses]

    outcomes = [d["outcome"] for body in bodies for d in body["details"]]
    assert sorted(set(outcomes)) == ["inserted", "updated"]
    assert outcomes.count("inserted") == len(emails)
    users = await project.fetch("SELECT COUNT(*) AS n FROM userio_user WHERE project_id = $1", project.id)
    assert users[0]["n"] == len(emails)
