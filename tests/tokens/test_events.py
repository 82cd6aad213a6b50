"""How a hook's response may change a token (SPEC 6.1 rules 1-3, DECISIONS 5), without V8."""

from __future__ import annotations

import pytest

from litestar_userio.errors import HookDisallowed, HookInvalidResponse, InvalidJWTMutations
from litestar_userio.hooks.token_events import apply_response
from litestar_userio.web.error_responses import http_answer

SERVER = {
    "iss": "https://a",
    "sub": "u1",
    "aud": ["https://a"],
    "exp": 2,
    "iat": 1,
    "jti": "j",
    "client_id": "c",
    "scope": "openid",
}


def test_added_claims_are_kept_with_every_server_claim():
    payload = apply_response(
        "oidc.jwt.pre_create",
        {"is_allowed": True, "mutations": {"jwt": {"payload": {**SERVER, "x": 1}}}},
        SERVER,
        SERVER,
    )

    assert payload == {**SERVER, "x": 1}


@pytest.mark.parametrize(
    "response",
    [{"is_allowed": True}, {"is_allowed": True, "mutations": {}}, {"is_allowed": True, "mutations": {"jwt": {}}}],
)
def test_allowed_without_mutations_keeps_the_payload(response):
    assert apply_response("oidc.jwt.pre_create", response, {**SERVER, "y": 2}, SERVER) == {**SERVER, "y": 2}


def test_id_token_mutations_live_under_id_token():
    payload = apply_response(
        "oidc.id_token.pre_create",
        {"is_allowed": True, "mutations": {"id_token": {"payload": {**SERVER, "custom_attributes": None}}}},
        SERVER,
        SERVER,
    )

    assert payload["custom_attributes"] is None
    with pytest.raises(HookInvalidResponse):
        apply_response(
            "oidc.id_token.pre_create", {"is_allowed": True, "mutations": {"jwt": {"payload": SERVER}}}, SERVER, SERVER
        )


def test_refusal_carries_title_and_reason():
    with pytest.raises(HookDisallowed) as caught:
        apply_response(
            "oidc.jwt.pre_create", {"is_allowed": False, "title": "Blocked", "reason": "Account locked"}, SERVER, SERVER
        )

    assert caught.value.info == {"title": "Blocked", "reason": "Account locked"}
    assert http_answer(caught.value) == (403, {})


@pytest.mark.parametrize(
    "response",
    [
        None,
        [],
        {},
        {"is_allowed": "yes"},
        {"is_allowed": True, "extra": 1},
        {"is_allowed": False, "mutations": {}},
        {"is_allowed": False, "title": 3},
        {"is_allowed": True, "mutations": {"jwt": {"payload": []}}},
        {"is_allowed": True, "mutations": {"jwt": {"payload": SERVER, "header": {}}}},
        {"is_allowed": True, "mutations": []},
    ],
)
def test_malformed_responses_are_invalid(response):
    with pytest.raises(HookInvalidResponse):
        apply_response("oidc.jwt.pre_create", response, SERVER, SERVER)


@pytest.mark.parametrize(
    ("change", "removed", "changed"),
    [
        ({"sub": "someone-else"}, [], ["sub"]),
        ({"exp": 99999999999}, [], ["exp"]),
        ({"iss": "https://evil"}, [], ["iss"]),
        ({"aud": ["https://a", "https://b"]}, [], ["aud"]),
        ({"scope": None}, [], ["scope"]),
    ],
)
def test_changing_a_server_claim_is_refused(change, removed, changed):
    with pytest.raises(InvalidJWTMutations) as caught:
        apply_response(
            "oidc.jwt.pre_create",
            {"is_allowed": True, "mutations": {"jwt": {"payload": {**SERVER, **change}}}},
            SERVER,
            SERVER,
        )

    assert caught.value.info == {"removed": removed, "changed": changed}


def test_removing_server_claims_is_refused_and_listed():
    payload = {k: v for k, v in SERVER.items() if k not in {"jti", "client_id"}}

    with pytest.raises(InvalidJWTMutations) as caught:
        apply_response(
            "oidc.jwt.pre_create", {"is_allowed": True, "mutations": {"jwt": {"payload": payload}}}, SERVER, SERVER
        )

    assert caught.value.info == {"removed": ["client_id", "jti"], "changed": []}


def test_a_later_hook_may_drop_what_an_earlier_hook_added():
    """Only the server's claims are protected; hooks' own additions are theirs to change."""
    current = {**SERVER, "x": 1}

    assert (
        apply_response(
            "oidc.jwt.pre_create", {"is_allowed": True, "mutations": {"jwt": {"payload": SERVER}}}, current, SERVER
        )
        == SERVER
    )
