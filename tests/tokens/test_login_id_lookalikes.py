"""Issue 29: login ids a person can type. Usernames and emails with a default-ignorable or format character (zero
width space and joiners, soft hyphen, word joiner, byte order mark, bidi controls, variation selectors...) fail
their record with a cause naming the character; a login id stored before this rule still signs in."""

from __future__ import annotations

import sys

import pytest

from tests.helpers import HASH_2B, PASSWORD, import_one, run_import
from userio_core.attribute_formats import invisible_character, is_email, is_username

INVISIBLE = ["\u200b", "\u200d", "\u00ad", "\u2060", "\ufeff", "\u202e", "\u061c", "\u034f", "\ufe0f", "\U000e0041"]


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_usernames_and_emails_refuse_invisible_characters(char: str) -> None:
    assert not is_username(f"ali{char}ce")
    assert not is_email(f"ali{char}ce@example.com")
    assert is_username("Zo\u00eb_\u65e5\u672c") and is_email("zo\u00eb@b\u00fccher.de")


def test_every_default_ignorable_code_point_is_refused() -> None:
    regex = pytest.importorskip("regex")
    ignorable = regex.compile(r"\p{Default_Ignorable_Code_Point}")
    missed = [
        f"U+{c:04X}"
        for c in range(sys.maxunicode + 1)
        if ignorable.match(chr(c)) and invisible_character(f"a{chr(c)}") is None
    ]
    assert missed == []


async def test_a_lookalike_username_fails_its_record_with_the_character_named(world):
    project = world.project
    body = await run_import(
        project,
        [
            {"preferred_username": "alice"},
            {"preferred_username": "ali\u200bce"},
            {"preferred_username": "bob", "email": "b\u2060ob@example.com"},
            {"preferred_username": "carol", "phone_number": "+1415555\u200d0123"},
        ],
        identifier="preferred_username",
    )

    outcomes = [d["outcome"] for d in body["details"]]
    assert outcomes == ["inserted", "failed", "failed", "failed"]
    causes = [d["errors"][0]["info"]["causes"][0] for d in body["details"][1:]]
    assert [c["location"] for c in causes] == ["/preferred_username", "/email", "/phone_number"]
    assert causes[0]["details"]["error"] == "contains U+200B ZERO WIDTH SPACE, a character that cannot be seen or typed"
    assert "invisible (default-ignorable)" in causes[0]["message"]
    assert causes[1]["details"]["error"].startswith("contains U+2060 WORD JOINER")
    rows = await project.fetch(
        "SELECT original_value FROM userio_identity WHERE login_id_key = 'username' AND project_id = $1", project.id
    )
    assert sorted(r["original_value"] for r in rows) == ["alice"]


async def test_a_login_id_stored_before_the_rule_still_signs_in(world):
    detail = await import_one(
        world.project,
        {"preferred_username": "dave", "password": {"type": "bcrypt", "password_hash": HASH_2B}},
        identifier="preferred_username",
    )
    stored = "da\u200bve"  # as an import before issue 29 stored it, and migration 2026-12-01T02 keyed it
    async with world.env.services.db.transaction() as tx:
        await tx.execute(
            "UPDATE userio_identity SET original_value = $1, normalized_value = $1, unique_key = $1 WHERE user_id = $2",
            stored,
            detail["user_id"],
        )

    signed_in = await world.sign_in(username=stored, password=PASSWORD)
    lookalike = await world.sign_in(username="dave", password=PASSWORD)

    assert signed_in.status_code == 200, signed_in.text
    assert lookalike.status_code == 400  # the two never were the same login id
