"""SPEC 2.4, one row at a time: how an upsert changes an existing user."""

from __future__ import annotations

import pytest

from litestar_userio.projects.settings import ProjectSettings
from tests.helpers import HASH_2B, TOTP_SECRET, authenticators, identities, import_one, memberships, user_row

pytestmark = pytest.mark.engine

BASE = {
    "preferred_username": "ada",
    "email": "ada@example.com",
    "phone_number": "+14155550123",
    "name": "Ada Lovelace",
    "given_name": "Ada",
    "address": {"street_address": "1 Main St", "locality": "London", "country": "GB"},
    "custom_attributes": {"tier": "gold", "score": 7, "tags": ["a"]},
}


async def seed(project, record=None, identifier="preferred_username"):
    detail = await import_one(project, record or BASE, identifier=identifier)
    assert detail["outcome"] == "inserted", detail
    return detail["user_id"]


async def upsert(project, record, identifier="preferred_username"):
    detail = await import_one(project, {identifier: BASE[identifier], **record}, identifier=identifier, upsert=True)
    assert detail["outcome"] == "updated", detail
    return detail


# Row: preferred_username, email, phone_number (when not the identifier).


@pytest.mark.parametrize(
    ("attribute", "key", "value"), [("email", "email", "new@example.com"), ("phone_number", "phone", "+447911123456")]
)
async def test_login_id_present_replaces_the_login_id(project, attribute, key, value):
    user_id = await seed(project)

    await upsert(project, {attribute: value})

    assert (await identities(project, user_id))[key] == value
    assert (await user_row(project, user_id))["standard"][attribute] == value


async def test_login_id_null_removes_the_login_id(project):
    user_id = await seed(project)

    await upsert(project, {"email": None, "phone_number": None})

    assert await identities(project, user_id) == {"username": "ada"}
    standard = (await user_row(project, user_id))["standard"]
    assert "email" not in standard and "phone_number" not in standard


async def test_login_id_absent_changes_nothing(project):
    user_id = await seed(project)

    await upsert(project, {"name": "A."})

    assert await identities(project, user_id) == {
        "username": "ada",
        "email": "ada@example.com",
        "phone": "+14155550123",
    }


async def test_login_id_is_created_when_the_user_had_none(project):
    user_id = await seed(project, {"preferred_username": "ada"})

    await upsert(project, {"email": "ada@example.com"})

    assert await identities(project, user_id) == {"username": "ada", "email": "ada@example.com"}


async def test_username_changes_when_the_identifier_is_email(project):
    user_id = await seed(project, identifier="email")

    await upsert(project, {"preferred_username": "countess"}, identifier="email")

    assert (await identities(project, user_id))["username"] == "countess"


async def test_identifier_itself_is_not_changed(project):
    user_id = await seed(project, identifier="email")

    await upsert(project, {"email": "ADA@EXAMPLE.COM"}, identifier="email")

    assert (await identities(project, user_id))["email"] == "ada@example.com"


async def test_freed_login_id_can_be_taken_by_a_later_record(project):
    """Index order: record 0 frees the email, record 1 takes it for a new user."""
    from tests.helpers import run_import

    await seed(project)
    body = await run_import(
        project,
        [{"preferred_username": "ada", "email": None}, {"preferred_username": "bob", "email": "ada@example.com"}],
        identifier="preferred_username",
        upsert=True,
    )

    assert [d["outcome"] for d in body["details"]] == ["updated", "inserted"]
    assert (await identities(project, body["details"][1]["user_id"]))["email"] == "ada@example.com"


# Row: email_verified, phone_number_verified.


async def test_first_import_without_email_verified_leaves_email_unverified(project):
    user_id = await seed(project)

    assert (await user_row(project, user_id))["standard"]["email_verified"] is False


async def test_verified_flag_present_replaces_the_state(project):
    user_id = await seed(project, {**BASE, "email_verified": True})

    await upsert(
        project,
        {
            "email": "ada@example.com",
            "email_verified": False,
            "phone_number": "+14155550123",
            "phone_number_verified": True,
        },
    )

    standard = (await user_row(project, user_id))["standard"]
    assert (standard["email_verified"], standard["phone_number_verified"]) == (False, True)


async def test_verified_flag_absent_leaves_the_state(project):
    user_id = await seed(project, {**BASE, "email_verified": True})

    await upsert(project, {"email": "ada@example.com", "name": "x"})

    assert (await user_row(project, user_id))["standard"]["email_verified"] is True


async def test_a_new_email_without_flag_is_unverified(project):
    user_id = await seed(project, {**BASE, "email_verified": True})

    await upsert(project, {"email": "other@example.com"})

    assert (await user_row(project, user_id))["standard"]["email_verified"] is False


# Row: all other standard attributes; address replaced whole.


async def test_standard_attribute_present_null_absent(project):
    user_id = await seed(project)

    await upsert(project, {"name": "Countess", "given_name": None, "nickname": "A"})

    standard = (await user_row(project, user_id))["standard"]
    assert standard["name"] == "Countess"
    assert "given_name" not in standard
    assert standard["nickname"] == "A"
    assert standard["address"] == BASE["address"]


async def test_address_is_replaced_whole_not_merged(project):
    user_id = await seed(project)

    await upsert(project, {"address": {"locality": "Paris"}})

    assert (await user_row(project, user_id))["standard"]["address"] == {"locality": "Paris"}


async def test_address_null_removes_it(project):
    user_id = await seed(project)

    await upsert(project, {"address": None})

    assert "address" not in (await user_row(project, user_id))["standard"]


# Row: custom_attributes.*, each on its own.


async def test_custom_attributes_each_on_its_own(project):
    user_id = await seed(project)

    await upsert(project, {"custom_attributes": {"tier": "silver", "score": None, "new": {"x": [1, None]}}})

    assert (await user_row(project, user_id))["custom"] == {"tier": "silver", "tags": ["a"], "new": {"x": [1, None]}}


async def test_custom_attributes_absent_changes_nothing(project):
    user_id = await seed(project)

    await upsert(project, {"name": "x"})

    assert (await user_row(project, user_id))["custom"] == BASE["custom_attributes"]


# Row: roles, groups.


async def test_roles_and_groups_become_exactly_the_list(env):
    project = await env.make_project(
        ProjectSettings(create_unknown_roles_on_import=True, create_unknown_groups_on_import=True)
    )
    user_id = await seed(project, {**BASE, "roles": ["a", "b"], "groups": ["g1"]})

    await upsert(project, {"roles": ["b", "c"], "groups": []})

    assert await memberships(project, user_id, "role") == {"b", "c"}
    assert await memberships(project, user_id, "group") == set()


async def test_roles_absent_changes_nothing(env):
    project = await env.make_project(ProjectSettings(create_unknown_roles_on_import=True))
    user_id = await seed(project, {**BASE, "roles": ["a"]})

    await upsert(project, {"name": "x"})

    assert await memberships(project, user_id, "role") == {"a"}


# Row: disabled.


async def test_disabled_present_replaces_absent_keeps(project):
    user_id = await seed(project, {**BASE, "disabled": True})

    await upsert(project, {"name": "x"})
    assert (await user_row(project, user_id))["disabled"] is True

    await upsert(project, {"disabled": False})
    assert (await user_row(project, user_id))["disabled"] is False


# Rows: password, mfa.password, mfa.totp: IGNORED.


async def test_password_cannot_be_added_later(project):
    user_id = await seed(project)

    await upsert(project, {"password": {"type": "bcrypt", "password_hash": HASH_2B}})

    assert await authenticators(project, user_id) == []


async def test_mfa_password_and_totp_are_ignored_on_update(project):
    user_id = await seed(project, {**BASE, "mfa": {"totp": {"secret": TOTP_SECRET}}})

    await upsert(
        project,
        {"mfa": {"totp": {"secret": "GEZDGNBVGY3TQOJQ"}, "password": {"type": "bcrypt", "password_hash": HASH_2B}}},
    )

    assert await authenticators(project, user_id) == [("secondary", "totp", TOTP_SECRET)]


async def test_existing_password_is_kept_on_update(project):
    user_id = await seed(project, {**BASE, "password": {"type": "bcrypt", "password_hash": HASH_2B}})

    await upsert(project, {"password": {"type": "bcrypt", "password_hash": "$2b$04$" + "b" * 53}})

    assert await authenticators(project, user_id) == [("primary", "password", HASH_2B)]


# Rows: mfa.email, mfa.phone_number.


@pytest.mark.parametrize(
    ("member", "type_", "old", "new"),
    [
        ("email", "oob_otp_email", "m@example.com", "n@example.com"),
        ("phone_number", "oob_otp_sms", "+14155550123", "+447911123456"),
    ],
)
async def test_mfa_oob_present_replaces_null_removes_absent_keeps(project, member, type_, old, new):
    user_id = await seed(project, {**BASE, "mfa": {member: old}})

    await upsert(project, {"mfa": {}})
    assert await authenticators(project, user_id) == [("secondary", type_, old)]

    await upsert(project, {"mfa": {member: new}})
    assert await authenticators(project, user_id) == [("secondary", type_, new)]

    await upsert(project, {"mfa": {member: None}})
    assert await authenticators(project, user_id) == []


async def test_mfa_oob_can_be_added_on_update(project):
    user_id = await seed(project)

    await upsert(project, {"mfa": {"email": "m@example.com"}})

    assert await authenticators(project, user_id) == [("secondary", "oob_otp_email", "m@example.com")]
