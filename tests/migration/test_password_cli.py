"""`userio import --check-passwords` and `userio password-migration` against a live example app (DECISIONS 12)."""

from __future__ import annotations

import json

import argon2

from tests.helpers import HASH_2B, PASSWORD
from tests.migration.conftest import Deployment


async def test_check_passwords_prints_each_record_and_format_and_imports_nothing(deployment: Deployment, tmp_path):
    project = await deployment.make_project()
    legacy = argon2.PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1).hash(PASSWORD)
    records = [
        {"email": "a@example.com", "password": {"type": "argon2", "password_hash": legacy}},
        {"email": "b@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}},
        {"email": "c@example.com", "password": {"type": "argon2", "password_hash": legacy}},
        {"email": "d@example.com"},
    ]
    (tmp_path / "users.ndjson").write_text("".join(json.dumps(r) + "\n" for r in records))
    pairs = [{"index": 0, "password": PASSWORD}, {"index": 1, "password": PASSWORD}, {"index": 2, "password": "no"}]
    (tmp_path / "pairs.ndjson").write_text("".join(json.dumps(p) + "\n" for p in pairs))

    result = deployment.cli(
        "import", "users.ndjson", "--check-passwords", "pairs.ndjson", *project.args(deployment), cwd=tmp_path
    )

    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == [
        "record 0: argon2 verified",
        "record 1: bcrypt verified",
        "record 2: argon2 mismatch",
    ]
    assert "argon2: 1 verified, 1 mismatch" in result.stderr and "bcrypt: 1 verified" in result.stderr
    assert PASSWORD not in result.stdout + result.stderr
    assert await deployment.user_count(project) == 0

    state = deployment.cli("password-migration", *project.args(deployment), cwd=tmp_path)

    assert state.returncode == 0, state.stderr
    assert "users: 0 (0 without a password)" in state.stdout
