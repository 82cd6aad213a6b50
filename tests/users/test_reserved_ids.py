"""A user id never reads as another admin endpoint (issue 46): the fixed segments under `/users/` are reserved, and
`/users/id/{id}` reaches any user by id, one stored before the rule included."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tests.helpers import import_one
from userio_core.ids import RESERVED_USER_IDS
from userio_core.login_ids import login_key

USERS = "/_api/admin/users"


def test_every_fixed_segment_under_users_is_reserved(env):
    """Checked against the app's own routes, so a new endpoint under `/users/` cannot forget it."""
    segments = set()
    for route in env.app.routes:
        parts = route.path.split("/")
        if route.path.startswith(USERS + "/") and len(parts) > 4 and "{" not in parts[4]:
            segments.add(parts[4])
    assert segments, [route.path for route in env.app.routes]
    assert segments <= set(RESERVED_USER_IDS)


@pytest.mark.parametrize("sub", RESERVED_USER_IDS)
async def test_a_reserved_word_as_sub_is_refused_by_import_and_post_naming_it(project, sub):
    detail = await import_one(project, {"email": "ada@example.com", "sub": sub})
    response = await project.env.client.post(
        USERS, json={"email": "bob@example.com", "sub": sub}, headers=project.headers()
    )

    assert response.status_code == 400
    for error in (detail["errors"][0], response.json()["error"]):
        assert error["reason"] == "ValidationFailed"
        [cause] = error["info"]["causes"]
        assert (cause["location"], cause["kind"]) == ("/sub", "not")
        assert f"sub {sub!r} is a fixed path segment of the admin API" in error["message"]


async def _stored_before_the_rule(project, sub: str) -> None:
    """A user whose id is a reserved word, as an import before the rule stored it."""
    now = datetime.now(UTC)
    attributes = json.dumps({"email": "old@example.com", "email_verified": False})
    async with project.env.services.db.transaction() as tx:
        await tx.execute(
            "INSERT INTO userio_user (id, project_id, created_at, updated_at, is_disabled, standard_attributes,"
            " custom_attributes) VALUES ($1, $2, $3, $3, FALSE, $4, '{}')",
            sub,
            project.id,
            now,
            attributes,
        )
        await tx.execute(
            "INSERT INTO userio_identity (id, project_id, user_id, login_id_key, login_id_type, original_value,"
            " normalized_value, created_at, unique_key) VALUES ($1, $2, $3, 'email', 'email', 'old@example.com',"
            " 'old@example.com', $4, $5)",
            f"identity-of-{sub}",
            project.id,
            sub,
            now,
            login_key("old@example.com"),
        )


@pytest.mark.engine
async def test_a_user_stored_with_a_reserved_id_is_reached_at_users_id(project):
    await _stored_before_the_rule(project, "password-migration")
    headers, client = project.headers(), project.env.client
    path = f"{USERS}/id/password-migration"

    read = await client.get(path, headers=headers)
    patched = await client.patch(path, json={"name": "Old"}, headers=headers)
    password = await client.put(f"{path}/password", json={"password": "a new one"}, headers=headers)
    disabled = await client.post(f"{path}/disable", json={}, headers=headers)
    enabled = await client.post(f"{path}/enable", headers=headers)
    state = await client.get(f"{USERS}/password-migration", headers=headers)  # still the migration state

    assert read.status_code == 200 and read.json()["result"]["sub"] == "password-migration", read.text
    assert patched.status_code == 200 and patched.json()["result"]["name"] == "Old"
    assert password.status_code == 204
    assert disabled.status_code == 200 and disabled.json()["result"]["disabled"] is True
    assert enabled.status_code == 200 and enabled.json()["result"]["disabled"] is False
    assert state.status_code == 200 and "password_algorithm" in state.json()["result"]
    assert (await client.delete(path, headers=headers)).status_code == 204
    assert (await client.get(path, headers=headers)).status_code == 404


async def test_users_id_reaches_an_ordinary_user_too(project):
    detail = await import_one(project, {"email": "ada@example.com"})

    response = await project.env.client.get(f"{USERS}/id/{detail['user_id']}", headers=project.headers())

    assert response.status_code == 200 and response.json()["result"]["email"] == "ada@example.com"
