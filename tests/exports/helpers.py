"""Steps shared by the export tests."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import Project

EXPORT = "/_api/admin/users/export"


async def initiate(project: Project, body: dict[str, Any], **kwargs: Any) -> httpx.Response:
    return await project.post(EXPORT, body, **kwargs)


async def export_and_wait(project: Project, body: dict[str, Any]) -> dict[str, Any]:
    """Initiate an export, run its job, and return the completed `result`."""
    response = await initiate(project, body)
    assert response.status_code == 202, response.text
    await project.env.drain()
    status = await project.get(response.headers["location"])
    assert status.status_code == 200, status.text
    result = status.json()["result"]
    assert result["status"] == "completed", result
    return result


async def download(project: Project, url: str) -> httpx.Response:
    """GET a download URL: the app's own route (local storage) or the storage host (S3)."""
    if httpx.URL(url).path.startswith("/_userio/downloads/"):
        return await project.env.client.get(url)
    async with httpx.AsyncClient() as client:
        return await client.get(url)


async def exported_bytes(project: Project, body: dict[str, Any]) -> bytes:
    result = await export_and_wait(project, body)
    response = await download(project, result["download_url"])
    assert response.status_code == 200, response.text
    return response.content
