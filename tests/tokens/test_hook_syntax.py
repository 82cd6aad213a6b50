"""A hook the compiler accepts but V8 cannot load is refused at save, with its position, and changes nothing."""

from __future__ import annotations

import pytest

from tests.tokens.conftest import HOOKS


@pytest.mark.parametrize(
    ("body", "line", "reason"),
    [
        ("  let a = 1;\n  let a = 2;\n  return { is_allowed: true };", 3, "already been declared"),
        ("  const r = /(/;\n  return { is_allowed: true };", 2, "Invalid regular expression"),
        ("  const x = 010;\n  return { is_allowed: true };", 2, "Octal"),
    ],
)
async def test_v8_refusal_is_a_compile_error_at_save(world, body, line, reason):
    source = f"export default function (e: any) {{\n{body}\n}}\n"

    response = await world.project.env.client.put(
        HOOKS, json={"hooks": [{"event": "oidc.jwt.pre_create", "source": source}]}, headers=world.project.headers()
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["reason"], error["info"]["index"], error["info"]["line"]) == ("HookCompileFailed", 0, line)
    assert reason in error["info"]["message"]
    assert (await world.project.get(HOOKS)).json()["result"]["hooks"] == []
