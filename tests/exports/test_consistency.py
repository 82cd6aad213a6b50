"""The export reads one snapshot (users created meanwhile are wholly in or out, none twice, none missing),
and a worker killed mid-export leaves no partial file: the retry produces the whole file."""

from __future__ import annotations

import json
import signal

import msgspec
import pytest

from litestar_userio import LocalStorageConfig
from tests.conftest import Backend
from tests.exports.helpers import download, initiate
from tests.helpers import IMPORT, run_import
from tests.imports.test_worker_kill import start_worker, wait_for

pytestmark = pytest.mark.engine


async def test_users_created_during_the_export_are_wholly_in_or_out(backend, make_env):
    env = await make_env(backend, imports={"chunk_size": 20}, exports={"page_size": 10})
    project = await env.make_project()
    before = await run_import(project, [{"email": f"old{i}@example.com"} for i in range(300)])
    old_ids = {d["user_id"] for d in before["details"]}

    env.hold_jobs()
    imported = await project.post(
        IMPORT,
        {
            "identifier": "email",
            "records": [{"email": f"new{i}@example.com", "phone_number": f"+1415555{i:04d}"} for i in range(400)],
        },
    )
    exported = await initiate(project, {"format": "ndjson"})
    await env.drain(workers=2)
    during = (await project.get(imported.headers["location"])).json()
    result = (await project.get(exported.headers["location"])).json()["result"]
    lines = (await download(project, result["download_url"])).content.splitlines()
    documents = [json.loads(line) for line in lines]

    subs = [d["sub"] for d in documents]
    assert len(subs) == len(set(subs)), "a user appears twice"
    assert old_ids <= set(subs), "a user that existed before the export is missing"
    task_id = during["id"]
    chunks = await project.fetch("SELECT indices FROM userio_import_chunk WHERE task_id = $1", task_id)
    user_of_index = {d["index"]: d["user_id"] for d in during["details"]}
    included = []
    for chunk in chunks:
        users = {user_of_index[i] for i in msgspec.json.decode(chunk["indices"])}
        inside = users & set(subs)
        assert inside in (set(), users), "a chunk committed during the export is half in the file"
        included.append(bool(inside))
    for document in documents:
        if document["sub"] not in old_ids:
            assert {i["login_id"]["key"] for i in document["identities"]} == {"email", "phone"}
    assert result["record_count"] == len(documents) == 300 + 20 * sum(included)


@pytest.mark.slow
async def test_worker_killed_mid_export_leaves_no_partial_file_and_the_retry_is_whole(
    postgres_url, redis_url, make_env, tmp_path
):
    env = await make_env(
        Backend("postgres-arq", postgres_url, redis_url),
        exports={"storage": LocalStorageConfig(directory=tmp_path / "exports"), "page_size": 20},
    )
    project = await env.make_project()
    for start in range(0, 3000, 1000):
        await run_import(
            project, [{"email": f"u{i}@example.com", "name": "x" * 50} for i in range(start, start + 1000)]
        )
    response = await initiate(project, {"format": "ndjson"})
    location = response.headers["location"]
    task_id = response.json()["result"]["id"]

    async def in_progress():
        rows = await project.fetch("SELECT status, processed FROM userio_export_task WHERE id = $1", task_id)
        return rows[0]["status"] == "pending" and rows[0]["processed"] > 0

    worker = start_worker(env, tmp_path, "export-victim", {"USERIO_EXPORT_PAGE_SIZE": "20"})
    try:
        await wait_for(in_progress, timeout=60, interval=0.01)
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    killed = (await project.get(location)).json()["result"]
    assert killed["status"] == "pending"
    assert "download_url" not in killed
    assert list((tmp_path / "exports").rglob("*.ndjson")) == [], "a partial file is visible"

    survivor = start_worker(env, tmp_path, "export-survivor", {"USERIO_EXPORT_PAGE_SIZE": "20"})
    try:

        async def completed():
            result = (await project.get(location)).json()["result"]
            return result if result["status"] == "completed" else None

        result = await wait_for(completed, timeout=120, interval=0.2)
    finally:
        survivor.send_signal(signal.SIGTERM)
        survivor.wait(timeout=30)

    content = (await download(project, result["download_url"])).content
    emails = sorted(json.loads(line)["email"] for line in content.splitlines())
    assert "failed_at" not in result
    assert emails == sorted(f"u{i}@example.com" for i in range(3000))
    assert result["record_count"] == 3000
