"""Linked OAuth identities in import records (DECISIONS 14): stored, exported, found by the host's sign-in."""

from __future__ import annotations

import json

import pytest

from tests.exports.helpers import exported_bytes
from tests.helpers import run_import

pytestmark = pytest.mark.engine

GOOGLE = {"type": "oauth", "provider_alias": "google", "subject": "1098", "claims": {"email": "ada@gmail.com"}}


async def test_an_imported_identity_finds_its_user_and_is_exported_as_the_reference_writes_it(project):
    body = await run_import(project, [{"email": "ada@example.com", "identities": [GOOGLE]}])
    detail = body["details"][0]
    assert detail["outcome"] == "inserted", detail

    users = project.env.services.users
    assert await users.find_by_oauth(project.id, "google", "1098") == detail["user_id"]
    assert await users.find_by_oauth(project.id, "google", "1099") is None
    assert await users.find_by_oauth(project.id, "apple", "1098") is None

    lines = (await exported_bytes(project, {"format": "ndjson"})).decode().splitlines()
    identities = json.loads(lines[0])["identities"]
    assert identities[-1] == {
        "type": "oauth",
        "oauth": {
            "provider_alias": "google",
            "provider_type": "google",
            "provider_subject_id": "1098",
            "user_profile": {"email": "ada@gmail.com"},
        },
        "claims": {"email": "ada@gmail.com"},
    }
    assert identities[0]["type"] == "login_id"


async def test_a_subject_linked_to_another_user_fails_the_record(project):
    first = await run_import(project, [{"email": "ada@example.com", "identities": [GOOGLE]}])
    # Within one request, and against a stored user: both fail, naming the clash.
    body = await run_import(
        project,
        [
            {"email": "bob@example.com", "identities": [GOOGLE]},
            {"email": "cy@example.com", "identities": [{**GOOGLE, "subject": "2"}]},
            {"email": "di@example.com", "identities": [{**GOOGLE, "subject": "2"}]},
        ],
    )
    outcomes = [(d["outcome"], d.get("errors", [{}])[0].get("reason")) for d in body["details"]]
    assert outcomes == [("failed", "InvariantViolated"), ("inserted", None), ("failed", "InvariantViolated")]
    assert "already linked to another user" in body["details"][0]["errors"][0]["message"]
    users = project.env.services.users
    assert await users.find_by_oauth(project.id, "google", "1098") == first["details"][0]["user_id"]
    assert await users.find_by_oauth(project.id, "google", "2") == body["details"][1]["user_id"]


async def test_an_upsert_adds_identities_and_updates_their_claims_but_removes_none(project):
    await run_import(project, [{"email": "ada@example.com", "identities": [GOOGLE]}])
    apple = {"type": "oauth", "provider_alias": "apple", "provider_type": "apple", "subject": "a.1"}

    body = await run_import(
        project,
        [{"email": "ada@example.com", "identities": [apple, {**GOOGLE, "claims": {"email": "new@gmail.com"}}]}],
        upsert=True,
    )
    assert body["details"][0]["outcome"] == "updated"
    await run_import(project, [{"email": "ada@example.com", "identities": []}], upsert=True)

    rows = await project.fetch(
        "SELECT provider_alias, subject, claims FROM userio_oauth_identity WHERE project_id = $1"
        " ORDER BY provider_alias",
        project.id,
    )
    assert [(r["provider_alias"], r["subject"], json.loads(r["claims"])) for r in rows] == [
        ("apple", "a.1", {}),
        ("google", "1098", {"email": "new@gmail.com"}),
    ]


async def test_a_malformed_identity_fails_with_every_cause(project):
    body = await run_import(
        project,
        [{"email": "ada@example.com", "identities": [{"type": "saml", "provider_alias": "", "subject": "x"}]}],
    )
    detail = body["details"][0]
    assert detail["outcome"] == "failed"
    causes = {(c["location"], c["kind"]) for c in detail["errors"][0]["info"]["causes"]}
    assert causes == {("/identities/0/type", "enum"), ("/identities/0/provider_alias", "minLength")}


async def test_the_dry_run_predicts_a_clash_and_writes_nothing(project):
    await run_import(project, [{"email": "ada@example.com", "identities": [GOOGLE]}])

    body = await run_import(
        project,
        [
            {"email": "bob@example.com", "identities": [GOOGLE]},
            {"email": "cy@example.com", "identities": [{**GOOGLE, "subject": "3"}]},
        ],
        dry_run=True,
    )

    assert [d["outcome"] for d in body["details"]] == ["failed", "inserted"]
    assert len(await project.fetch("SELECT id FROM userio_oauth_identity WHERE project_id = $1", project.id)) == 1
