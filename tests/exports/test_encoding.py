"""CSV rows built a column at a time are the rows built cell by cell (`csv_cell`, Go's quoting rule)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litestar_userio.exports.columns import Column
from litestar_userio.exports.document import _LEADING_SPACES, LEADING_SPACE, csv_cell, csv_quote
from litestar_userio.exports.encoding import csv_rows
from litestar_userio.exports.pointers import resolve
from tests.hard import many

TRICKY = st.sampled_from(
    [
        "",
        " x",
        "\tx",
        "\u3000x",
        "\u2005x",
        "a,b",
        'say "hi"',
        "a\nb",
        "a\rb",
        "\\.",
        "\\.x",
        "=1+1",
        "-3",
        "@x",
        "+44",
        "\x85x",
        "x ",
        "\x1cx",
        "é",
        "\x00 x",
        "a\x00\\.",
    ]
)
TEXT = st.one_of(TRICKY, st.text(max_size=12))
LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.floats(allow_nan=False, allow_infinity=False), TEXT
)
VALUE = st.recursive(
    LEAF, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)), max_leaves=6
)
COLUMNS = [
    Column(("email",), "email"),
    Column(("address", "locality"), "locality"),
    Column(("roles", "0"), "first_role"),
    Column(("custom_attributes", "x", "y"), "deep"),
    Column(("mfa",), "mfa"),
]


def documents_strategy():
    document = st.fixed_dictionaries(
        {},
        optional={
            "email": VALUE,
            "address": st.one_of(st.dictionaries(st.just("locality"), VALUE), VALUE),
            "roles": st.one_of(st.lists(VALUE, max_size=3), VALUE),
            "custom_attributes": st.one_of(
                st.fixed_dictionaries({"x": st.one_of(st.dictionaries(st.just("y"), VALUE), VALUE)}), VALUE
            ),
            "mfa": VALUE,
        },
    )
    return st.lists(document, max_size=8)


def cell_by_cell(documents, columns, escape_formulas):
    lines = [
        ",".join(
            csv_cell(resolve(document, list(column.tokens)), escape_formulas=escape_formulas) for column in columns
        )
        for document in documents
    ]
    return ("\n".join([*lines, ""])).encode()


@settings(max_examples=many(400, 150), deadline=None)
@given(documents_strategy(), st.booleans())
def test_column_by_column_equals_cell_by_cell(documents, escape_formulas):
    assert csv_rows(documents, COLUMNS, escape_formulas=escape_formulas) == cell_by_cell(
        documents, COLUMNS, escape_formulas
    )


def test_a_column_needing_quotes_in_one_cell_quotes_that_cell_only():
    documents = [{"email": "a@x.test"}, {"email": " lead"}, {"email": "\\."}, {"email": "plain"}]

    assert csv_rows(documents, COLUMNS[:1]) == b'a@x.test\n" lead"\n"\\."\nplain\n'


def test_the_leading_space_set_is_the_regex_class():
    every_bmp_character = (
        "".join(map(chr, range(0x10000))).encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    )

    assert set(re.findall(f"[{LEADING_SPACE}]", every_bmp_character)) == _LEADING_SPACES


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("", ""),
        ("plain", "plain"),
        ("a,b", '"a,b"'),
        ('say "hi"', '"say ""hi"""'),
        ("a\nb", '"a\nb"'),
        ("a\rb", '"a\rb"'),
        (" lead", '" lead"'),
        ("\u3000lead", '"\u3000lead"'),
        ("\u200alead", '"\u200alead"'),
        ("\u200blead", "\u200blead"),
        ("\x1clead", "\x1clead"),
        ("trail ", "trail "),
        ("\\.", '"\\."'),
        ("\\.x", "\\.x"),
    ],
)
def test_csv_quote_follows_gos_rule(text, quoted):
    assert csv_quote(text) == quoted
