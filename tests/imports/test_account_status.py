"""`account_valid_from`, `account_valid_until` and `password.expire_after`, as the reference takes them.

Facts from the reference (`e2e/tests/user_import/test.yaml`, `userimport/service.go`, `user/account_status.go`):
the period is stored in UTC and exported as `/account_valid_from` and `/account_valid_until`; from >= until
fails the record with `Invalid/InvalidAccountStatusTransition`; on upsert each given bound replaces that bound;
`disabled` asking for the state the user is in gives the warning `invalid account status transition: A -> B`.
An account outside its period, or a password past `expire_after`, cannot sign in.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from example_app.oauth import token
from tests.exports.helpers import exported_bytes
from tests.helpers import HASH_2B, PASSWORD, import_one
from userio_core.clock import FrozenClock

NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)
PERIOD_ERROR = (
    "the start timestamp of account valid period must be less than the end timestamp of the account valid period"
)


@pytest.fixture
async def project(backend, make_env):
    env = await make_env(backend, clock=FrozenClock(NOW), route_handlers=[token])
    project = await env.make_project()
    await env.services.tokens.applications.create(project.id, "app", issue_jwt_access_token=True)
    return project


async def sign_in(project, username="testuser01"):
    return await project.env.client.post(
        "/oauth2/token",
        data={"grant_type": "password", "username": username, "password": PASSWORD, "client_id": "app"},
        headers={"Host": project.host},
    )


async def period(project, user_id):
    rows = await project.fetch("SELECT account_valid_from, account_valid_until FROM userio_user WHERE id = $1", user_id)
    return rows[0]["account_valid_from"], rows[0]["account_valid_until"]


def user(**members):
    return {"preferred_username": "testuser01", "password": {"type": "bcrypt", "password_hash": HASH_2B}, **members}


async def import_user(project, upsert=False, **members):
    record = {"preferred_username": "testuser01", **members} if upsert else user(**members)
    return await import_one(project, record, identifier="preferred_username", upsert=upsert)


async def exported(project):
    (line,) = (await exported_bytes(project, {"format": "ndjson"})).decode().splitlines()
    return json.loads(line)


async def test_insert_with_account_valid_from_in_the_future_refuses_sign_in(project):
    detail = await import_user(project, account_valid_from="2099-01-01T00:00:00Z")

    assert detail["outcome"] == "inserted"
    assert detail["record"]["account_valid_from"] == "2099-01-01T00:00:00Z"
    assert "warnings" not in detail
    assert (await exported(project))["account_valid_from"] == "2099-01-01T00:00:00Z"
    response = await sign_in(project)
    assert response.status_code == 400
    body = response.json()
    assert (body["error"], body["error_reason"]) == ("invalid_grant", "UserOutsideValidPeriod")
    assert "2099-01-01" in body["error_description"]


async def test_insert_with_account_valid_until_in_the_past_refuses_sign_in(project):
    detail = await import_user(project, account_valid_until="2025-01-01T00:00:00Z")

    assert detail["outcome"] == "inserted"
    assert (await exported(project))["account_valid_until"] == "2025-01-01T00:00:00Z"
    assert (await sign_in(project)).json()["error_reason"] == "UserOutsideValidPeriod"


async def test_account_inside_its_period_signs_in(project):
    await import_user(project, account_valid_from="2025-01-01T00:00:00Z", account_valid_until="2099-01-01T00:00:00Z")

    assert (await sign_in(project)).status_code == 200


async def test_period_is_stored_and_exported_in_utc(project):
    detail = await import_user(project, account_valid_from="2006-01-02T03:04:05+08:00")

    assert await period(project, detail["user_id"]) == (datetime(2006, 1, 1, 19, 4, 5, tzinfo=UTC), None)
    document = await exported(project)
    assert document["account_valid_from"] == "2006-01-01T19:04:05Z"
    assert "account_valid_until" not in document


async def test_csv_exports_the_period_pointers(project):
    await import_user(project, account_valid_from="2025-01-01T00:00:00Z")
    fields = [{"pointer": "/account_valid_from"}, {"pointer": "/account_valid_until"}]

    content = await exported_bytes(project, {"format": "csv", "csv": {"fields": fields}})

    assert content.decode() == "account_valid_from,account_valid_until\n2025-01-01T00:00:00Z,\n"


async def test_insert_with_from_not_before_until_fails_as_the_reference(project):
    detail = await import_user(
        project, account_valid_from="2099-01-01T00:00:00Z", account_valid_until="2025-01-01T00:00:00Z"
    )

    assert detail["outcome"] == "failed"
    assert detail["errors"] == [
        {
            "name": "Invalid",
            "reason": "InvalidAccountStatusTransition",
            "message": PERIOD_ERROR,
            "code": 400,
            "info": {"cause": {"kind": "AccountValidFromShouldBeBeforeAccountValidUntil"}},
        }
    ]
    assert await project.fetch("SELECT id FROM userio_user WHERE project_id = $1", project.id) == []


async def test_upsert_replaces_only_the_bound_it_gives(project):
    first = await import_user(
        project, account_valid_from="2025-01-01T00:00:00Z", account_valid_until="2099-01-01T00:00:00Z"
    )

    detail = await import_user(project, upsert=True, account_valid_until="2030-01-01T00:00:00Z")

    assert detail["outcome"] == "updated"
    assert await period(project, first["user_id"]) == (
        datetime(2025, 1, 1, tzinfo=UTC),
        datetime(2030, 1, 1, tzinfo=UTC),
    )


async def test_upsert_that_would_end_before_it_starts_fails_and_changes_nothing(project):
    first = await import_user(project, account_valid_from="2025-01-01T00:00:00Z")

    detail = await import_user(project, upsert=True, account_valid_until="2024-01-01T00:00:00Z", name="Changed")

    assert (detail["outcome"], detail["errors"][0]["reason"]) == ("failed", "InvalidAccountStatusTransition")
    assert await period(project, first["user_id"]) == (datetime(2025, 1, 1, tzinfo=UTC), None)
    rows = await project.fetch("SELECT standard_attributes FROM userio_user WHERE id = $1", first["user_id"])
    assert "Changed" not in rows[0]["standard_attributes"]


@pytest.mark.parametrize(
    ("seed", "disabled", "warning"),
    [
        ({}, True, None),
        ({"disabled": True}, True, "invalid account status transition: disabled -> disabled"),
        ({"disabled": True}, False, None),
        ({}, False, "invalid account status transition: normal -> normal"),
        (
            {"account_valid_until": "2025-01-01T00:00:00Z"},
            False,
            "invalid account status transition: outside_valid_period -> normal",
        ),
    ],
)
async def test_upsert_disabled_warns_when_the_state_does_not_change(project, seed, disabled, warning):
    first = await import_user(project, **seed)

    detail = await import_user(project, upsert=True, disabled=disabled)

    assert detail["outcome"] == "updated"
    assert [w["message"] for w in detail.get("warnings", [])] == ([warning] if warning else [])
    rows = await project.fetch("SELECT is_disabled FROM userio_user WHERE id = $1", first["user_id"])
    assert bool(rows[0]["is_disabled"]) is disabled


async def test_expired_password_cannot_sign_in_until_changed(project):
    password = {"type": "bcrypt", "password_hash": HASH_2B, "expire_after": "2026-01-01T00:00:00Z"}
    await import_user(project, password=password)

    response = await sign_in(project)

    assert response.status_code == 400
    body = response.json()
    assert (body["error"], body["error_reason"]) == ("invalid_grant", "PasswordExpiryForceChange")
    assert "password expired at 2026-01-01T00:00:00+00:00" in body["error_description"]


async def test_password_before_its_expiry_signs_in_and_expiry_is_stored_in_utc(project):
    password = {"type": "bcrypt", "password_hash": HASH_2B, "expire_after": "2099-01-01T08:00:00+08:00"}
    detail = await import_user(project, password=password)

    assert (await sign_in(project)).status_code == 200
    rows = await project.fetch(
        "SELECT expire_after FROM userio_authenticator WHERE user_id = $1 AND kind = 'primary'", detail["user_id"]
    )
    assert rows[0]["expire_after"] == datetime(2099, 1, 1, tzinfo=UTC)
    assert detail["record"]["password"] == {
        "type": "bcrypt",
        "password_hash": "REDACTED",
        "expire_after": "2099-01-01T08:00:00+08:00",
    }
