"""Realistic generated users for the benchmarks (deterministic for a seed)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import bcrypt

FIRST = ["Ada", "Grace", "Alan", "Katherine", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Radia", "Zoë", "José"]
LAST = ["Lovelace", "Hopper", "Turing", "Johnson", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Perlman"]
ZONES = ["Europe/London", "America/New_York", "Asia/Tokyo", "Europe/Paris", "America/Los_Angeles", "Asia/Hong_Kong"]
LOCALES = ["en", "en-US", "fr-FR", "ja-JP", "zh-Hant-HK", "de"]
ROLES = ["admin", "editor", "viewer"]
GROUPS = ["staff", "customers"]
BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def password_hashes(count: int = 64) -> list[str]:
    """Real bcrypt hashes (cost 4: the import stores them verbatim, so their cost does not matter here)."""
    return [bcrypt.hashpw(f"password-{i}".encode(), bcrypt.gensalt(4)).decode() for i in range(count)]


def users(count: int, seed: int = 42) -> Iterator[dict[str, Any]]:
    """`count` import records with realistic attributes, bcrypt passwords, roles and some MFA."""
    rng = random.Random(seed)
    hashes = password_hashes()
    for i in range(count):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        record: dict[str, Any] = {
            "email": f"{first.lower()}.{last.lower()}.{i}@example.com".replace("ë", "e").replace("é", "e"),
            "email_verified": rng.random() < 0.8,
            "name": f"{first} {last}",
            "given_name": first,
            "family_name": last,
            "zoneinfo": rng.choice(ZONES),
            "locale": rng.choice(LOCALES),
            "roles": rng.sample(ROLES, rng.randint(0, 2)),
            "custom_attributes": {"plan": rng.choice(["free", "pro", "team"]), "signup_year": rng.randint(2010, 2026)},
            "password": {"type": "bcrypt", "password_hash": rng.choice(hashes)},
        }
        if rng.random() < 0.5:
            record["phone_number"] = f"+1415{2000000 + i:07d}"
            record["phone_number_verified"] = True
        if rng.random() < 0.3:
            record["preferred_username"] = f"{first.lower()}{i}".replace("ë", "e").replace("é", "e")
        if rng.random() < 0.2:
            record["address"] = {
                "street_address": f"{rng.randint(1, 999)} Main St",
                "locality": "Springfield",
                "country": "US",
            }
        if rng.random() < 0.1:
            record["mfa"] = {"totp": {"secret": "".join(rng.choice(BASE32) for _ in range(32))}}
        elif rng.random() < 0.1:
            record["mfa"] = {"email": record["email"]}
        if rng.random() < 0.05:
            record["groups"] = [rng.choice(GROUPS)]
        yield record


def split_requests(records: list[dict[str, Any]], identifier: str = "email", limit: int = 499_000) -> list[bytes]:
    """Cut records into import request bodies just under `limit` bytes."""
    import msgspec

    encoder = msgspec.json.Encoder()
    head = b'{"identifier":"' + identifier.encode() + b'","records":['
    bodies: list[bytes] = []
    current: list[bytes] = []
    size = len(head) + 2
    for record in records:
        encoded = encoder.encode(record)
        if current and size + len(encoded) + 1 > limit:
            bodies.append(head + b",".join(current) + b"]}")
            current, size = [], len(head) + 2
        current.append(encoded)
        size += len(encoded) + 1
    if current:
        bodies.append(head + b",".join(current) + b"]}")
    return bodies


if __name__ == "__main__":
    sample = list(users(3))
    print(sample[0])
    print(f"{len(split_requests(list(users(10_000))))} requests for 10 000 users")
