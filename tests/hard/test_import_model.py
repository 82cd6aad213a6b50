"""Random sequences of imports through the real API, job runner and database, checked against `model.py`.

Each example is a fresh project and 2-4 import requests (insert or upsert, any identifier) of 1-8 records whose
values come from small pools, so that records collide: case variants of one email or username, the same phone in
two users, a login id freed by one record and taken by the next, repeated identifiers in one request. After every
import the status body (outcome, user, warnings, redacted echo, error reason of each record) and the stored state of
every user the model knows (standard and custom attributes, login ids, verification, disabled, roles, groups, second
factors) must be what the model says.

Imports run with the default chunk size and with chunks of 2 records, which the runner (two in-process jobs at
once, or two arq workers) applies in parallel: DECISIONS 3 wants the index-order result however the work is cut.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import event, given, note
from hypothesis import strategies as st

from tests.hard import scaled
from tests.hard.model import Expected, ImportModel
from tests.helpers import HASH_2A, HASH_2B, IMPORT, TOTP_SECRET

IDENTIFIERS = ("email", "phone_number", "preferred_username")
ROLES = ("admin", "editor", "viewer")
GROUPS = ("g1", "g2")

# Pools: few values, so that records meet. Case variants normalize to one login id.
EMAILS = ("ada@example.com", "ADA@example.com", "Ada@Example.COM", "bob@example.com", "BOB@example.com", "cy@ex.org")
PHONES = ("+14155550123", "+447911123456", "+33612345678")
USERNAMES = ("ada", "Ada", "ADA", "bob", "Bob", "cy", "Åsa", "åsa")
# Values that DECISIONS 3 "Formats" refuses.
BAD_EMAILS = ("not-an-email", "ada@", "")
BAD_PHONES = ("14155550123", "+1 415 555 0123", "+1555")
BAD_USERNAMES = ("has space", "")


def _mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], odds: int = 40) -> st.SearchStrategy[Any]:
    """`good` (shrinks to it), now and then `bad`."""
    return st.integers(0, odds).flatmap(lambda n: bad if n == odds else good)


def _pool(values: tuple[Any, ...], bad: tuple[Any, ...] = (), null: bool = True) -> st.SearchStrategy[Any]:
    good = st.sampled_from((*values, None) if null else values)
    return _mostly(good, st.sampled_from(bad)) if bad else good


LOGIN_VALUES = {
    "email": _pool(EMAILS, BAD_EMAILS),
    "phone_number": _pool(PHONES, BAD_PHONES),
    "preferred_username": _pool(USERNAMES, BAD_USERNAMES),
}

IDENTIFIER_VALUES = {
    "email": _pool(EMAILS, BAD_EMAILS, null=False),
    "phone_number": _pool(PHONES, BAD_PHONES, null=False),
    "preferred_username": _pool(USERNAMES, BAD_USERNAMES, null=False),
}

PROFILE_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "name": _pool(("Ada Lovelace", "Bob", "Zoë 😀"), ("",)),
    "given_name": _pool(("Ada", "Bob")),
    "family_name": _pool(("Lovelace", "Byron")),
    "nickname": _pool(("A", "countess")),
    "gender": _pool(("female", "male", "other")),
    "birthdate": _pool(("1815-12-10", "--12-10", "1815", "0000-02-29"), ("2021-02-30", "10/12/1815")),
    "zoneinfo": _pool(("Europe/London", "Asia/Tokyo"), ("Mars/Olympus",)),
    "locale": _pool(("en", "fr-CA"), ("en_US",)),
    "website": _pool(("https://ada.example", "http://bob.example/x"), ("ftp://ada.example", "ada.example")),
}

ADDRESS = st.tuples(
    st.dictionaries(
        st.sampled_from(("formatted", "street_address", "locality", "region", "postal_code", "country")),
        st.sampled_from(("1 Main St", "London", "Paris", "GB", "FR", "75001")),
        min_size=1,
        max_size=3,
    ),
    st.sets(st.sampled_from(("region", "postal_code")), max_size=1),
).map(lambda pair: {**{member: None for member in pair[1]}, **pair[0]})  # a null member means "no such part"

CUSTOM = st.dictionaries(
    st.sampled_from(("tier", "score", "tags", "nested")),
    st.sampled_from(("gold", "silver", 7, 0, True, "", ["a"], {"x": [1, None]}, None)),
    max_size=3,
)


def _keys(allowed: tuple[str, ...], unknown: str) -> st.SearchStrategy[list[str]]:
    base = st.lists(st.sampled_from(allowed), max_size=3)
    return _mostly(base, base.map(lambda keys: [*keys, unknown]), odds=8)


PASSWORD = _mostly(
    st.sampled_from(({"type": "bcrypt", "password_hash": HASH_2B}, {"type": "bcrypt", "password_hash": HASH_2A})),
    st.sampled_from(
        (
            {"type": "bcrypt", "password_hash": "not a hash"},
            {"type": "bcrypt", "password_hash": "$2b$03$" + HASH_2B[7:]},
            {"type": "bcrypt", "password_hash": "$2b$15$" + HASH_2B[7:]},
            {"type": "sha3", "password_hash": HASH_2B},
        )
    ),
)
TOTP = _mostly(st.sampled_from(({"secret": TOTP_SECRET}, {"secret": "GEZDGNBVGY3TQOJQ"})), st.just({"secret": "abc!"}))

MFA = st.fixed_dictionaries(
    {},
    optional={
        "email": _pool(("m@example.com", "n@example.org"), ("nope",)),
        "phone_number": _pool(PHONES, ("123",)),
        "password": PASSWORD,
        "totp": TOTP,
    },
)

MEMBERS: dict[str, st.SearchStrategy[Any]] = {
    **LOGIN_VALUES,
    "email_verified": st.booleans(),
    "phone_number_verified": st.booleans(),
    **PROFILE_VALUES,
    "address": st.one_of(st.none(), ADDRESS),
    "custom_attributes": CUSTOM,
    "roles": _keys(ROLES, "ghost"),
    "groups": _keys(GROUPS, "nogroup"),
    "disabled": st.booleans(),
    "password": st.one_of(PASSWORD, st.none()),
    "mfa": MFA,
    "unknown_member": st.just("x"),  # forbid_unknown_fields: the record fails
}
# Members that go together: a scenario picks a few of these families, so that its records meet on the same members
# (a login id and its verification flag, an address set then replaced, a second factor added then removed).
FAMILIES = (
    ("email", "email_verified"),
    ("phone_number", "phone_number_verified"),
    ("preferred_username",),
    ("name", "given_name", "family_name", "nickname"),
    ("gender", "birthdate", "zoneinfo", "locale", "website"),
    ("address",),
    ("custom_attributes",),
    ("roles", "groups"),
    ("disabled",),
    ("password", "mfa"),
)


@st.composite
def records(draw: st.DrawFn, identifier: str, members: tuple[str, ...], full: bool) -> dict[str, Any]:
    names = list(members) if full else draw(st.lists(st.sampled_from(members), max_size=len(members), unique=True))
    if draw(st.integers(0, 30)) == 0:
        names.append("unknown_member")
    record = {name: draw(MEMBERS[name]) for name in names}
    if draw(st.integers(0, 30)) == 0:  # now and then the identifier is missing or null (the record fails)
        record.update(draw(st.sampled_from(({}, {identifier: None}))))
    else:
        record[identifier] = draw(IDENTIFIER_VALUES[identifier])
    return record


@st.composite
def import_requests(draw: st.DrawFn, members: tuple[str, ...], usual: str, first: bool = False) -> dict[str, Any]:
    identifier = usual if first else draw(_mostly(st.just(usual), st.sampled_from(IDENTIFIERS), odds=4))
    batch = draw(st.lists(records(identifier, members, full=first), min_size=1, max_size=8))
    if len(batch) < 8 and draw(st.booleans()):  # the same record twice in one request
        batch.insert(draw(st.integers(0, len(batch))), dict(draw(st.sampled_from(batch))))
    return {"identifier": identifier, "upsert": draw(st.sampled_from((True, False, True))), "records": batch}


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """A chunk size and 2-4 imports on a few member families, mostly upserts on one identifier.

    The first import gives every member of those families, so that the later ones, which give some of them, change
    values that are there (an address replaced by a smaller one, a verified email changed, a factor removed).
    """
    families = draw(st.lists(st.sampled_from(FAMILIES), min_size=1, max_size=4, unique=True))
    members = tuple(member for family in families for member in family)
    usual = draw(st.sampled_from(IDENTIFIERS))
    first = draw(import_requests(members, usual, first=True))
    later = draw(st.lists(import_requests(members, usual), min_size=1, max_size=3))
    return {"chunk_size": draw(st.sampled_from((250, 2))), "imports": [first, *later]}


@pytest.fixture
def envs(backend, make_env):
    """One deployment per chunk size, made on first use and shared by the examples of a test."""
    made: dict[int, Any] = {}

    async def get(chunk_size: int) -> Any:
        if chunk_size not in made:
            made[chunk_size] = await make_env(backend, imports={"chunk_size": chunk_size})
        return made[chunk_size]

    return get


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


async def stored_users(project) -> dict[str, dict[str, Any]]:
    """Every user of the project as the database holds it."""
    users: dict[str, dict[str, Any]] = {}
    for row in await project.fetch(
        "SELECT id, is_disabled, standard_attributes, custom_attributes FROM userio_user WHERE project_id = $1",
        project.id,
    ):
        users[row["id"]] = {
            "standard": _json(row["standard_attributes"]),
            "custom": _json(row["custom_attributes"]),
            "disabled": bool(row["is_disabled"]),
            "identities": {},
            "authenticators": [],
            "roles": set(),
            "groups": set(),
        }
    for row in await project.fetch(
        "SELECT user_id, login_id_key, original_value FROM userio_identity WHERE project_id = $1", project.id
    ):
        users[row["user_id"]]["identities"][row["login_id_key"]] = row["original_value"]
    for row in await project.fetch(
        "SELECT user_id, kind, type, COALESCE(oob_target, password_hash, totp_secret) AS value"
        " FROM userio_authenticator WHERE project_id = $1",
        project.id,
    ):
        users[row["user_id"]]["authenticators"].append((row["kind"], row["type"], row["value"]))
    for kind in ("role", "group"):
        for row in await project.fetch(
            f"SELECT m.user_id, k.key FROM userio_user_{kind} m JOIN userio_{kind} k ON k.id = m.{kind}_id"
            " WHERE k.project_id = $1",
            project.id,
        ):
            users[row["user_id"]][f"{kind}s"].add(row["key"])
    for user in users.values():
        user["authenticators"].sort()
    return users


async def run(project, request: dict[str, Any]) -> dict[str, Any]:
    response = await project.post(IMPORT, request)
    assert response.status_code == 202, response.text
    await project.env.drain(workers=2)  # two arq workers; the in-process runner ignores the count
    status = await project.get(response.headers["location"])
    assert status.status_code == 200, status.text
    body = status.json()
    assert body["status"] == "completed", body
    return body


def check_detail(where: str, detail: dict[str, Any], expected: Expected) -> None:
    assert detail["outcome"] == expected.outcome, (where, detail, expected)
    assert detail["record"] == expected.echo, (where, detail)
    if expected.outcome == "failed":
        assert "user_id" not in detail, (where, detail)
        assert len(detail["errors"]) == 1, (where, detail)  # DECISIONS 3: one error object naming what went wrong
        assert detail["errors"][0]["reason"] in expected.reasons, (where, detail, expected)
        return
    assert "errors" not in detail, (where, detail)
    if expected.user_id is not None:
        assert detail["user_id"] == expected.user_id, (where, detail, expected)
    warnings = sorted(w["message"] for w in detail.get("warnings", []))
    assert warnings == sorted(expected.warnings), (where, detail, expected)


# An async test under @given: pytest-asyncio runs each example's coroutine on the session loop (see tests/hard).
@scaled(3.0)
@given(scenario=scenarios())
async def test_import_sequences_match_the_reference_model(envs, scenario):
    note(f"scenario = {scenario!r}")  # this Hypothesis prints blank values in "Failing test case"
    env = await envs(scenario["chunk_size"])
    project = await env.make_project(roles=ROLES)
    await env.services.projects.add_keys(project.id, "userio_group", GROUPS)
    model = ImportModel(set(ROLES), set(GROUPS))

    for number, request in enumerate(scenario["imports"]):
        body = await run(project, request)
        details = body["details"]
        assert [d["index"] for d in details] == list(range(len(request["records"])))
        for index, (record, detail) in enumerate(zip(request["records"], details, strict=True)):
            expected = model.apply(record, request["identifier"], request["upsert"], detail.get("user_id"))
            check_detail(f"import {number}, record {index}", detail, expected)
            event(f"outcome {expected.outcome}" + (f" {sorted(expected.reasons)}" if expected.reasons else ""))
        counts = {o: sum(d["outcome"] == o for d in details) for o in ("inserted", "updated", "skipped", "failed")}
        assert body["summary"] == {"total": len(details), **counts}

        stored = await stored_users(project)
        assert set(stored) == set(model.users), f"after import {number}: users differ"
        for user_id, user in model.users.items():
            actual = stored[user_id]
            where = f"after import {number}, user {user_id}"
            assert actual["standard"] == user.standard_attributes(), where
            assert actual["custom"] == user.custom, where
            assert actual["identities"] == user.identities(), where
            assert actual["disabled"] is user.disabled, where
            assert actual["roles"] == user.roles, where
            assert actual["groups"] == user.groups, where
            assert actual["authenticators"] == user.authenticators(), where
