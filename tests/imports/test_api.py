"""The import endpoints' HTTP behaviour: SPEC 4.1/4.2 and DECISIONS 3 (codes, envelopes, limits, retention)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import pytest

from tests.helpers import IMPORT, run_import

TASK_ID = re.compile(r"task_[0-9A-HJKMNP-TV-Z]{32}")
RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


async def test_initiate_answers_202_with_task_and_location(project):
    response = await project.post(IMPORT, {"identifier": "email", "records": [{"email": "a@example.com"}]})

    assert response.status_code == 202
    body = response.json()
    assert set(body) == {"id", "created_at", "status"}
    assert TASK_ID.fullmatch(body["id"])
    assert RFC3339.fullmatch(body["created_at"])
    assert body["status"] == "pending"
    assert response.headers["location"] == f"{IMPORT}/{body['id']}"


@pytest.mark.engine
async def test_pending_status_reports_progress(project):
    project.env.hold_jobs()
    response = await project.post(IMPORT, {"identifier": "email", "records": [{"email": "a@example.com"}] * 3})

    status = await project.get(response.headers["location"])

    assert status.status_code == 200
    body = status.json()
    assert body["status"] == "pending"
    assert body["progress"] == {"total": 3, "processed": 0}
    assert "summary" not in body and "details" not in body
    await project.env.drain()


async def test_completed_status_has_summary_and_details_in_index_order(project):
    records = [{"email": f"u{i}@example.com"} for i in range(5)] + [{"email": "not-an-email"}]

    body = await run_import(project, records)

    assert set(body) == {"id", "created_at", "completed_at", "status", "summary", "details"}
    assert body["summary"] == {"total": 6, "inserted": 5, "updated": 0, "skipped": 0, "failed": 1}
    assert [d["index"] for d in body["details"]] == list(range(6))
    assert [d["record"] for d in body["details"]] == records


async def test_completed_status_has_completed_at_in_rfc3339_as_the_reference(project):
    before = project.env.clock.now()
    body = await run_import(project, [{"email": "a@example.com"}])

    assert list(body)[:4] == ["id", "created_at", "completed_at", "status"]
    assert RFC3339.fullmatch(body["completed_at"])
    completed_at = datetime.fromisoformat(body["completed_at"])
    assert completed_at >= datetime.fromisoformat(body["created_at"]) >= before


async def test_pending_status_has_no_completed_at(project):
    project.env.hold_jobs()
    response = await project.post(IMPORT, {"identifier": "email", "records": [{"email": "a@example.com"}]})

    body = (await project.get(response.headers["location"])).json()

    assert body["status"] == "pending"
    assert "completed_at" not in body
    await project.env.drain()


async def test_tasks_are_not_visible_to_another_project(env, project):
    other = await env.make_project()
    response = await project.post(IMPORT, {"identifier": "email", "records": [{"email": "a@example.com"}]})
    await env.drain()

    foreign = await other.get(response.headers["location"])

    assert foreign.status_code == 404
    assert foreign.json() == {"error": "task not found"}


async def test_unknown_task_id_is_404(project):
    response = await project.get(f"{IMPORT}/task_NOPE")

    assert response.status_code == 404
    assert response.json() == {"error": "task not found"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{", "not valid JSON"),
        (b"[]", "Expected `object`, got `array`"),
        (b'{"records": [{}]}', "missing required field `identifier`"),
        (b'{"identifier": "sub", "records": [{}]}', "identifier"),
        (b'{"identifier": "email"}', "missing required field `records`"),
        (b'{"identifier": "email", "records": []}', "length >= 1"),
        (b'{"identifier": "email", "records": {}}', "Expected `array`"),
        (b'{"identifier": "email", "records": [1]}', "records[0] must be an object"),
        (b'{"identifier": "email", "records": [{}, "x"]}', "records[1] must be an object"),
        (b'{"identifier": "email", "records": [{}], "upsert": "yes"}', "Expected `bool`"),
        (b'{"identifier": "email", "records": [{}], "extra": 1}', "unknown field `extra`"),
    ],
)
async def test_bad_top_level_is_400_with_a_short_message(project, body, message):
    response = await project.env.client.post(
        IMPORT, content=body, headers={**project.headers(), "Content-Type": "application/json"}
    )

    assert response.status_code == 400
    assert set(response.json()) == {"error"}
    assert message in response.json()["error"]


async def test_a_bad_record_does_not_fail_the_request(project):
    body = await run_import(project, [{"email": 42}, {"email": "ok@example.com"}])

    assert [d["outcome"] for d in body["details"]] == ["failed", "inserted"]


async def test_content_type_must_be_json(project):
    response = await project.env.client.post(
        IMPORT,
        content=json.dumps({"identifier": "email", "records": [{}]}),
        headers={**project.headers(), "Content-Type": "text/plain"},
    )

    assert response.status_code == 415
    assert response.json() == {"error": "Content-Type must be application/json"}


def _body_of_size(size: int) -> bytes:
    head = b'{"identifier": "email", "records": [{"email": "a@example.com", "name": "'
    tail = b'"}]}'
    body = head + b"x" * (size - len(head) - len(tail)) + tail
    assert len(body) == size
    return body


async def test_body_of_499999_bytes_is_accepted(project):
    response = await project.env.client.post(
        IMPORT, content=_body_of_size(499_999), headers={**project.headers(), "Content-Type": "application/json"}
    )

    assert response.status_code == 202
    await project.env.drain()


async def test_body_over_500000_bytes_is_413(project):
    response = await project.env.client.post(
        IMPORT, content=_body_of_size(500_001), headers={**project.headers(), "Content-Type": "application/json"}
    )

    assert response.status_code == 413
    assert set(response.json()) == {"error"}


async def test_the_413_answer_states_the_limit_and_points_to_the_cli(project):
    response = await project.env.client.post(
        IMPORT, content=_body_of_size(500_001), headers={**project.headers(), "Content-Type": "application/json"}
    )

    assert response.status_code == 413
    assert "500000 bytes" in response.json()["error"]
    assert "userio import" in response.json()["error"]


@pytest.mark.engine
async def test_completed_task_expires_after_24_hours(env, project):
    response = await project.post(IMPORT, {"identifier": "email", "records": [{"email": "a@example.com"}]})
    await env.drain()
    location = response.headers["location"]

    env.clock.advance(timedelta(hours=23, minutes=59))
    assert (await project.get(location)).status_code == 200
    env.clock.advance(timedelta(minutes=2))
    assert (await project.get(location)).status_code == 404

    assert await env.services.imports.purge_expired() >= 1
    task_id = location.rsplit("/", 1)[1]
    assert await project.fetch("SELECT id FROM userio_import_task WHERE id = $1", task_id) == []
    assert await project.fetch("SELECT id FROM userio_import_chunk WHERE task_id = $1", task_id) == []


async def test_applied_chunks_keep_no_secrets(env, project):
    """Submitted records (with their hashes and TOTP secrets) are dropped once a chunk is applied."""
    await run_import(project, [{"email": "a@example.com", "mfa": {"totp": {"secret": "JBSWY3DPEHPK3PXP"}}}])

    rows = await project.fetch(
        "SELECT c.records FROM userio_import_chunk c JOIN userio_import_task t ON t.id = c.task_id"
        " WHERE t.project_id = $1",
        project.id,
    )
    assert rows and all(r["records"] is None for r in rows)


@pytest.mark.engine
async def test_a_replayed_request_with_its_idempotency_key_answers_the_same_task(env, project):
    body = {"identifier": "email", "records": [{"email": "a@example.com"}]}

    first = await project.post(IMPORT, body, headers={"Idempotency-Key": "run-1:0-0"})
    await env.drain()
    again = await project.post(IMPORT, body, headers={"Idempotency-Key": "run-1:0-0"})
    other = await project.post(IMPORT, body, headers={"Idempotency-Key": "run-1:1-1"})
    await env.drain()

    assert first.status_code == again.status_code == other.status_code == 202
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["status"] == "completed"
    assert again.headers["location"] == first.headers["location"]
    assert other.json()["id"] != first.json()["id"]
    details = (await project.get(other.headers["location"])).json()["details"]
    assert details[0]["outcome"] == "skipped", "a new key is a new request"


@pytest.mark.engine
async def test_an_idempotency_key_reused_with_another_body_is_409(project):
    await project.post(
        IMPORT, {"identifier": "email", "records": [{"email": "a@example.com"}]}, headers={"Idempotency-Key": "k"}
    )

    response = await project.post(
        IMPORT, {"identifier": "email", "records": [{"email": "b@example.com"}]}, headers={"Idempotency-Key": "k"}
    )

    assert response.status_code == 409
    assert response.json() == {"error": "this Idempotency-Key was used for a different request"}
    await project.env.drain()


async def test_an_invalid_idempotency_key_is_400(project):
    response = await project.post(
        IMPORT, {"identifier": "email", "records": [{}]}, headers={"Idempotency-Key": "has space"}
    )

    assert response.status_code == 400
