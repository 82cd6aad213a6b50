"""One login id names one user per project across login-id kinds (issue 46; ref: `UNIQUE (app_id, unique_key)`).

A username spelled like another user's email or phone number is refused as a login id taken is (`InvariantViolated`,
cause `DuplicatedIdentity`), in an import chunk (cleanly, per record), by `POST`/`PATCH /users`, and by the
database's unique index on `userio_identity (project_id, unique_key)`; one user may hold one value under two
kinds (a username that is its email).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from litestar_userio.errors import WriteConflict
from tests.helpers import HASH_2B, PASSWORD, import_one, run_import
from userio_core.ids import new_id

pytestmark = pytest.mark.engine

USERS = "/_api/admin/users"
DUPLICATED = {"cause": {"kind": "DuplicatedIdentity"}}


def refused(detail: dict) -> bool:
    (error,) = detail["errors"]
    return (error["name"], error["reason"], error["info"]) == ("Invalid", "InvariantViolated", DUPLICATED)


async def test_a_username_spelled_like_another_users_email_or_phone_fails_its_record(project):
    await import_one(project, {"email": "ada@example.com", "phone_number": "+14155550100"})

    body = await run_import(
        project,
        [
            {"preferred_username": "ADA@example.com"},
            {"preferred_username": "+1(415)555-0100"},
            {"preferred_username": "bob", "email": "bob@example.com"},
        ],
        identifier="preferred_username",
    )

    first, second, third = body["details"]
    assert refused(first) and refused(second), body["details"]
    assert third["outcome"] == "inserted"
    owners = await project.fetch(
        "SELECT DISTINCT user_id FROM userio_identity WHERE project_id = $1 AND normalized_value = 'ada@example.com'",
        project.id,
    )
    assert len(owners) == 1


async def test_within_one_chunk_the_later_record_fails(project):
    body = await run_import(
        project,
        [{"preferred_username": "ann", "email": "x@example.com"}, {"preferred_username": "X@example.com"}],
        identifier="preferred_username",
    )

    assert [d["outcome"] for d in body["details"]] == ["inserted", "failed"]
    assert refused(body["details"][1])


async def test_one_user_may_hold_one_value_as_email_and_username(project):
    body = await run_import(
        project,
        [{"email": "cy@example.com", "preferred_username": "cy@example.com"}, {"email": "dee@example.com"}],
    )
    cy = body["details"][0]
    assert cy["outcome"] == "inserted", cy
    patched = await project.env.client.patch(
        f"{USERS}/{cy['user_id']}", json={"email": None}, headers=project.headers()
    )
    assert patched.status_code == 200, patched.text
    # The username keeps the key the email gave up: nobody else may take the value as an email now.
    taken = await project.env.client.patch(
        f"{USERS}/{body['details'][1]['user_id']}", json={"email": "CY@example.com"}, headers=project.headers()
    )
    assert taken.status_code == 400 and taken.json()["error"]["info"] == DUPLICATED


async def test_post_and_patch_users_refuse_a_login_id_another_user_holds_as_another_kind(project):
    headers = project.headers()
    client = project.env.client
    ada = await client.post(USERS, json={"email": "ada@example.com"}, headers=headers)
    bob = await client.post(USERS, json={"email": "bob@example.com"}, headers=headers)
    assert ada.status_code == bob.status_code == 201

    created = await client.post(USERS, json={"preferred_username": "Ada@Example.com"}, headers=headers)
    patched = await client.patch(
        f"{USERS}/{bob.json()['result']['sub']}", json={"preferred_username": "ada@example.com"}, headers=headers
    )

    for response in (created, patched):
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert (error["name"], error["reason"], error["info"]) == ("Invalid", "InvariantViolated", DUPLICATED)


async def test_lookup_and_sign_in_see_one_user(project):
    await import_one(project, {"email": "ada@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}})
    await import_one(project, {"preferred_username": "ada@example.com"}, identifier="preferred_username")

    listed = await project.env.client.get(USERS, params={"login_id": "ADA@example.com"}, headers=project.headers())

    assert [u["email"] for u in listed.json()["result"]["items"]] == ["ada@example.com"]
    assert await project.env.services.users.verify_password(project.id, "ada@example.com", PASSWORD) is not None


async def test_the_database_refuses_a_second_user_with_the_key(project):
    """What holds when two writers race past the in-memory checks: the unique index (a conflict, retried)."""
    ada = await import_one(project, {"email": "ada@example.com"})
    bob = await import_one(project, {"email": "bob@example.com"})
    assert {ada["outcome"], bob["outcome"]} == {"inserted"}
    db = project.env.services.db

    with pytest.raises(WriteConflict):
        async with db.transaction() as tx:
            await tx.execute(
                "INSERT INTO userio_identity (id, project_id, user_id, login_id_key, login_id_type, original_value,"
                " normalized_value, created_at, unique_key) VALUES ($1, $2, $3, 'username', 'username',"
                " 'ada@example.com', 'ada@example.com', $4, 'ada@example.com')",
                new_id(),
                project.id,
                bob["user_id"],
                datetime.now(UTC),
            )
