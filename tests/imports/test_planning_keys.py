"""The job reads a record's login ids from the record it decoded: what planning reads from the record's bytes."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from litestar_userio.imports.planning import login_keys, record_login_keys
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
