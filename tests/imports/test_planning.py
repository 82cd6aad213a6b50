"""Planning: what it reads of records, and when it has nothing to plan."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from litestar_userio.imports.planning import login_keys, plan_chunks, record_login_keys
from litestar_userio.imports.validation import parse_record
from litestar_userio.users.login_id_rules import CASE_INSENSITIVE, LoginIDRules

EMAIL = st.one_of(
    st.none(),
    st.sampled_from(["Ada@Example.COM", "ada@straße.de", "ÄDA@EXAMPLE.COM", "ada@xn--strae-oqa.de"]),
    st.builds("{}@{}.example".format, st.text("aAbBzZ._-09", min_size=1, max_size=8), st.text("aAzZ", min_size=1)),
)
PHONE = st.one_of(st.none(), st.sampled_from(["+14155550100", "+447911123456", "+33612345678", "+8613800138000"]))
USERNAME = st.one_of(st.none(), st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=12))


@pytest.mark.parametrize("rules", [CASE_INSENSITIVE, LoginIDRules(email_case_sensitive=True)])
@settings(max_examples=300, deadline=None)
@given(email=EMAIL, phone=PHONE, username=USERNAME)
def test_the_keys_of_a_decoded_record_are_those_of_its_bytes(
    rules: LoginIDRules, email: str | None, phone: str | None, username: str | None
) -> None:
    members = {"email": email, "phone_number": phone, "preferred_username": username}
    raw = msgspec.json.encode({k: v for k, v in members.items() if v is not None or k == "phone_number"})
    parsed = parse_record(raw, None, identifier="phone_number")
    assume(parsed.record is not None)  # a record that fails touches no user: the job does not ask for its keys
    assert record_login_keys(parsed.record, rules) == login_keys(raw, rules)


KEY = st.tuples(st.sampled_from(["email", "phone_number"]), st.sampled_from(["a", "b", "c", "d"]))


@settings(max_examples=300, deadline=None)
@given(
    keys=st.lists(st.lists(KEY, max_size=3), min_size=1, max_size=12),
    owners=st.dictionaries(KEY, st.sampled_from(["u1", "u2"])),
    spare=st.integers(0, 5),
)
def test_records_that_fit_in_one_chunk_are_one_chunk_in_index_order(keys, owners, spare):
    """The premise of `ImportService._plan`, which then neither reads login ids nor looks them up."""
    assert plan_chunks(keys, owners, len(keys) + spare) == [list(range(len(keys)))]


def test_a_username_spelled_like_another_records_email_or_phone_shares_its_chunk():
    """One login id names one user across kinds: such records interact, so they run in one chunk, in index order."""
    keys = [
        [("email", "x@example.com")],
        [("preferred_username", "bob")],
        [("preferred_username", "x@example.com")],
        [("phone_number", "+14155550100")],
        [("preferred_username", "+1(415)555-0100")],
    ]

    chunks = plan_chunks(keys, {}, 1)

    assert sorted(chunks) == [[0, 2], [1], [3, 4]]
