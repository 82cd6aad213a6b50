"""Sign-in benchmark per password format (issue 28): p50/p99 of `UserService.verify_password`, in one run.

    .venv/bin/python bench/passwords.py [--users 40] [--rounds 3]

Imports `--users` users per format (each format at the cost its source system uses by default, within our bounds)
into the embedded default (SQLite file, in-process jobs), then for each format times, one sign-in at a time:
  - the first good sign-in (verification + the re-hash to bcrypt cost 10 + its write), once per user;
  - later good sign-ins (the user now has bcrypt cost 10), `--rounds` per user;
  - a wrong password against the legacy hash (a user not yet signed in).
bcrypt cost 10 (a native user) is the baseline of the same run. Writes bench/out/passwords.json.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import argon2
import bcrypt
import msgspec
from passlib import hash as passlib_hash

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import OUT  # noqa: E402
from litestar_userio import UserIOConfig  # noqa: E402
from litestar_userio.imports.import_schemas import ImportRequest  # noqa: E402
from litestar_userio.passwords.firebase import firebase_scrypt  # noqa: E402
from litestar_userio.projects.settings import ProjectSettings  # noqa: E402
from litestar_userio.services import Services  # noqa: E402

PASSWORD = "correct horse battery"
SIGNER_KEY = base64.b64decode(
    "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="
)


def _firebase(password: str, n: int) -> dict[str, Any]:
    salt = f"salt{n:08d}".encode()
    digest = firebase_scrypt(password.encode(), salt, b"\x07", SIGNER_KEY, 8, 14)
    return {
        "password_hash": base64.b64encode(digest).decode(),
        "salt": base64.b64encode(salt).decode(),
        "signer_key": base64.b64encode(SIGNER_KEY).decode(),
        "salt_separator": "Bw==",
        "rounds": 8,
        "mem_cost": 14,
    }


def _django(password: str, n: int) -> str:
    salt = f"salt{n:08d}"
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), 870_000)
    return f"pbkdf2_sha256$870000${salt}${base64.b64encode(digest).decode()}"


# (label, type, maker of the password object's members for user n): each at its source's default cost.
FORMATS: list[tuple[str, str, Callable[[str, int], Any]]] = [
    ("bcrypt-10 (native)", "bcrypt", lambda p, n: bcrypt.hashpw(p.encode(), bcrypt.gensalt(10)).decode()),
    ("argon2id m=64MiB t=3 p=4", "argon2", lambda p, n: argon2.PasswordHasher().hash(p)),
    ("argon2id m=19MiB t=2 p=1 (OWASP)", "argon2", lambda p, n: argon2.PasswordHasher(2, 19456, 1).hash(p)),
    ("scrypt N=2^15 r=8", "scrypt", lambda p, n: passlib_hash.scrypt.using(rounds=15).hash(p)),
    ("firebase_scrypt mem_cost=14 rounds=8", "firebase_scrypt", _firebase),
    ("pbkdf2-sha256 870k (Django 5)", "pbkdf2", _django),
    ("pbkdf2-sha256 27.5k (Keycloak)", "pbkdf2", lambda p, n: passlib_hash.pbkdf2_sha256.using(rounds=27_500).hash(p)),
    ("sha512_crypt 5000", "sha512_crypt", lambda p, n: passlib_hash.sha512_crypt.using(rounds=5000).hash(p)),
    ("md5_crypt", "md5_crypt", lambda p, n: passlib_hash.md5_crypt.hash(p)),
    ("phpass 8 (WordPress)", "phpass", lambda p, n: passlib_hash.phpass.using(rounds=8).hash(p)),
    ("ldap {SSHA}", "ldap", lambda p, n: passlib_hash.ldap_salted_sha1.hash(p)),
]


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered) * 1000, 1), "p99": round(p99 * 1000, 1), "n": len(ordered)}


async def _timed(call: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await call
    return time.perf_counter() - started, result


async def main(users: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home:
        config = UserIOConfig(database_url=f"sqlite:///{home}/bench.sqlite3", migrate_on_startup=True)
        services = await Services.start(config)
        try:
            return await _run(services, users, rounds)
        finally:
            await services.close()


async def _run(services: Services, users: int, rounds: int) -> dict[str, Any]:
    project = await services.projects.create("bench", ["bench.test"], ProjectSettings())
    results: dict[str, Any] = {}
    for f, (label, kind, make) in enumerate(FORMATS):
        records = []
        for n in range(users):
            made = make(PASSWORD, n)
            password = {"type": kind, **made} if isinstance(made, dict) else {"type": kind, "password_hash": made}
            records.append({"email": f"u{n}.f{f}@example.com", "password": password})
        request = msgspec.json.decode(
            msgspec.json.encode({"identifier": "email", "records": records}), type=ImportRequest
        )
        created = await services.imports.create_task(project, request)
        while json.loads(await services.imports.status(project.id, created.id))["status"] != "completed":
            await asyncio.sleep(0.05)
        sign_in = services.users.verify_password
        wrong = [(await _timed(sign_in(project.id, f"u{n}.f{f}@example.com", "wrong")))[0] for n in range(users)]
        first: list[float] = []
        for n in range(users):
            elapsed, user_id = await _timed(sign_in(project.id, f"u{n}.f{f}@example.com", PASSWORD))
            assert user_id is not None, label
            first.append(elapsed)
        later = [
            (await _timed(sign_in(project.id, f"u{n}.f{f}@example.com", PASSWORD)))[0]
            for _ in range(rounds)
            for n in range(users)
        ]
        results[label] = {"wrong": _ms(wrong), "first_with_rehash": _ms(first), "later": _ms(later)}
        row = results[label]
        print(
            f"{label:40} wrong {row['wrong']['p50']:7.1f}/{row['wrong']['p99']:7.1f} ms"
            f"  first+rehash {row['first_with_rehash']['p50']:7.1f}/{row['first_with_rehash']['p99']:7.1f} ms"
            f"  later {row['later']['p50']:6.1f}/{row['later']['p99']:6.1f} ms (p50/p99)",
            flush=True,
        )
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    out = asyncio.run(main(args.users, args.rounds))
    OUT.mkdir(exist_ok=True)
    (OUT / "passwords.json").write_text(json.dumps(out, indent=2))
