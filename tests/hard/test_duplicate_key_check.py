"""The duplicate-key check agrees with a parser that sees every pair, on generated JSON texts (DECISIONS 10)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from litestar_userio.web.imports import parse_import_request
from litestar_userio.web.jsonbody import find_duplicate_key

KEYS = st.sampled_from(["a", "b", ":", "a:b", "~/", "é", "\u0000"])
STRINGS = st.text(alphabet=st.sampled_from('a:b"\\/é\u0000\ud800 '), max_size=6)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), STRINGS)


def _objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(st.tuples(KEYS, children), max_size=4).map(lambda pairs: ("object", pairs))


VALUES = st.recursive(SCALARS, lambda children: st.one_of(st.lists(children, max_size=3), _objects(children)))


def _string(value: str, escape_colons: bool) -> str:
    text = json.dumps(value)
    return text.replace(":", "\\u003a") if escape_colons else text


def render(value: Any, escape_colons: bool) -> str:
    """JSON text of a generated value; objects keep every pair, duplicates included."""
    if isinstance(value, tuple):
        members = (f"{_string(k, escape_colons)}: {render(v, escape_colons)}" for k, v in value[1])
        return "{" + ", ".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(render(v, escape_colons) for v in value) + "]"
    if isinstance(value, str):
        return _string(value, escape_colons)
    return json.dumps(value)


def has_duplicates(value: Any) -> bool:
    if isinstance(value, tuple):
        keys = [k for k, _ in value[1]]
        return len(keys) != len(set(keys)) or any(has_duplicates(v) for _, v in value[1])
    if isinstance(value, list):
        return any(has_duplicates(v) for v in value)
    return False


@settings(max_examples=400, deadline=None)
@given(value=VALUES, escape_colons=st.booleans())
def test_a_duplicate_is_found_exactly_when_there_is_one(value, escape_colons):
    body = render(value, escape_colons).encode("utf-8", "surrogatepass")

    found = find_duplicate_key(body)

    assert (found is not None) == has_duplicates(value), body


def test_a_number_out_of_range_is_left_to_its_record_not_refused_as_a_duplicate():
    """msgspec cannot hold `1e999`: the check reads such a body another way instead of refusing it."""
    body = b'{"identifier":"email","records":[{"email":"a@example.com","custom_attributes":{"n":1e999,"m":"x:y"}}]}'

    assert find_duplicate_key(body) is None
    assert len(parse_import_request("application/json", body).records) == 1
