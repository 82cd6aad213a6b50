"""Shared test data and steps."""

from __future__ import annotations

import asyncio
import inspect
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tests.conftest import Project

IMPORT = "/_api/admin/users/import"
PASSWORD = "correct horse"
HASH_2B = "$2b$04$gfLwerl3GiBpgFfuAmfck.Bxn1y20no2FfB9SHzdpb6loeI/1UMZS"
"""bcrypt of PASSWORD at cost 4 (cheap for tests)."""
HASH_2A = "$2a$" + HASH_2B[4:]
HASH_2Y = "$2y$" + HASH_2B[4:]
TOTP_SECRET = "JBSWY3DPEHPK3PXP"


async def until(
    condition: Callable[[], bool | Awaitable[bool]], what: str, timeout: float = 60, interval: float = 0.01
) -> None:
    """Return as soon as `condition()` holds, instead of sleeping for as long as it usually takes: the test is no
    slower than the event, and fails (naming `what`) rather than passing by luck when the event is late. The
    default deadline is generous (CI runs at a load of 15 on 2 cores): it bounds a hang, it times nothing."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if await result if inspect.isawaitable(result) else result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(interval)


def stop_server(process: subprocess.Popen[str], timeout: float = 30) -> str:
    """SIGTERM a server started with `PYTHONFAULTHANDLER=1` and its output piped; its output once it exited.

    One that does not exit within `timeout` fails the test with every thread's stack (faulthandler prints them on
    SIGABRT), so that a hang at shutdown names what it waits for.
    """
    process.terminate()
    try:
        return process.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        try:
            output = process.communicate(timeout=10)[0]
        except subprocess.TimeoutExpired:
            process.kill()
            output = process.communicate()[0]
        raise AssertionError(f"the server did not exit within {timeout} s of SIGTERM; its threads:\n{output}") from None


async def run_import(project: Project, records: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    """POST an import, run the jobs, and return the completed status body."""
    response = await project.post(
        IMPORT, {"records": records, "identifier": options.pop("identifier", "email"), **options}
    )
    assert response.status_code == 202, response.text
    await project.env.drain()
    status = await project.get(response.headers["location"])
    assert status.status_code == 200, status.text
    body = status.json()
    assert body["status"] == "completed", body
    return body


async def import_one(project: Project, record: dict[str, Any], **options: Any) -> dict[str, Any]:
    """Import one record and return its detail."""
    body = await run_import(project, [record], **options)
    return body["details"][0]


async def user_row(project: Project, user_id: str) -> dict[str, Any]:
    """The user's attributes as stored, decoded."""
    import json

    rows = await project.fetch(
        "SELECT id, is_disabled, standard_attributes, custom_attributes FROM userio_user WHERE id = $1", user_id
    )
    assert rows, f"no user {user_id}"
    row = rows[0]
    return {
        "disabled": bool(row["is_disabled"]),
        "standard": json.loads(row["standard_attributes"]),
        "custom": json.loads(row["custom_attributes"]),
    }


async def identities(project: Project, user_id: str) -> dict[str, str]:
    rows = await project.fetch("SELECT login_id_key, original_value FROM userio_identity WHERE user_id = $1", user_id)
    return {r["login_id_key"]: r["original_value"] for r in rows}


async def authenticators(project: Project, user_id: str) -> list[tuple[str, str, str | None]]:
    rows = await project.fetch(
        "SELECT kind, type, COALESCE(oob_target, password_hash, totp_secret) AS value FROM userio_authenticator"
        " WHERE user_id = $1 ORDER BY kind, type",
        user_id,
    )
    return [(r["kind"], r["type"], r["value"]) for r in rows]


async def memberships(project: Project, user_id: str, kind: str = "role") -> set[str]:
    rows = await project.fetch(
        f"SELECT k.key FROM userio_user_{kind} m JOIN userio_{kind} k ON k.id = m.{kind}_id WHERE m.user_id = $1",
        user_id,
    )
    return {r["key"] for r in rows}
