"""Issue 45.4: `userio export --format userio --age-recipient` and `userio import --from userio --age-identity`
move a project's users, hashes and second factors included, through a live example app on both deployments."""

from __future__ import annotations

import json

import httpx
import msgspec
import pytest
from pyrage import decrypt, x25519

from litestar_userio.projects.settings import ProjectSettings
from tests.client.conftest import Deployment, Project
from tests.helpers import HASH_2B, TOTP_SECRET
from tests.test_password_formats import LEGACY_HASHES
from userio_core.admin_keys import sign_admin_token

ALLOWED = ProjectSettings(allow_secret_export=True)

RECORDS = [
    {
        "sub": "lossless-cli-ada",
        "email": "ada@example.com",
        "family_name": "Lovelace",
        "roles": ["admin"],
        "groups": ["staff"],
        "password": {"type": "bcrypt", "password_hash": HASH_2B},
        "mfa": {"totp": {"secret": TOTP_SECRET}},
        "identities": [{"type": "oauth", "provider_alias": "google", "subject": "g-ada"}],
    },
    {
        "email": "grace@example.com",
        "password": {"type": "pbkdf2", "password_hash": LEGACY_HASHES["pbkdf2-django"]()},
        "temporarily_disabled_from": "2080-01-01T00:00:00Z",
        "temporarily_disabled_until": "2080-01-02T00:00:00Z",
    },
    *({"email": f"user{i}@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}} for i in range(40)),
]


def key_file(tmp_path) -> tuple[x25519.Identity, str]:
    identity = x25519.Identity.generate()
    path = tmp_path / "key.txt"
    path.write_text(f"# created: for a test\n# public key: {identity.to_public()}\n{identity}\n")
    path.chmod(0o600)
    return identity, str(identity.to_public())


async def authenticators(deployment: Deployment, project: Project) -> set[tuple[str, str, str, str | None]]:
    rows = await deployment.fetch(
        "SELECT user_id, kind, type, COALESCE(password_hash, totp_secret, oob_target) AS value"
        " FROM userio_authenticator WHERE project_id = $1",
        project.id,
    )
    return {(r["user_id"], r["kind"], r["type"], r["value"]) for r in rows}


async def delete_users(deployment: Deployment, project: Project) -> None:
    """Erase the project's users through the admin API (a move: the target then takes the same subs)."""
    rows = await deployment.fetch("SELECT id FROM userio_user WHERE project_id = $1", project.id)
    token = sign_admin_token((deployment.home / f"{project.id}-admin-key.pem").read_text(), project.id)
    headers = {"Authorization": f"Bearer {token}", "Host": project.host}
    async with httpx.AsyncClient(base_url=deployment.url, verify=str(deployment.cacert), headers=headers) as client:
        for row in rows:
            assert (await client.delete(f"/_api/admin/users/{row['id']}")).status_code == 204


@pytest.mark.engine
async def test_the_client_moves_a_project_through_an_encrypted_lossless_export(deployment: Deployment, tmp_path):
    source = await deployment.make_project(ALLOWED)
    target = await deployment.make_project()
    (tmp_path / "users.ndjson").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    loaded = deployment.cli(
        "import", "users.ndjson", "--report", "load.ndjson", "--failed", "load-failed.ndjson",
        *source.args(deployment), "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert loaded.returncode == 0, loaded.stderr
    identity, recipient = key_file(tmp_path)
    before = await authenticators(deployment, source)

    exported = deployment.cli(
        "export", "--format", "userio", "--age-recipient", recipient, "-o", "acme.ndjson.age",
        *source.args(deployment), "--quiet", cwd=tmp_path,
    )  # fmt: skip

    assert exported.returncode == 0, exported.stderr
    assert "verified" in exported.stderr
    ciphertext = (tmp_path / "acme.ndjson.age").read_bytes()
    assert ciphertext.startswith(b"age-encryption.org/v1\n") and HASH_2B.encode() not in ciphertext
    records = [msgspec.json.decode(line) for line in decrypt(ciphertext, [identity]).splitlines()]
    assert len(records) == len(RECORDS)
    ada = next(record for record in records if record["sub"] == "lossless-cli-ada")
    assert ada["mfa"] == {"totp": {"secret": TOTP_SECRET}} and ada["password"] == RECORDS[0]["password"]

    await delete_users(deployment, source)  # ids are unique in a deployment: a move within one frees them first
    moved = deployment.cli(
        "import", "acme.ndjson.age", "--from", "userio", "--age-identity", "key.txt", "--max-request-bytes", "4000",
        *target.args(deployment), "--quiet", cwd=tmp_path,
    )  # fmt: skip

    assert moved.returncode == 0, moved.stderr
    assert f"{len(RECORDS)} inserted" in moved.stderr.replace(",", "")
    assert await authenticators(deployment, target) == before  # same subs, hashes and TOTP secret, byte for byte
    report = [json.loads(line) for line in (tmp_path / "report.ndjson").read_text().splitlines()]
    header = report[0]["run"]
    assert header["age_identity"].endswith("key.txt") and header["from"] == "userio"
    assert not [line for line in report if line.get("client_warnings") or line.get("warnings")]
    assert HASH_2B not in (tmp_path / "report.ndjson").read_text()  # the echo is redacted, the file never decrypted
    assert len({line["task"] for line in report if "task" in line and "indices" in line}) > 1  # chunked

    resumed = deployment.cli("import", "acme.ndjson.age", "--resume", "report.ndjson", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert await deployment.user_count(target) == len(RECORDS)


async def test_an_encrypted_file_needs_its_identity(embedded: Deployment, tmp_path):
    project = await embedded.make_project(ALLOWED)
    _, recipient = key_file(tmp_path)
    other = x25519.Identity.generate()
    (tmp_path / "other.txt").write_text(f"{other}\n")
    (tmp_path / "users.ndjson.age").write_bytes(_encrypt(b'{"email": "a@example.com"}\n', recipient))
    args = [*project.args(embedded), "--quiet"]

    without = embedded.cli("import", "users.ndjson.age", "--from", "userio", *args, cwd=tmp_path)
    wrong = embedded.cli(
        "import", "users.ndjson.age", "--from", "userio", "--age-identity", "other.txt", *args, cwd=tmp_path
    )
    elsewhere = embedded.cli(
        "import", "users.ndjson.age", "--from", "auth0", "--age-identity", "key.txt", *args, cwd=tmp_path
    )
    no_recipient = embedded.cli("export", "--format", "userio", "-o", "x.age", *args, cwd=tmp_path)

    assert without.returncode == 2 and "--age-identity KEYFILE" in without.stderr, without.stderr
    assert wrong.returncode == 2 and "cannot decrypt the age file" in wrong.stderr, wrong.stderr
    assert elsewhere.returncode == 2 and "--age-identity goes with --from userio" in elsewhere.stderr
    assert no_recipient.returncode == 2 and "--age-recipient" in no_recipient.stderr
    assert await embedded.user_count(project) == 0


def _encrypt(data: bytes, recipient: str) -> bytes:
    from pyrage import encrypt

    return encrypt(data, [x25519.Recipient.from_str(recipient)])
