"""`sub` in an import record (DECISIONS 11): the user keeps the id it had in the old system.

Any UUID, or 1-128 of `A-Za-z0-9._:|@-` starting with a letter or digit, not `import`/`export`; unique in the
deployment, so a taken one fails the record `Invalid/DuplicatedUserID` with one message whichever project holds it.
"""

from __future__ import annotations

import json
import uuid

import pytest

from tests.exports.helpers import exported_bytes
from tests.helpers import import_one, run_import

pytestmark = pytest.mark.engine

LONGEST = "a" + "b" * 127


def fresh(prefix: str = "legacy") -> str:
    """A sub no other test used: ids are unique in the whole (session-wide) database."""
    return f"{prefix}-{uuid.uuid4().hex}"


@pytest.mark.parametrize("shape", ["pipe", "uuid", "longest"])
async def test_the_user_keeps_its_sub_and_the_export_round_trips_it(project, shape):
    sub = {"pipe": f"auth0|{uuid.uuid4().hex}", "uuid": str(uuid.uuid4()).upper(), "longest": fresh("a" * 95)}[shape]
    assert len(sub) <= 128
    detail = await import_one(project, {"email": "ada@example.com", "sub": sub})

    assert (detail["outcome"], detail["user_id"]) == ("inserted", sub)
    [line] = (await exported_bytes(project, {"format": "ndjson"})).decode().splitlines()
    assert json.loads(line)["sub"] == sub
    rows = await project.fetch("SELECT user_id FROM userio_identity WHERE project_id = $1", project.id)
    assert [r["user_id"] for r in rows] == [sub]


@pytest.mark.parametrize("sub", ["import", "export", "-leading", "", "with space", LONGEST + "c", "é"])
async def test_a_sub_outside_the_grammar_fails_the_record_at_sub(project, sub):
    detail = await import_one(project, {"email": "ada@example.com", "sub": sub})

    assert detail["outcome"] == "failed"
    error = detail["errors"][0]
    assert (error["reason"], error["info"]["causes"][0]["location"]) == ("ValidationFailed", "/sub")


async def test_a_taken_sub_fails_with_one_message_whichever_project_holds_it(env):
    first, second = await env.make_project(), await env.make_project()
    sub = fresh()
    await import_one(first, {"email": "ada@example.com", "sub": sub})

    same = await import_one(first, {"email": "bob@example.com", "sub": sub})
    other = await import_one(second, {"email": "bob@example.com", "sub": sub})

    for detail in (same, other):
        assert detail["outcome"] == "failed"
        assert (detail["errors"][0]["name"], detail["errors"][0]["reason"]) == ("Invalid", "DuplicatedUserID")
    assert same["errors"] == other["errors"]
    assert await second.fetch("SELECT id FROM userio_user WHERE project_id = $1", second.id) == []


async def test_a_later_record_with_the_same_sub_fails_alone(project):
    sub = fresh()
    body = await run_import(project, [{"email": "a@example.com", "sub": sub}, {"email": "b@example.com", "sub": sub}])

    assert [d["outcome"] for d in body["details"]] == ["inserted", "failed"]
    assert body["details"][1]["errors"][0]["reason"] == "DuplicatedUserID"


async def test_an_upsert_keeps_the_id_and_refuses_another(project):
    sub = fresh()
    await import_one(project, {"email": "ada@example.com", "sub": sub})

    same = await import_one(project, {"email": "ada@example.com", "sub": sub, "name": "Ada"}, upsert=True)
    other = await import_one(project, {"email": "ada@example.com", "sub": fresh()}, upsert=True)

    assert (same["outcome"], same["user_id"]) == ("updated", sub)
    assert other["outcome"] == "failed"
    assert other["errors"][0]["info"]["causes"][0]["location"] == "/sub"
