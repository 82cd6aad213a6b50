"""The export endpoints (SPEC 4.3, 4.4, 7, 8; DECISIONS 4): envelopes, every error row, limits, expiry."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest

from litestar_userio.jobs import sweep
from litestar_userio.projects.settings import ProjectSettings
from tests.conftest import Project
from tests.exports.helpers import EXPORT, download, export_and_wait, initiate
from tests.helpers import IMPORT, run_import

TASK_ID = re.compile(r"userexport_[0-9A-HJKMNP-TV-Z]{32}")


def error_of(response: httpx.Response) -> dict:
    body = response.json()
    assert set(body) == {"error"}
    return body["error"]


async def test_initiate_answers_202_with_the_task_in_result(project):
    response = await initiate(project, {"format": "csv", "csv": {"fields": [{"pointer": "/email"}]}})

    assert response.status_code == 202
    result = response.json()["result"]
    assert TASK_ID.fullmatch(result["id"])
    assert result["status"] == "pending"
    assert result["request"] == {"format": "csv", "csv": {"fields": [{"pointer": "/email"}]}}
    assert set(result) == {"id", "created_at", "status", "request"}
    assert response.headers["location"] == f"{EXPORT}/{result['id']}"
    await project.env.drain()


async def test_pending_status_has_progress_and_no_url(project):
    project.env.hold_jobs()
    response = await initiate(project, {"format": "ndjson"})

    result = (await project.get(response.headers["location"])).json()["result"]

    assert result["status"] == "pending"
    assert result["progress"] == {"processed": 0}
    assert "download_url" not in result
    assert "completed_at" not in result
    await project.env.drain()


async def test_completed_status_has_url_count_size_and_sha256(project):
    await run_import(project, [{"email": f"u{i}@example.com"} for i in range(3)])

    result = await export_and_wait(project, {"format": "ndjson"})
    file = await download(project, result["download_url"])

    assert set(result) == {
        "id",
        "created_at",
        "status",
        "request",
        "completed_at",
        "download_url",
        "record_count",
        "size",
        "sha256",
        "watermark",  # the change-log cursor of the file's snapshot (DECISIONS 16)
    }
    assert result["record_count"] == 3
    assert result["size"] == len(file.content)
    assert result["sha256"] == hashlib.sha256(file.content).hexdigest()
    assert file.headers["content-type"] == "application/x-ndjson"
    assert file.headers["content-disposition"].startswith("attachment;")
    assert re.search(rf'filename="{project.id}-{result["id"]}-\d{{14}}Z\.ndjson"', file.headers["content-disposition"])


async def test_every_status_call_signs_a_fresh_url(env, project):
    result = await export_and_wait(project, {"format": "ndjson"})
    location = f"{EXPORT}/{result['id']}"

    env.clock.advance(timedelta(seconds=30))
    again = (await project.get(location)).json()["result"]

    assert again["download_url"] != result["download_url"]


async def test_url_expires_after_60_seconds_and_status_gives_a_new_one(env, project):
    result = await export_and_wait(project, {"format": "ndjson"})
    url = result["download_url"]

    env.clock.advance(timedelta(seconds=59))
    assert (await download(project, url)).status_code == 200
    env.clock.advance(timedelta(seconds=2))
    expired = await download(project, url)
    assert expired.status_code == 403
    assert error_of(expired)["name"] == "Forbidden"

    fresh = (await project.get(f"{EXPORT}/{result['id']}")).json()["result"]["download_url"]
    assert (await download(project, fresh)).status_code == 200


@pytest.mark.engine
async def test_result_expires_24_hours_after_completion_and_the_file_is_deleted(env, project):
    result = await export_and_wait(project, {"format": "ndjson"})
    location = f"{EXPORT}/{result['id']}"
    key = (await project.fetch("SELECT file_key FROM userio_export_task WHERE id = $1", result["id"]))[0]["file_key"]

    env.clock.advance(timedelta(hours=23, minutes=59))
    assert (await project.get(location)).status_code == 200
    env.clock.advance(timedelta(minutes=2))
    gone = await project.get(location)
    assert gone.status_code == 404
    assert error_of(gone)["reason"] == "TaskNotFound"

    assert await env.services.storage.exists(key)
    assert await env.services.exports.purge_expired() >= 1
    assert not await env.services.storage.exists(key)
    assert await project.fetch("SELECT id FROM userio_export_task WHERE id = $1", result["id"]) == []


# SPEC 7, row by row.


@pytest.mark.engine
async def test_export_disabled_for_the_project_on_both_endpoints(env):
    project = await env.make_project()
    result = await export_and_wait(project, {"format": "ndjson"})
    await env.services.projects.update_settings(project.id, export_enabled=False)

    initiated = await initiate(project, {"format": "ndjson"})
    status = await project.get(f"{EXPORT}/{result['id']}")

    for response in (initiated, status):
        assert response.status_code == 500
        assert error_of(response) == {
            "name": "InternalError",
            "reason": "UserExportDisabled",
            "message": "user export is disabled",
            "code": 500,
        }


async def test_export_disabled_without_storage(backend, make_env):
    env = await make_env(backend, exports={"storage": None})
    project = await env.make_project()

    response = await initiate(project, {"format": "csv"})

    assert response.status_code == 500
    assert error_of(response)["reason"] == "UserExportDisabled"


@pytest.mark.engine
async def test_rate_limit_gives_rate_limited_with_bucket_and_retry_after(env):
    project = await env.make_project(ProjectSettings(export_rate_limit=2))

    for _ in range(2):
        await export_and_wait(project, {"format": "ndjson"})
    env.clock.advance(timedelta(hours=1))
    refused = await initiate(project, {"format": "ndjson"})

    assert refused.status_code == 429
    assert error_of(refused) == {
        "name": "TooManyRequest",
        "reason": "RateLimited",
        "message": f"rate limited: try again in {23 * 3600} s",
        "code": 429,
        "info": {"bucket_name": "UserExport"},
    }
    assert refused.headers["retry-after"] == str(23 * 3600)

    env.clock.advance(timedelta(hours=23, seconds=1))
    assert (await initiate(project, {"format": "ndjson"})).status_code == 202
    await env.drain()


async def test_rate_limit_is_per_project(env):
    first = await env.make_project(ProjectSettings(export_rate_limit=1))
    second = await env.make_project(ProjectSettings(export_rate_limit=1))

    await export_and_wait(first, {"format": "ndjson"})

    assert (await initiate(first, {"format": "ndjson"})).status_code == 429
    assert (await initiate(second, {"format": "ndjson"})).status_code == 202
    await env.drain()


@pytest.mark.engine
async def test_a_project_window_longer_than_the_plugins_still_counts_after_a_sweep(env):
    """The sweeper purged uses older than the plugin's 24 hours, and a project's own 48 exported again at 25."""
    project = await env.make_project(ProjectSettings(export_rate_limit=1, export_rate_period_seconds=48 * 3600))
    await export_and_wait(project, {"format": "ndjson"})
    env.clock.advance(timedelta(hours=25))
    await sweep({"userio": env.services})

    refused = await initiate(project, {"format": "ndjson"})

    assert refused.status_code == 429
    assert error_of(refused)["reason"] == "RateLimited"
    assert refused.headers["retry-after"] == str(23 * 3600)


@pytest.mark.engine
async def test_a_bucket_keeps_only_the_uses_of_its_window(env):
    project = await env.make_project(ProjectSettings(export_rate_limit=1, export_rate_period_seconds=3600))

    for _ in range(3):
        await export_and_wait(project, {"format": "ndjson"})
        env.clock.advance(timedelta(hours=1, seconds=1))

    rows = await project.fetch("SELECT COUNT(*) AS n FROM userio_rate_limit_event WHERE project_id = $1", project.id)
    assert rows[0]["n"] == 1


@contextlib.asynccontextmanager
async def refusing_export_tasks(project: Project) -> AsyncIterator[None]:
    """The database refuses to store the project's export tasks: an admission fails after taking its use."""
    name = f"refuse_{project.id}"
    async with project.env.services.db.transaction() as tx:
        if tx.dialect == "postgres":
            await tx.execute(
                f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE 'refused'; END $$;"
                f" CREATE TRIGGER {name} BEFORE INSERT ON userio_export_task FOR EACH ROW"
                f" WHEN (NEW.project_id = '{project.id}') EXECUTE FUNCTION {name}()"
            )
        else:
            await tx.execute(
                f"CREATE TRIGGER {name} BEFORE INSERT ON userio_export_task WHEN NEW.project_id = '{project.id}'"
                " BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
    try:
        yield
    finally:
        async with project.env.services.db.transaction() as tx:
            await tx.execute(f"DROP TRIGGER {name}" + (" ON userio_export_task" if tx.dialect == "postgres" else ""))
            if tx.dialect == "postgres":
                await tx.execute(f"DROP FUNCTION {name}()")


@pytest.mark.engine
async def test_an_admission_that_rolls_back_leaves_its_bucket_as_it_was(env):
    project = await env.make_project(ProjectSettings(export_rate_limit=1))

    async with refusing_export_tasks(project):
        failed = await initiate(project, {"format": "ndjson"})

    assert failed.status_code == 500, failed.text
    assert (await initiate(project, {"format": "ndjson"})).status_code == 202, "the one use is still free"
    await env.drain()


async def test_a_second_export_while_one_is_pending_is_refused(project):
    project.env.hold_jobs()
    assert (await initiate(project, {"format": "ndjson"})).status_code == 202

    refused = await initiate(project, {"format": "csv"})

    assert refused.status_code == 429
    assert error_of(refused) == {
        "name": "TooManyRequest",
        "reason": "MaximumConcurrentJobLimitExceeded",
        "message": "an export is already running",
        "code": 429,
    }
    await project.env.drain()
    assert (await initiate(project, {"format": "csv"})).status_code == 202
    await project.env.drain()


@pytest.mark.engine
async def test_simultaneous_initiates_let_exactly_one_through(env):
    project = await env.make_project()
    env.hold_jobs()

    responses = await asyncio.gather(*(initiate(project, {"format": "ndjson"}) for _ in range(6)))

    assert sorted(r.status_code for r in responses) == [202] + [429] * 5
    await env.drain()


@pytest.mark.engine
async def test_simultaneous_initiates_never_overdraw_the_rate_limit(backend, make_env):
    env = await make_env(backend, exports={"max_pending_per_project": 100})
    project = await env.make_project(ProjectSettings(export_rate_limit=3))
    env.hold_jobs()

    responses = await asyncio.gather(*(initiate(project, {"format": "ndjson"}) for _ in range(10)))

    assert sorted(r.status_code for r in responses) == [202] * 3 + [429] * 7
    assert {error_of(r)["reason"] for r in responses if r.status_code == 429} == {"RateLimited"}
    await env.drain()


@pytest.mark.parametrize(
    ("body", "cause"),
    [
        ({"format": "xml"}, {"location": "/format", "kind": "enum"}),
        (
            {},
            {
                "location": "",
                "kind": "required",
                "details": {"actual": None, "expected": ["format"], "missing": ["format"]},
            },
        ),
        ({"format": "csv", "extra": 1}, {"location": "/extra", "kind": ""}),
        (
            {"format": "csv", "csv": {"fields": [{"field_name": "x"}]}},
            {
                "location": "/csv/fields/0",
                "kind": "required",
                "details": {"actual": ["field_name"], "expected": ["pointer"], "missing": ["pointer"]},
            },
        ),
        (
            {"format": "csv", "csv": {"fields": [{"pointer": 1}]}},
            {
                "location": "/csv/fields/0/pointer",
                "kind": "type",
                "details": {"expected": ["string"], "actual": ["integer", "number"]},
            },
        ),
        (
            {"format": "csv", "csv": {"fields": [{"pointer": "email"}]}},
            {
                "location": "/csv/fields/0/pointer",
                "kind": "format",
                "details": {"format": "json-pointer", "pointer": "email", "error": "a JSON pointer starts with /"},
            },
        ),
        (
            {"format": "csv", "csv": {"fields": [{"pointer": "/a~2"}]}},
            {
                "location": "/csv/fields/0/pointer",
                "kind": "format",
                "details": {"format": "json-pointer", "pointer": "/a~2", "error": "~ must be followed by 0 or 1"},
            },
        ),
        (
            {"format": "csv", "csv": {"fields": [{"pointer": "/emial"}]}},
            {
                "location": "/csv/fields/0/pointer",
                "kind": "pointer",
                "details": {"pointer": "/emial", "error": "not a supported pointer"},
            },
        ),
        (
            {"format": "csv", "csv": {"fields": [{"pointer": "/email"}, {"pointer": "/address"}]}},
            {
                "location": "/csv/fields/1/pointer",
                "kind": "pointer",
                "details": {"pointer": "/address", "error": "not a supported pointer"},
            },
        ),
        (
            {"format": "csv", "csv": {"fields": [{"pointer": "/custom_attributes"}]}},
            {
                "location": "/csv/fields/0/pointer",
                "kind": "pointer",
                "details": {
                    "pointer": "/custom_attributes",
                    "error": "name a custom attribute: /custom_attributes/<name>",
                },
            },
        ),
        (
            {"format": "csv", "csv": {"fields": [{"pointer": "/email", "field_name": ""}]}},
            {"location": "/csv/fields/0/field_name", "kind": "minLength", "details": {"expected": 1, "actual": 0}},
        ),
    ],
)
async def test_invalid_requests_fail_validation_with_the_cause(project, body, cause):
    response = await initiate(project, body)

    assert response.status_code == 400
    error = error_of(response)
    assert (error["name"], error["reason"], error["code"]) == ("Invalid", "ValidationFailed", 400)
    (actual,) = error["info"]["causes"]
    assert {k: actual[k] for k in cause} == cause
    assert actual["message"]
    assert error["message"] == actual["message"]


async def test_field_object_keys_other_than_pointer_and_field_name_are_ignored(project):
    fields = [{"pointer": "/email", "field_name": "mail", "comment": "x"}, {"pointer": "/sub", "width": 10}]

    response = await initiate(project, {"format": "csv", "csv": {"fields": fields}})

    assert response.status_code == 202, response.text
    assert response.json()["result"]["request"]["csv"]["fields"] == [
        {"pointer": "/email", "field_name": "mail"},
        {"pointer": "/sub"},
    ]
    await project.env.drain()


async def test_every_field_object_without_pointer_is_reported_as_required_at_its_index(project):
    fields = [{"field_name": "a"}, {"pointer": "/email"}, {}]

    response = await initiate(project, {"format": "csv", "csv": {"fields": fields}})

    assert response.status_code == 400
    causes = error_of(response)["info"]["causes"]
    assert [{k: v for k, v in c.items() if k != "message"} for c in causes] == [
        {
            "location": "/csv/fields/0",
            "kind": "required",
            "details": {"actual": ["field_name"], "expected": ["pointer"], "missing": ["pointer"]},
        },
        {
            "location": "/csv/fields/2",
            "kind": "required",
            "details": {"actual": None, "expected": ["pointer"], "missing": ["pointer"]},
        },
    ]


async def test_not_json_fails_validation(project):
    response = await project.env.client.post(
        EXPORT, content=b"{format", headers={**project.headers(), "Content-Type": "application/json"}
    )

    assert response.status_code == 400
    assert error_of(response)["reason"] == "ValidationFailed"


async def test_content_type_must_be_json(project):
    response = await project.env.client.post(
        EXPORT, content=b'{"format": "csv"}', headers={**project.headers(), "Content-Type": "text/plain"}
    )

    assert response.status_code == 415
    assert error_of(response)["message"] == "Content-Type must be application/json"


@pytest.mark.parametrize("format_", ["csv", "ndjson"])
async def test_duplicate_field_names_list_every_name(project, format_):
    fields = [
        {"pointer": "/email"},
        {"pointer": "/address/locality", "field_name": "email"},
        {"pointer": "/custom_attributes/x"},
        {"pointer": "/custom_attributes/y", "field_name": "custom_attributes.x"},
        {"pointer": "/name"},
    ]

    response = await initiate(project, {"format": format_, "csv": {"fields": fields}})

    assert response.status_code == 400
    error = error_of(response)
    assert (error["name"], error["reason"]) == ("Invalid", "UserExportNonUniqueFieldNames")
    assert error["info"] == {"field_names": ["email", "email", "custom_attributes.x", "custom_attributes.x", "name"]}


async def test_unknown_id_is_task_not_found(project):
    response = await project.get(f"{EXPORT}/userexport_NOPE")

    assert response.status_code == 404
    assert error_of(response) == {
        "name": "NotFound",
        "reason": "TaskNotFound",
        "message": "task not found",
        "code": 404,
    }


async def test_an_import_task_id_is_not_an_export_task(project):
    imported = await run_import(project, [{"email": "a@example.com"}])

    response = await project.get(f"{EXPORT}/{imported['id']}")

    assert response.status_code == 404
    assert error_of(response)["reason"] == "TaskNotFound"


async def test_another_projects_export_is_not_found(env, project):
    other = await env.make_project()
    result = await export_and_wait(project, {"format": "ndjson"})

    response = await other.get(f"{EXPORT}/{result['id']}")

    assert response.status_code == 404


async def test_invalid_jwt_is_403_in_the_export_envelope(project):
    response = await initiate(project, {"format": "csv"}, headers={"Authorization": "Bearer nope"})

    assert response.status_code == 403
    error = error_of(response)
    assert (error["name"], error["code"]) == ("Forbidden", 403)
    assert "invalid Admin API JWT" in error["message"]


async def test_plain_http_is_403_in_the_export_envelope(env, project):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=env.app), base_url="http://testserver") as client:
        response = await client.get(f"{EXPORT}/userexport_X", headers=project.headers())

    assert response.status_code == 403
    assert error_of(response)["message"] == "HTTPS is required"


async def test_import_status_still_answers_in_its_own_envelope(project):
    response = await project.get(f"{IMPORT}/task_NOPE")

    assert response.json() == {"error": "task not found"}
