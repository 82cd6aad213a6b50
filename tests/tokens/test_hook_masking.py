"""Issue 29: nothing a hook gives back reaches a client unmasked. A secret, raw, hex, URL-encoded or in base64
inside a longer text, is masked in a refusal's title and reason (which an anonymous token client sees, bounded in
length), the console, errors, the run log, claims and the test endpoint's output; on both deployments."""

from __future__ import annotations

import base64
import logging
from urllib.parse import quote

import jwt
import pytest

from litestar_userio.errors import HookDisallowed
from litestar_userio.hooks.secrets import mask
from tests.tokens.conftest import HOOKS

SECRET = "sk_live/9f8e+7d 6c5b4a"
HEX = SECRET.encode().hex()
URL = quote(SECRET, safe="")
BASIC = base64.b64encode(b"user:" + SECRET.encode()).decode()  # the secret at an offset of 5 bytes

# The hook writes each form itself, from ctx.secrets.
FORMS = """
  const k: string = ctx.secrets.CRM_KEY;
  const hex = [...k].map((c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
  const b64 = (s: string): string => {
    const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let out = "";
    for (let i = 0; i < s.length; i += 3) {
      const n = (s.charCodeAt(i) << 16) | ((s.charCodeAt(i + 1) || 0) << 8) | (s.charCodeAt(i + 2) || 0);
      out += A[(n >> 18) & 63] + A[(n >> 12) & 63];
      out += (i + 1 < s.length ? A[(n >> 6) & 63] : "=") + (i + 2 < s.length ? A[n & 63] : "=");
    }
    return out;
  };
  const all = `raw ${k} hex ${hex} HEX ${hex.toUpperCase()} url ${encodeURIComponent(k)} basic ${b64("user:" + k)}`;
"""


def hook(body: str, event: str = "oidc.jwt.pre_create") -> dict[str, str]:
    return {
        "event": event,
        "source": f"export default async function (e: any, ctx: any): Promise<any> {{ {FORMS} {body} }}",
    }


REFUSES = hook('console.log(all); return { is_allowed: false, title: "bad key " + k, reason: all + "x".repeat(5000) };')


def assert_masked(text: str) -> None:
    for form in (SECRET, HEX, HEX.upper(), URL, BASIC, BASIC[8:-8]):
        assert form not in text, form
    assert "[secret]" in text


@pytest.fixture
async def secret_world(world):
    response = await world.project.env.client.put(
        f"{HOOKS}/secrets/CRM_KEY", json={"value": SECRET}, headers=world.project.headers()
    )
    assert response.status_code == 200
    return world


async def put(world, *hooks):
    response = await world.project.env.client.put(HOOKS, json={"hooks": list(hooks)}, headers=world.project.headers())
    assert response.status_code == 200, response.text


async def test_a_refusal_reaches_the_token_client_masked_and_bounded(secret_world, caplog):
    caplog.set_level(logging.DEBUG)
    await put(secret_world, REFUSES)

    refused = await secret_world.sign_in()
    runs = await secret_world.project.get(f"{HOOKS}/runs")

    assert refused.status_code == 403
    body = refused.json()
    assert body["hook_title"] == "bad key [secret]"
    assert body["error_description"] == body["hook_reason"]
    assert len(body["hook_reason"]) == HookDisallowed.MAX_REASON and body["hook_reason"].endswith("\u2026")
    assert body["hook_reason"].startswith("raw [secret] hex [secret] HEX [secret] url [secret] basic ")
    assert_masked(refused.text)
    assert_masked(runs.text)
    assert SECRET not in caplog.text and BASIC not in caplog.text


async def test_the_test_endpoint_shows_console_errors_and_claims_masked(secret_world):
    adds = hook(
        "console.log(all);"
        " return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, [k]: all } } } };"
    )
    throws = hook("throw new Error(all);", event="oidc.id_token.pre_create")
    await put(secret_world, adds, throws)

    tried = [
        await secret_world.project.post(
            f"{HOOKS}/test", {"event": event, "user_id": secret_world.user_id, "client_id": "jwt-app"}
        )
        for event in ("oidc.jwt.pre_create", "oidc.id_token.pre_create")
    ]
    token = await secret_world.sign_in(scope="email")  # no ID token, so the throwing hook does not run

    for response in tried:
        assert response.status_code == 200, response.text
        assert_masked(response.text)
    assert "[secret]" in tried[0].json()["result"]["added_claims"]
    assert "Error: raw [secret]" in tried[1].json()["result"]["hooks"][0]["error"]["message"]
    claims = jwt.decode(token.json()["access_token"], options={"verify_signature": False})
    assert_masked(str(claims))


@pytest.mark.parametrize("prefix", ["", "a", "ab", "abc:", "Bearer "])
def test_base64_of_a_secret_is_masked_at_every_alignment(prefix: str) -> None:
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = encode(f"{prefix}{SECRET}!".encode()).decode()
        masked = mask(f"token={text}&x=1", [SECRET])
        assert "[secret]" in masked and masked.endswith("&x=1")
        left = masked.removeprefix("token=").split("[secret]")
        # What is left around the mask holds at most the prefix's bytes and the byte after the secret.
        assert len(left[0]) <= len(encode(prefix.encode()).decode().rstrip("=")) + 1
