"""Hostile values inside otherwise good import requests: nothing wedges, no 5xx, good records applied once (issue 9.1).

Each example is one request: good records (unique emails) and hostile records carrying generated values that some
layer may refuse: numbers out of every range, NaN-like literals, U+0000, lone-surrogate escapes, very long strings,
deep nesting inside the body limit, odd Unicode in member names. The value goes, as JSON text, into a standard
attribute, a custom attribute (value or name, nested or not), an address member, or the login id itself.

What must hold, on SQLite in-process and on PostgreSQL through arq:
- a body our JSON decoder refuses as a whole (a NaN or Infinity literal, a lone surrogate) is a 400 in the import
  envelope, and stores nothing;
- otherwise the request is 202, the task completes, every good record is `inserted` and stored exactly once, and a
  hostile record is either `inserted` (the value is storable) or `failed` with `Invalid/ValidationFailed` whose
  causes name a location;
- no answer is a 5xx.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import event, given, note
from hypothesis import strategies as st

from tests.conftest import Project
from tests.hard import scaled
from tests.helpers import IMPORT

pytestmark = pytest.mark.engine

NUMBERS = (
    st.sampled_from(
        [
            "1e999",
            "-1e999",
            "1E400",
            "1e-999",
            "-0",
            "0." + "0" * 400 + "1",
            "9" * 5000,
            "-" + "9" * 400,
            "1e308",
            "4.9e-324",
            "18446744073709551616",
        ]
    )
    | st.integers().map(str)
    | st.floats(allow_nan=False, allow_infinity=False).map(json.dumps)
)
NAN_LIKE = st.sampled_from(["NaN", "Infinity", "-Infinity", '"NaN"', '"Infinity"', '"-0"', '"1e999"'])
NUL = st.sampled_from(['"\\u0000"', '"a\\u0000b"', '"\\u0000\\u0000"', '"x@example.com\\u0000"'])
SURROGATES = st.sampled_from(['"\\ud800"', '"a\\udfffb"', '"\\udbff\\u0041"'])
ODD_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
STRINGS = ODD_TEXT.map(json.dumps) | ODD_TEXT.map(lambda t: json.dumps(t, ensure_ascii=False))
LONG = st.integers(1_000, 60_000).map(lambda n: json.dumps("x" * n))
DEEP = st.integers(1, 58).map(lambda d: "[" * d + "1" + "]" * d)
VALUES = st.one_of(NUMBERS, NAN_LIKE, NUL, SURROGATES, STRINGS, LONG, DEEP)
KEYS = st.one_of(
    ODD_TEXT.map(json.dumps), st.sampled_from(['""', '"/~"', '"a\\u0000"', '"\\ud800"', '"\\u202e\\ufeff"'])
)
PLACES = st.sampled_from(["name", "custom value", "custom key", "nested custom", "address", "email"])


def hostile_record(email: str, place: str, key: str, value: str) -> bytes:
    """A good record with `value` (JSON text) put at `place`."""
    members = {
        "name": f'"name":{value}',
        "custom value": f'"custom_attributes":{{"k":{value}}}',
        "custom key": f'"custom_attributes":{{{key}:{value}}}',
        "nested custom": f'"custom_attributes":{{"outer":{{{key}:[{value}]}}}}',
        "address": f'"address":{{"locality":{value}}}',
        "email": f'"name":"Hostile","custom_attributes":{{"n":{value}}}',
    }
    login = f'"email":{value}' if place == "email" else f'"email":{json.dumps(email)}'
    return f"{{{login},{members[place]}}}".encode()


@st.composite
def requests(draw: Any) -> dict[str, Any]:
    goods = draw(st.integers(1, 4))
    hostiles = draw(st.lists(st.tuples(PLACES, KEYS, VALUES), min_size=1, max_size=3))
    records: list[tuple[str, bytes]] = [
        (f"good{i}@example.com", json.dumps({"email": f"good{i}@example.com", "name": "Good"}).encode())
        for i in range(goods)
    ]
    for j, (place, key, value) in enumerate(hostiles):
        email = f"hostile{j}@example.com"
        records.insert(
            draw(st.integers(0, len(records))),
            ("" if place == "email" else email, hostile_record(email, place, key, value)),
        )
    return {"records": records, "upsert": draw(st.booleans())}


async def post(project: Project, body: bytes) -> Any:
    return await project.env.client.post(
        IMPORT, content=body, headers={**project.headers(), "Content-Type": "application/json"}
    )


# An async test under @given: pytest-asyncio runs each example's coroutine on the session loop (see tests/hard).
@scaled(0.2)
@given(request=requests())
async def test_hostile_values_never_wedge_an_import_nor_touch_good_records(env, request):
    project = await env.make_project()
    raws = [raw for _, raw in request["records"]]
    body = b'{"identifier":"email","upsert":' + json.dumps(request["upsert"]).encode()
    body += b',"records":[' + b",".join(raws) + b"]}"
    note(body[:2000].decode("utf-8", "replace"))
    assert len(body) < 500_000

    response = await post(project, body)

    if not json_for_msgspec(body):
        event("refused as a whole")
        assert response.status_code == 400, response.text
        assert isinstance(response.json()["error"], str)
        return
    assert response.status_code == 202, response.text
    await project.env.drain()
    status = await project.get(response.headers["location"])
    assert status.status_code == 200, status.text
    result = status.json()
    assert result["status"] == "completed", result

    good = {email for email, raw in request["records"] if email.startswith("good")}
    for (email, _), detail in zip(request["records"], result["details"], strict=True):
        if email in good:
            assert detail["outcome"] == "inserted", detail
            continue
        event(f"hostile record {detail['outcome']}")
        assert detail["outcome"] in {"inserted", "failed"}, detail
        if detail["outcome"] == "failed":
            (error,) = detail["errors"]
            assert (error["name"], error["reason"]) == ("Invalid", "ValidationFailed"), error
            assert error["info"]["causes"] and all("location" in cause for cause in error["info"]["causes"]), error
    rows = await project.fetch(
        "SELECT normalized_value FROM userio_identity WHERE project_id = $1 AND login_id_key = 'email'", project.id
    )
    stored = [row["normalized_value"] for row in rows]
    assert sorted(e for e in stored if e in good) == sorted(good), "every good record stored exactly once"


def json_for_msgspec(body: bytes) -> bool:
    """Whether msgspec (the server's decoder) reads the body as JSON at all."""
    try:
        msgspec.json.decode(body, type=list[msgspec.Raw] | dict[str, msgspec.Raw])
    except msgspec.DecodeError:
        return False
    return True
