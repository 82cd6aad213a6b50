"""`GET /_api/admin/users/import` and `/export`: the project's tasks newest first, paged, without details."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.exports.helpers import EXPORT
from tests.helpers import IMPORT


async def _import(project, records, **options):
    response = await project.post(IMPORT, {"identifier": "email", "records": records, **options})
    assert response.status_code == 202, response.text
    project.env.clock.advance(timedelta(seconds=1))
    return response.json()["id"]


async def test_import_list_is_newest_first_with_counters_and_no_details(project):
    first = await _import(project, [{"email": "a@example.com"}, {"email": "bad"}])
    second = await _import(project, [{"email": "b@example.com"}], dry_run=True)
    await project.env.drain()

    response = await project.get(IMPORT)

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"items", "next_cursor"}
    assert body["next_cursor"] is None
    assert [item["id"] for item in body["items"]] == [second, first]
    newest, oldest = body["items"]
    assert newest["dry_run"] is True and oldest["dry_run"] is False
    assert oldest["status"] == "completed"
    assert oldest["summary"] == {"total": 2, "inserted": 1, "updated": 0, "skipped": 0, "failed": 1}
    assert "completed_at" in oldest
    assert all("details" not in item for item in body["items"])


async def test_import_list_shows_progress_of_pending_tasks(project):
    project.env.hold_jobs()
    task = await _import(project, [{"email": f"u{i}@example.com"} for i in range(3)])

    body = (await project.get(IMPORT)).json()

    assert body["items"] == [
        {
            "id": task,
            "created_at": body["items"][0]["created_at"],
            "status": "pending",
            "dry_run": False,
            "progress": {"total": 3, "processed": 0},
        }
    ]
    await project.env.drain()


@pytest.mark.engine
async def test_import_list_pages_follow_the_cursor_without_gaps_or_repeats(project):
    project.env.hold_jobs()
    ids = [await _import(project, [{"email": f"u{i}@example.com"}]) for i in range(5)]

    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        body = (await project.get(IMPORT, params=params)).json()
        seen += [item["id"] for item in body["items"]]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break

    assert seen == list(reversed(ids))
    assert pages == 3
    await project.env.drain()


@pytest.mark.engine
async def test_import_list_breaks_ties_of_equal_creation_times(project):
    project.env.hold_jobs()
    ids = []
    for i in range(3):  # the clock does not move: every task has the same created_at
        response = await project.post(IMPORT, {"identifier": "email", "records": [{"email": f"t{i}@example.com"}]})
        ids.append(response.json()["id"])

    first = (await project.get(IMPORT, params={"limit": 2})).json()
    rest = (await project.get(IMPORT, params={"limit": 2, "cursor": first["next_cursor"]})).json()

    listed = [item["id"] for item in first["items"] + rest["items"]]
    assert sorted(listed) == sorted(ids) and len(set(listed)) == 3
    assert rest["next_cursor"] is None
    await project.env.drain()


async def test_import_list_shows_only_the_callers_project(env, project):
    other = await env.make_project()
    await _import(other, [{"email": "a@example.com"}])

    body = (await project.get(IMPORT)).json()

    assert body == {"items": [], "next_cursor": None}
    await env.drain()


async def test_import_list_refuses_a_bad_token_with_the_import_envelope(project):
    response = await project.get(IMPORT, headers={"Authorization": "Bearer nope"})

    assert response.status_code == 403
    assert set(response.json()) == {"error"} and isinstance(response.json()["error"], str)


async def test_import_list_refuses_a_forged_cursor_and_a_bad_limit(project):
    forged = await project.get(IMPORT, params={"cursor": "not-a-cursor"})
    too_many = await project.get(IMPORT, params={"limit": 1000})

    assert forged.status_code == 400
    assert "cursor" in forged.json()["error"]
    assert too_many.status_code == 400
    assert too_many.json() == {"error": "invalid query parameter limit: Expected `int` <= 100"}


async def test_a_bad_limit_is_named_with_why_in_either_envelope(project):
    zero = await project.get(IMPORT, params={"limit": 0})
    word = await project.get(EXPORT, params={"limit": "ten"})

    assert zero.status_code == word.status_code == 400
    assert zero.json() == {"error": "invalid query parameter limit: Expected `int` >= 1"}
    assert word.json()["error"]["message"] == "invalid query parameter limit: Expected `int`, got `str`"
    assert word.json()["error"]["reason"] == "InvalidRequest"


async def test_export_list_is_newest_first_in_result_without_download_urls(project):
    first = await project.post(EXPORT, {"format": "ndjson"})
    await project.env.drain()
    project.env.clock.advance(timedelta(seconds=1))
    second = await project.post(EXPORT, {"format": "csv", "csv": {"fields": [{"pointer": "/sub"}]}})
    await project.env.drain()

    response = await project.get(EXPORT)

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"result"}
    items = body["result"]["items"]
    assert [item["id"] for item in items] == [second.json()["result"]["id"], first.json()["result"]["id"]]
    assert body["result"]["next_cursor"] is None
    assert items[0]["request"] == {"format": "csv", "csv": {"fields": [{"pointer": "/sub"}]}}
    assert all(item["status"] == "completed" and "download_url" not in item for item in items)
    assert all(item["record_count"] == 0 for item in items)


@pytest.mark.engine
async def test_export_list_pages_with_the_cursor(project):
    ids = []
    for _ in range(3):
        response = await project.post(EXPORT, {"format": "ndjson"})
        ids.append(response.json()["result"]["id"])
        await project.env.drain()
        project.env.clock.advance(timedelta(seconds=1))

    first = (await project.get(EXPORT, params={"limit": 2})).json()["result"]
    rest = (await project.get(EXPORT, params={"limit": 2, "cursor": first["next_cursor"]})).json()["result"]

    assert [item["id"] for item in first["items"] + rest["items"]] == list(reversed(ids))
    assert rest["next_cursor"] is None


async def test_export_list_refuses_a_bad_token_with_the_export_envelope(project):
    response = await project.get(EXPORT, headers={"Authorization": "Bearer nope"})

    assert response.status_code == 403
    assert response.json()["error"]["name"] == "Forbidden"


async def test_export_list_refuses_a_forged_cursor_with_the_export_envelope(project):
    response = await project.get(EXPORT, params={"cursor": "%%%"})

    assert response.status_code == 400
    assert response.json()["error"]["name"] == "Invalid"


async def test_list_endpoints_are_in_the_openapi_document(env):
    schema = (await env.client.get("/schema/openapi.json")).json()

    for path in (IMPORT, EXPORT):
        operation = schema["paths"][path]["get"]
        names = {p["name"] for p in operation["parameters"]}
        assert {"limit", "cursor"} <= names
        assert "200" in operation["responses"] and "403" in operation["responses"]
