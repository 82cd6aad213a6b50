"""A record holding what some layer refuses fails alone; its neighbours are applied and the task completes (issue 9.1).

The bodies are written as bytes: `1e999` and `\\u0000` are what a real export from another system may contain, and
no JSON library writes the first one.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import Project
from tests.helpers import IMPORT

pytestmark = pytest.mark.engine


async def post_raw(project: Project, records: list[bytes], **options: object) -> dict:
    """POST records given as JSON texts, run the jobs, return the completed status."""
    body = b'{"identifier":"email","records":[' + b",".join(records) + b"]"
    for key, value in options.items():
        body += b"," + json.dumps(key).encode() + b":" + json.dumps(value).encode()
    body += b"}"
    response = await project.env.client.post(
        IMPORT, content=body, headers={**project.headers(), "Content-Type": "application/json"}
    )
    assert response.status_code == 202, response.text
    await project.env.drain()
    status = await project.get(response.headers["location"])
    assert status.status_code == 200, status.text
    assert status.json()["status"] == "completed", status.json()
    return status.json()


def good(email: str) -> bytes:
    return json.dumps({"email": email, "name": "Good"}).encode()


def causes(detail: dict) -> list[tuple[str, str]]:
    assert detail["outcome"] == "failed", detail
    (error,) = detail["errors"]
    assert (error["name"], error["reason"]) == ("Invalid", "ValidationFailed"), error
    return [(cause["location"], cause["details"].get("message", "")) for cause in error["info"]["causes"]]


async def stored_emails(project: Project) -> list[str]:
    rows = await project.fetch(
        "SELECT normalized_value FROM userio_identity WHERE project_id = $1 AND login_id_key = 'email'", project.id
    )
    return sorted(row["normalized_value"] for row in rows)


async def test_a_number_out_of_range_fails_its_record_alone(project):
    body = await post_raw(
        project,
        [good("a@example.com"), b'{"email":"b@example.com","custom_attributes":{"n":1e999}}', good("c@example.com")],
    )

    outcomes = [d["outcome"] for d in body["details"]]
    assert outcomes == ["inserted", "failed", "inserted"]
    assert causes(body["details"][1]) == [("/custom_attributes/n", "Number out of range")]
    assert body["details"][1]["record"] == {"email": "b@example.com", "custom_attributes": {"n": "1e999"}}
    assert await stored_emails(project) == ["a@example.com", "c@example.com"]


@pytest.mark.parametrize(
    "literal",
    [
        b"9" * 250 + b"e99",  # a two-digit exponent on a long mantissa
        b"1" * 320 + b".5",  # an integer part beyond the float range, no exponent
        b"0." + b"0" * 400 + b"1e999",
        b"1E+3080",
    ],
    ids=["long-mantissa", "long-integer-float", "long-fraction", "upper-e"],
)
async def test_every_literal_beyond_the_float_range_fails_its_record_alone(project, literal):
    record = b'{"email":"b@example.com","custom_attributes":{"n":' + literal + b"}}"
    body = await post_raw(project, [record, good("c@example.com")])

    assert causes(body["details"][0]) == [("/custom_attributes/n", "Number out of range")]
    assert body["details"][1]["outcome"] == "inserted"


async def test_an_integer_longer_than_python_converts_fails_its_record_alone(project):
    huge = b"9" * 5000
    body = await post_raw(project, [b'{"email":"b@example.com","custom_attributes":{"n":' + huge + b"}}"])

    assert causes(body["details"][0]) == [("/custom_attributes/n", "Number out of range")]


@pytest.mark.parametrize(
    ("record", "location"),
    [
        (b'{"email":"b@example.com","name":"Ada\\u0000Lovelace"}', "/name"),
        (b'{"email":"b@example.com","custom_attributes":{"plan":"pro\\u0000"}}', "/custom_attributes/plan"),
        (b'{"email":"b@example.com","custom_attributes":{"a\\u0000b":1}}', "/custom_attributes/a\x00b"),
        (b'{"email":"b@example.com","address":{"locality":"\\u0000"}}', "/address/locality"),
    ],
)
async def test_nul_in_any_string_fails_its_record_alone_naming_where(project, record, location):
    body = await post_raw(project, [good("a@example.com"), record, good("c@example.com")])

    assert [d["outcome"] for d in body["details"]] == ["inserted", "failed", "inserted"]
    assert [where for where, _ in causes(body["details"][1])] == [location]
    assert await stored_emails(project) == ["a@example.com", "c@example.com"]


async def test_nul_in_a_login_id_is_accepted_and_fails_only_its_record(project):
    body = await post_raw(
        project,
        [
            good("a@example.com"),
            b'{"email":"b\\u0000@example.com"}',
            b'{"email":"c@example.com","phone_number":"+1\\u0000"}',
        ],
    )

    assert body["details"][0]["outcome"] == "inserted"
    assert [where for where, _ in causes(body["details"][1])] == ["/email"]
    assert [where for where, _ in causes(body["details"][2])] == ["/phone_number"]
    assert await stored_emails(project) == ["a@example.com"]


async def test_a_chunk_started_too_often_reports_even_an_undecodable_record_failed(backend, make_env):
    env = await make_env(backend, queue={"max_attempts": 0})
    project = await env.make_project()

    body = await post_raw(project, [good("a@example.com"), b'{"email":"b@example.com","x":-1e999}'])

    assert [d["outcome"] for d in body["details"]] == ["failed", "failed"]
    assert body["details"][1]["record"] == {"email": "b@example.com", "x": "-1e999"}
    assert body["details"][1]["errors"][0]["name"] == "InternalError"
    assert await stored_emails(project) == []


REFUSED_NAME = "refused by the database"


async def refusing_trigger(project: Project) -> str:
    """A check the database enforces and the plugin does not know of: users of this project named REFUSED_NAME."""
    name = f"refuse_{project.id}"
    async with project.env.services.db.transaction() as tx:
        if tx.dialect == "postgres":
            await tx.execute(
                f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                f" IF NEW.project_id = '{project.id}' AND NEW.standard_attributes->>'name' = '{REFUSED_NAME}'"
                " THEN RAISE EXCEPTION 'refused by a check of the operator'; END IF; RETURN NEW; END $$"
            )
            await tx.execute(
                f"CREATE TRIGGER {name} BEFORE INSERT ON userio_user FOR EACH ROW EXECUTE FUNCTION {name}()"
            )
        else:
            await tx.execute(
                f"CREATE TRIGGER {name} BEFORE INSERT ON userio_user WHEN NEW.project_id = '{project.id}'"
                f" AND json_extract(NEW.standard_attributes, '$.name') = '{REFUSED_NAME}'"
                " BEGIN SELECT RAISE(ABORT, 'refused by a check of the operator'); END"
            )
    return name


async def drop_trigger(project: Project, name: str) -> None:
    async with project.env.services.db.transaction() as tx:
        if tx.dialect == "postgres":
            await tx.execute(f"DROP TRIGGER {name} ON userio_user")
            await tx.execute(f"DROP FUNCTION {name}()")
        else:
            await tx.execute(f"DROP TRIGGER {name}")


async def test_a_record_the_database_refuses_for_an_unforeseen_reason_fails_alone(project):
    trigger = await refusing_trigger(project)
    try:
        body = await post_raw(
            project,
            [
                good("a@example.com"),
                json.dumps({"email": "b@example.com", "name": REFUSED_NAME}).encode(),
                good("c@example.com"),
                good("a@example.com"),
            ],
        )
    finally:
        await drop_trigger(project, trigger)

    assert [d["outcome"] for d in body["details"]] == ["inserted", "failed", "inserted", "skipped"]
    assert causes(body["details"][1]) == [("", "a value of this record was refused while it was applied")]
    assert body["details"][3]["user_id"] == body["details"][0]["user_id"], "later records see the earlier ones"
    assert body["summary"] == {"total": 4, "inserted": 2, "updated": 0, "skipped": 1, "failed": 1}
    assert await stored_emails(project) == ["a@example.com", "c@example.com"]
