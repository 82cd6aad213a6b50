"""`userio import --check-passwords` and `userio password-migration` against a live example app (DECISIONS 12)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import argon2

from litestar_userio.passwords.firebase import FirebaseHashConfig
from litestar_userio.projects.settings import ProjectSettings
from tests.client.conftest import Deployment
from tests.helpers import HASH_2B, PASSWORD
from tests.test_password_formats import FIREBASE_CONFIG, FIREBASE_PASSWORD


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


def _firebase_files(tmp_path, signer_key: str) -> None:
    """Firebase's published user (password `user1password`) and a hash config file with `signer_key`."""
    fixtures = Path(__file__).parent / "fixtures"
    (tmp_path / "users.json").write_bytes((fixtures / "firebase_users.json").read_bytes())
    config = (fixtures / "firebase_hash_config.txt").read_text()
    config = config.replace(f"base64_signer_key: {FIREBASE_CONFIG['signer_key']}", f"base64_signer_key: {signer_key}")
    (tmp_path / "hash_config.txt").write_text(config)
    (tmp_path / "pairs.ndjson").write_text(json.dumps({"index": 0, "password": FIREBASE_PASSWORD}) + "\n")


async def test_check_passwords_uses_the_firebase_hash_config_flag_the_import_sends(embedded: Deployment, tmp_path):
    # The project holds the right key; the flag a wrong one, which the import would store in every password.
    right = ProjectSettings(firebase_scrypt=FirebaseHashConfig(**FIREBASE_CONFIG))
    project = await embedded.make_project(right)
    _firebase_files(tmp_path, base64.b64encode(b"k" * 64).decode())
    args = ["import", "users.json", "--from", "firebase", "--firebase-hash-config", "hash_config.txt"]

    result = embedded.cli(*args, "--check-passwords", "pairs.ndjson", *project.args(embedded), cwd=tmp_path)

    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == ["record 0: firebase_scrypt mismatch"]
    assert await embedded.user_count(project) == 0


async def test_check_passwords_verifies_with_the_right_firebase_hash_config_flag(embedded: Deployment, tmp_path):
    project = await embedded.make_project()  # no project setting: the flag's config is the only one
    _firebase_files(tmp_path, FIREBASE_CONFIG["signer_key"])
    args = ["import", "users.json", "--from", "firebase", "--firebase-hash-config", "hash_config.txt"]

    result = embedded.cli(*args, "--check-passwords", "pairs.ndjson", *project.args(embedded), cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["record 0: firebase_scrypt verified"]


async def test_check_passwords_refuses_a_firebase_hash_config_without_from_firebase(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    _firebase_files(tmp_path, FIREBASE_CONFIG["signer_key"])
    args = ["import", "users.json", "--firebase-hash-config", "hash_config.txt", "--check-passwords", "pairs.ndjson"]

    result = embedded.cli(*args, *project.args(embedded), cwd=tmp_path)

    assert result.returncode == 2, result.stderr
    assert "--firebase-hash-config goes with --from firebase" in result.stderr
