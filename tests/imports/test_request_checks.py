"""The import request's own checks, against what the body decodes to."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from litestar_userio.web.imports import nesting_depth

TRICKY_TEXT = st.text(alphabet=st.sampled_from(list('[]{}"\\:, a\n\té\u2028')), max_size=8)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TRICKY_TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TRICKY_TEXT, children, max_size=3),
    max_leaves=40,
)


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    return 0


@settings(max_examples=400)
@given(JSON_VALUES, st.booleans())
def test_nesting_depth_counts_the_brackets_of_the_structure_never_those_in_strings(
    value: Any, ascii_only: bool
) -> None:
    for body in (json.dumps(value, ensure_ascii=ascii_only).encode(), msgspec.json.encode(value)):
        assert nesting_depth(body) == depth(value), body


def test_nesting_depth_of_strings_that_look_like_structure() -> None:
    assert nesting_depth(b'{"a":"[[[[","b":"\\"]]]]\\\\","c":[["}}"]]}') == 3
    assert nesting_depth(b'["", "", "\\"\\"[", []]') == 2
    assert nesting_depth(b'"[[["') == 0
