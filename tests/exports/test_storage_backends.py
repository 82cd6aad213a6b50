"""Exports through real storage: S3 (moto server on loopback) and the local route; purge by the sweeper."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from urllib.parse import parse_qs

import httpx
import pytest

from litestar_userio.jobs import SWEEP_JOB
from tests.exports.helpers import EXPORT, download, export_and_wait
from tests.helpers import run_import


@pytest.fixture
async def s3_env(backend, make_env, s3_config):
    return await make_env(backend, exports={"storage": s3_config})


async def test_s3_download_through_a_presigned_url_on_the_storage_host(s3_env, s3_config, s3_client):
    project = await s3_env.make_project()
    await run_import(project, [{"email": f"u{i}@example.com", "name": 'Ü, "x"'} for i in range(5)])

    result = await export_and_wait(
        project, {"format": "csv", "csv": {"fields": [{"pointer": "/email"}, {"pointer": "/name"}]}}
    )
    url = httpx.URL(result["download_url"])
    response = await download(project, result["download_url"])

    storage_host = httpx.URL(s3_config.endpoint_url)
    assert (url.host, url.port) == (storage_host.host, storage_host.port)
    query = parse_qs(url.query.decode())
    assert query["X-Amz-Expires"] == ["60"]
    assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
    assert "X-Amz-Signature" in query
    assert response.status_code == 200
    assert response.content.startswith(b"email,name\n")
    assert response.content.count(b"\n") == 6
    assert result["sha256"] == hashlib.sha256(response.content).hexdigest()
    assert response.headers["content-type"] == "text/csv"
    assert response.headers["content-disposition"].startswith('attachment; filename="')


@pytest.mark.slow
async def test_s3_export_larger_than_a_part_is_a_multipart_upload(backend, make_env, s3_config, s3_client):
    s3_config.part_size = 5 * 1024 * 1024
    env = await make_env(backend, exports={"storage": s3_config, "page_size": 500})
    project = await env.make_project()
    records = [{"email": f"user{i}@example.com", "name": "x" * 700} for i in range(8000)]
    for start in range(0, len(records), 500):
        await run_import(project, records[start : start + 500])

    result = await export_and_wait(project, {"format": "ndjson"})
    key = (await project.fetch("SELECT file_key FROM userio_export_task WHERE id = $1", result["id"]))[0]["file_key"]
    head = s3_client.head_object(Bucket=s3_config.bucket, Key=s3_config.prefix + key)
    body = (await download(project, result["download_url"])).content

    assert result["record_count"] == 8000
    assert result["size"] > 5 * 1024 * 1024
    assert head["ETag"].strip('"').endswith("-2")
    assert len(body) == result["size"]
    assert body.count(b"\n") == 8000


async def test_s3_file_is_deleted_by_the_sweeper_after_24_hours(s3_env, s3_config, s3_client):
    project = await s3_env.make_project()
    result = await export_and_wait(project, {"format": "ndjson"})
    key = (await project.fetch("SELECT file_key FROM userio_export_task WHERE id = $1", result["id"]))[0]["file_key"]
    assert s3_client.list_objects_v2(Bucket=s3_config.bucket)["KeyCount"] == 1

    s3_env.clock.advance(timedelta(hours=24, seconds=1))
    await s3_env.services.queue.enqueue(SWEEP_JOB)
    await s3_env.drain()

    assert s3_client.list_objects_v2(Bucket=s3_config.bucket)["KeyCount"] == 0
    assert (await project.get(f"{EXPORT}/{result['id']}")).status_code == 404
    assert key


async def test_local_file_is_deleted_by_the_sweeper_after_24_hours(env, project):
    result = await export_and_wait(project, {"format": "ndjson"})
    key = (await project.fetch("SELECT file_key FROM userio_export_task WHERE id = $1", result["id"]))[0]["file_key"]
    url = result["download_url"]

    env.clock.advance(timedelta(hours=24, seconds=1))
    await env.services.queue.enqueue(SWEEP_JOB)
    await env.drain()

    assert not await env.services.storage.exists(key)
    # A URL signed before the purge, made valid again by the clock, still finds nothing.
    env.clock.advance(timedelta(seconds=-(24 * 3600 + 30)))
    refused = await download(project, url)
    assert refused.status_code == 403
    assert refused.json()["error"]["message"] == "the file no longer exists"


@pytest.mark.parametrize("mutate", ["signature", "expires", "path"])
async def test_altered_local_urls_are_refused(env, project, mutate):
    url = httpx.URL((await export_and_wait(project, {"format": "ndjson"}))["download_url"])
    params = dict(url.params)
    if mutate == "signature":
        params["signature"] = params["signature"][:-2] + ("AA" if not params["signature"].endswith("AA") else "BB")
    elif mutate == "expires":
        params["expires"] = str(int(params["expires"]) + 3600)
    else:
        url = url.copy_with(path=url.path.replace(project.id, project.id + "x", 1))
    response = await download(project, str(url.copy_with(params=params)))

    assert response.status_code == 403
    assert response.json()["error"]["name"] == "Forbidden"


async def test_local_download_needs_no_bearer_token(env, project):
    url = (await export_and_wait(project, {"format": "ndjson"}))["download_url"]

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=env.app)) as anonymous:
        response = await anonymous.get(url)

    assert response.status_code == 200
