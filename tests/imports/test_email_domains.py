"""Email domains are matched under IDNA 2008 / UTS 46 non-transitional (DECISIONS 10): `ß` is not `ss`."""

from __future__ import annotations

import pytest

from tests.helpers import HASH_2B, PASSWORD, identities, run_import
from userio_core.attribute_formats import SPECIAL_USE_HINT

pytestmark = pytest.mark.engine


async def test_sharp_s_and_ss_domains_are_two_users(project):
    body = await run_import(project, [{"email": "x@strasse.de"}, {"email": "x@straße.de"}])

    assert [d["outcome"] for d in body["details"]] == ["inserted", "inserted"]
    first, second = (d["user_id"] for d in body["details"])
    assert first != second
    assert await identities(project, first) == {"email": "x@strasse.de"}
    assert await identities(project, second) == {"email": "x@straße.de"}


async def test_sharp_s_domain_does_not_find_the_ss_user_on_a_later_import(project):
    await run_import(project, [{"email": "x@strasse.de"}])

    body = await run_import(project, [{"email": "x@straße.de", "name": "Eszett"}], upsert=True)

    assert body["details"][0]["outcome"] == "inserted"


async def test_dry_run_keeps_sharp_s_and_ss_apart_too(project):
    await run_import(project, [{"email": "x@strasse.de"}])

    body = await run_import(project, [{"email": "x@straße.de"}, {"email": "X@STRASSE.de"}], dry_run=True)

    assert [d["outcome"] for d in body["details"]] == ["inserted", "skipped"]


async def test_the_a_label_and_the_upper_case_form_find_the_same_user(project):
    first = await run_import(project, [{"email": "x@straße.de"}])

    body = await run_import(
        project, [{"email": "x@xn--strae-oqa.de", "name": "A-label"}, {"email": "X@STRAßE.DE"}], upsert=True
    )

    assert [d["outcome"] for d in body["details"]] == ["updated", "updated"]
    assert {d["user_id"] for d in body["details"]} == {first["details"][0]["user_id"]}


async def test_sign_in_with_a_sharp_s_domain_reaches_only_that_user(project):
    body = await run_import(
        project,
        [
            {"email": "x@straße.de", "password": {"type": "bcrypt", "password_hash": HASH_2B}},
            {"email": "x@strasse.de"},
        ],
    )
    users = project.env.services.users

    assert await users.verify_password(project.id, "x@straße.de", PASSWORD) == body["details"][0]["user_id"]
    assert await users.verify_password(project.id, "x@strasse.de", PASSWORD) is None


RESERVED = "The part after the @-sign is a special-use or reserved name that cannot be used with email."
"""email-validator's own sentence for `acme.test` (RFC 6761 reserves `.test`)."""


@pytest.mark.parametrize("dry_run", [True, False])
async def test_a_reserved_domain_fails_with_the_validators_reason(project, dry_run):
    body = await run_import(project, [{"email": "grace@acme.test"}, {"email": "ada@example.com"}], dry_run=dry_run)

    refused, accepted = body["details"]
    assert (refused["outcome"], accepted["outcome"]) == ("failed", "inserted")
    error = refused["errors"][0]
    assert (error["name"], error["reason"]) == ("Invalid", "ValidationFailed")
    assert RESERVED in error["message"]
    assert error["info"]["causes"] == [
        {
            "location": "/email",
            "kind": "format",
            "details": {"error": f"invalid email address: {RESERVED} {SPECIAL_USE_HINT}", "format": "email"},
            "message": f"email must be an email address, e.g. ada@example.com. {RESERVED} {SPECIAL_USE_HINT}",
        }
    ]
