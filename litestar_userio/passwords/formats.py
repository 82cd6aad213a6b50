"""Every password format an import may carry, in one registry: parse, bound, store, verify.

See docs/reference.md#passwords-formats.

A password object (`{"type", "password_hash", ...}`) is parsed once on import and again at each sign-in from what
was stored, by the same code: a malformed hash or one above a cost bound fails its record on import, and is never
run at sign-in. bcrypt is stored verbatim (docs/reference.md#passwords-formats, the column the reference keeps); every
other format is stored as its password object in JSON, `type` first, so the sign-in finds its verifier and the migration
state can count formats by the column's first characters. Verifiers are the libraries' (bcrypt, argon2-cffi, libpass,
hashlib); only Firebase's AES step is ours (`firebase.py`).

`work` is a verification's time in checks of bcrypt cost 10 (measured here: bcrypt 10 70 ms; Argon2 t=3
m=64 MiB 114 ms; PBKDF2-SHA256 100 000 iterations 33 ms, SHA-512 69 ms; scrypt N=2^14 r=8 44 ms; sha512-crypt
100 000 rounds 64 ms; phpass cost 16 38 ms); `memory` the bytes it holds (the memory-hard ones).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import argon2
import bcrypt
import msgspec
from argon2.exceptions import InvalidHashError, VerificationError
from passlib import hash as passlib_hash

from litestar_userio.config import PasswordHashBounds
from litestar_userio.passwords.firebase import FirebaseHashConfig, firebase_scrypt_matches, firebase_scrypt_memory

__all__ = [
    "ARGON2ID_MEMORY",
    "BCRYPT_MAX_BYTES",
    "DJANGO_BCRYPT_SHA256",
    "MIGRATE_ON_SIGN_IN",
    "PASSWORD_TYPES",
    "WEAK_TYPES",
    "HashError",
    "HashPolicy",
    "LegacyHash",
    "hash_password",
    "is_target",
    "load_stored",
    "parse_password",
    "stored_format",
]

BCRYPT_MAX_BYTES = 72
"""bcrypt compares only the first 72 bytes, as the systems the hashes come from did."""
WEAK_TYPES = ("md5", "sha1", "sha256", "sha512")
"""Plain or salted digests: accepted only where the project allows weak formats."""
PASSWORD_TYPES = (
    "bcrypt",
    "argon2",
    "scrypt",
    "firebase_scrypt",
    "pbkdf2",
    "sha512_crypt",
    "sha256_crypt",
    "md5_crypt",
    "phpass",
    "ldap",
    *WEAK_TYPES,
    "migrate_on_sign_in",
)
MIGRATE_ON_SIGN_IN = "migrate_on_sign_in"
"""No hash: the old system checks the first sign-in (`user.password_migration`); never matches here.

See docs/reference.md#hooks-lazy-migration.
"""
_BCRYPT = re.compile(r"\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}")
_B64 = re.compile(r"[A-Za-z0-9+/.]*=*")


class HashError(ValueError):
    """A password object that cannot be stored: malformed (naming the format expected) or above a bound."""

    def __init__(self, message: str, info: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.info = info or {}


@dataclass(frozen=True, slots=True)
class HashPolicy:
    """What a project accepts: the server's bounds, and the project's Firebase config and weak-format opt-in."""

    bounds: PasswordHashBounds
    max_bcrypt_cost: int = 14
    allow_weak: bool = False
    firebase: FirebaseHashConfig | None = None


@dataclass(frozen=True, slots=True)
class LegacyHash:
    """A parsed password: what to store, what a check costs, and the check itself (run it on the pool)."""

    type: str
    stored: str
    work: float
    memory: int
    verify: Callable[[bytes], bool] | None
    """None: there is no hash to check here (the lazy-migration marker); a sign-in fails after the dummy check."""


def stored_format(stored: str) -> str:
    """The `type` of a stored hash, read without parsing it (bcrypt is stored verbatim)."""
    if stored.startswith('{"type":"'):
        return stored[9 : stored.find('"', 9)]
    return "bcrypt"


def load_stored(stored: str) -> dict[str, Any]:
    """The password object a stored hash came from."""
    if stored.startswith("{"):
        obj = msgspec.json.decode(stored)
        if isinstance(obj, dict):
            return obj
    return {"type": "bcrypt", "password_hash": stored}


def parse_password(obj: Mapping[str, Any], policy: HashPolicy) -> LegacyHash:
    """Parse a password object; HashError when its hash is malformed or above a bound of `policy`."""
    kind = obj.get("type")
    hashed = obj.get("password_hash")
    if kind == MIGRATE_ON_SIGN_IN:
        return _migrate_on_sign_in(obj)
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None or not isinstance(hashed, str):
        raise HashError(f"has an unknown type: expected one of {', '.join(PASSWORD_TYPES)}")
    if kind in WEAK_TYPES and not policy.allow_weak:
        raise HashError(
            f"is a plain {kind} digest, refused unless the project allows weak formats"
            " (`project configure --set allow_weak_password_hashes=true`)",
            {"bound": "allow_weak_password_hashes"},
        )
    return parser(obj, hashed, policy)


def _store(obj: Mapping[str, Any], **extra: Any) -> str:
    """JSON of the password object, `type` first (the migration state reads it), without `expire_after`."""
    members = {"type": obj["type"], "password_hash": obj["password_hash"]}
    members.update((k, v) for k, v in obj.items() if k not in members and k != "expire_after")
    members.update(extra)
    return msgspec.json.encode(members).decode()


def _bound(kind: str, what: str, value: int, maximum: int, setting: str) -> None:
    if value > maximum:
        raise HashError(
            f"has {kind} {what} {value}, above this server's maximum of {maximum} (ImportConfig.hash_bounds.{setting})",
            {"bound": setting, "value": value, "maximum": maximum},
        )


def _scrypt_memory_bound(kind: str, n: int, r: int, p: int, policy: HashPolicy) -> None:
    """The memory of a scrypt check (128 * N * r * p bytes) within `scrypt_memory_kib`.

    N and r * p are bounded apart too, but their product is what one check holds (`N = 2^17, r = 64`: 1 GiB, the
    whole pool's budget).
    """
    kib = 128 * n * r * p // 1024
    maximum = policy.bounds.scrypt_memory_kib
    if kib > maximum:
        raise HashError(
            f"has {kind} memory 128*N*r*p = {kib} KiB (N={n}, r={r}, p={p}), above this server's maximum of {maximum}"
            " KiB (ImportConfig.hash_bounds.scrypt_memory_kib)",
            {"bound": "scrypt_memory_kib", "value": kib, "maximum": maximum},
        )


def _b64(text: str) -> bytes:
    """Standard base64, with or without padding; passlib's `.` for `+` too."""
    if not _B64.fullmatch(text):
        raise ValueError("not base64")
    text = text.rstrip("=").replace(".", "+")
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


def _bytes(value: Any) -> bytes | None:
    return value.encode() if isinstance(value, str) else None


# bcrypt (docs/reference.md#passwords-formats).


DJANGO_BCRYPT_SHA256 = "bcrypt_sha256$"
"""Django's BCryptSHA256PasswordHasher: bcrypt of the hex SHA-256 of the password (no 72-byte cut)."""


def _bcrypt(obj: Mapping[str, Any], hashed: str, policy: HashPolicy) -> LegacyHash:
    inner = hashed.removeprefix(DJANGO_BCRYPT_SHA256)
    match = _BCRYPT.fullmatch(inner)
    if match is None or not 4 <= int(match[1]) <= 31:
        raise HashError(
            "is not a bcrypt hash: expected $2a$, $2b$ or $2y$, a cost and 53 characters"
            " (or Django's bcrypt_sha256$ before it)"
        )
    cost = int(match[1])
    _bound("bcrypt", "cost", cost, policy.max_bcrypt_cost, "max_bcrypt_cost")
    encoded = inner.encode()
    if inner != hashed:  # stored as JSON, so the first good sign-in re-hashes it to plain bcrypt
        return LegacyHash(
            "bcrypt",
            _store(obj),
            2.0 ** (cost - 10),
            0,
            lambda password: bcrypt.checkpw(binascii.hexlify(hashlib.sha256(password).digest()), encoded),
        )
    return LegacyHash(
        "bcrypt", hashed, 2.0 ** (cost - 10), 0, lambda password: bcrypt.checkpw(password[:BCRYPT_MAX_BYTES], encoded)
    )


# Argon2 (PHC string).

_ARGON2_TYPES = {"argon2id": argon2.Type.ID, "argon2i": argon2.Type.I, "argon2d": argon2.Type.D}
_ARGON2 = re.compile(r"\$(argon2id|argon2i|argon2d)\$(?:v=(\d+)\$)?m=(\d+),t=(\d+),p=(\d+)\$([^$]+)\$([^$]+)")


def _argon2(obj: Mapping[str, Any], hashed: str, policy: HashPolicy) -> LegacyHash:
    match = _ARGON2.fullmatch(hashed)
    try:
        if match is None:
            raise ValueError(hashed)
        salt, digest = _b64(match[6]), _b64(match[7])
    except (ValueError, binascii.Error):
        raise HashError(
            "is not an argon2 hash: expected a PHC string $argon2id$v=19$m=..,t=..,p=..$salt$hash"
            " (argon2id, argon2i or argon2d)"
        ) from None
    memory, time_cost, lanes = int(match[3]), int(match[4]), int(match[5])
    bounds = policy.bounds
    _bound("argon2", "m", memory, bounds.argon2_memory_kib, "argon2_memory_kib")
    _bound("argon2", "t", time_cost, bounds.argon2_time_cost, "argon2_time_cost")
    _bound("argon2", "p", lanes, bounds.argon2_parallelism, "argon2_parallelism")
    # argon2-cffi reads the standard alphabet without padding; passlib's hashes are re-encoded so.
    version = f"v={match[2]}$" if match[2] else ""
    canonical = (
        f"${match[1]}${version}m={memory},t={time_cost},p={lanes}"
        f"${base64.b64encode(salt).decode().rstrip('=')}${base64.b64encode(digest).decode().rstrip('=')}"
    ).encode()
    argon2_type = _ARGON2_TYPES[match[1]]

    def verify(password: bytes) -> bool:
        try:
            return argon2.low_level.verify_secret(canonical, password, argon2_type)
        except (VerificationError, InvalidHashError):
            return False

    return LegacyHash("argon2", _store(obj), time_cost * memory / 120_000, memory * 1024, verify)


# scrypt (PHC string).

_SCRYPT = re.compile(r"\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([^$]*)\$([^$]+)")


def _scrypt(obj: Mapping[str, Any], hashed: str, policy: HashPolicy) -> LegacyHash:
    match = _SCRYPT.fullmatch(hashed)
    try:
        if match is None or not 1 <= int(match[1]) <= 63 or int(match[2]) < 1 or int(match[3]) < 1:
            raise ValueError(hashed)
        salt, digest = _b64(match[4]), _b64(match[5])
    except (ValueError, binascii.Error):
        raise HashError("is not a scrypt hash: expected a PHC string $scrypt$ln=..,r=..,p=..$salt$hash") from None
    n, r, p = 1 << int(match[1]), int(match[2]), int(match[3])
    _bound("scrypt", "N", n, policy.bounds.scrypt_n, "scrypt_n")
    _bound("scrypt", "r*p", r * p, policy.bounds.scrypt_rp, "scrypt_rp")
    _scrypt_memory_bound("scrypt", n, r, p, policy)
    memory = 128 * n * r

    def verify(password: bytes) -> bool:
        derived = hashlib.scrypt(password, salt=salt, n=n, r=r, p=p, dklen=len(digest), maxmem=memory + (1 << 20))
        return hmac.compare_digest(derived, digest)

    return LegacyHash("scrypt", _store(obj), n * r * p / 2**18, memory, verify)


# Firebase's modified scrypt.


def _firebase(obj: Mapping[str, Any], hashed: str, policy: HashPolicy) -> LegacyHash:
    config = policy.firebase
    members = {
        "signer_key": obj.get("signer_key", config.signer_key if config else None),
        "salt_separator": obj.get("salt_separator", config.salt_separator if config else None),
        "rounds": obj.get("rounds", config.rounds if config else None),
        "mem_cost": obj.get("mem_cost", config.mem_cost if config else None),
    }
    missing = sorted(k for k, v in members.items() if v is None)
    if missing:
        raise HashError(
            f"is a firebase_scrypt hash without {', '.join(missing)}: give them in the object or set the project's"
            " `firebase_scrypt` (Firebase's hash config)",
            {"missing": missing},
        )
    rounds, mem_cost = members["rounds"], members["mem_cost"]
    try:
        if not isinstance(rounds, int) or not isinstance(mem_cost, int) or rounds < 1 or not 1 <= mem_cost <= 63:
            raise ValueError(rounds)
        digest, salt = _b64(hashed), _b64(obj.get("salt", ""))
        signer_key, separator = _b64(str(members["signer_key"])), _b64(str(members["salt_separator"]))
        if not digest or not signer_key:
            raise ValueError(hashed)
    except (ValueError, binascii.Error):
        raise HashError(
            "is not a firebase_scrypt hash: expected base64 `password_hash` and `salt` as Firebase exports them,"
            " base64 `signer_key` and `salt_separator`, integer `rounds` and `mem_cost`"
        ) from None
    _bound("firebase_scrypt", "mem_cost", mem_cost, policy.bounds.firebase_mem_cost, "firebase_mem_cost")
    _bound("firebase_scrypt", "rounds", rounds, policy.bounds.firebase_rounds, "firebase_rounds")
    _scrypt_memory_bound("firebase_scrypt", 1 << mem_cost, rounds, 1, policy)

    def verify(password: bytes) -> bool:
        return firebase_scrypt_matches(password, digest, salt, separator, signer_key, rounds, mem_cost)

    return LegacyHash(
        "firebase_scrypt",
        _store(obj, **members),
        (1 << mem_cost) * rounds / 2**18,
        firebase_scrypt_memory(rounds, mem_cost),
        verify,
    )


# PBKDF2: PHC-style, passlib's, Django's.

_PBKDF2_PHC = re.compile(r"\$pbkdf2(?:-(sha1|sha256|sha512))?\$(?:i=(\d+)(?:,l=\d+)?|(\d+))\$([^$]*)\$([^$]+)")
_PBKDF2_DJANGO = re.compile(r"pbkdf2_(sha1|sha256)\$(\d+)\$([^$]*)\$([A-Za-z0-9+/]+=*)")


def _pbkdf2(obj: Mapping[str, Any], hashed: str, policy: HashPolicy) -> LegacyHash:
    try:
        if match := _PBKDF2_PHC.fullmatch(hashed):
            digest_name, iterations = match[1] or "sha1", int(match[2] or match[3])
            salt, digest = _b64(match[4]), _b64(match[5])
        elif match := _PBKDF2_DJANGO.fullmatch(hashed):
            digest_name, iterations = match[1], int(match[2])
            salt, digest = match[3].encode(), _b64(match[4])
        else:
            raise ValueError(hashed)
        if iterations < 1 or not digest:
            raise ValueError(hashed)
    except (ValueError, binascii.Error):
        raise HashError(
            "is not a pbkdf2 hash: expected $pbkdf2-sha256$i=..$salt$hash (sha1, sha256, sha512; PHC or passlib)"
            " or Django's pbkdf2_sha256$<iterations>$<salt>$<hash>"
        ) from None
    _bound("pbkdf2", "iterations", iterations, policy.bounds.pbkdf2_iterations, "pbkdf2_iterations")

    def verify(password: bytes) -> bool:
        derived = hashlib.pbkdf2_hmac(digest_name, password, salt, iterations, dklen=len(digest))
        return hmac.compare_digest(derived, digest)

    per_check = 100_000 if digest_name == "sha512" else 200_000
    return LegacyHash("pbkdf2", _store(obj), iterations / per_check, 0, verify)


# crypt(3), phpass, LDAP: libpass's handlers.


def _handler_format(kind: str, handler: Any, expected: str, rounds_bound: str | None, per_check: float) -> Any:
    def parse(obj: Mapping[str, Any], hashed: str, policy: HashPolicy) -> LegacyHash:
        try:
            if not handler.identify(hashed):
                raise ValueError(hashed)
            parsed = handler.from_string(hashed)
            if not parsed.checksum:  # libpass reads `$1$` as a hash with no digest
                raise ValueError(hashed)
            rounds = getattr(parsed, "rounds", None)
        except (ValueError, TypeError, IndexError, KeyError):  # libpass's parsers raise any of them
            raise HashError(f"is not a {kind} hash: expected {expected}") from None
        work = 0.001
        if rounds_bound is not None and isinstance(rounds, int):
            _bound(
                kind,
                "cost" if kind == "phpass" else "rounds",
                rounds,
                getattr(policy.bounds, rounds_bound),
                rounds_bound,
            )
            work = (2**rounds if kind == "phpass" else rounds) / per_check
        return LegacyHash(kind, _store(obj), work, 0, lambda password: bool(handler.verify(password, hashed)))

    return parse


_LDAP = {
    "{SSHA}": passlib_hash.ldap_salted_sha1,
    "{SSHA256}": passlib_hash.ldap_salted_sha256,
    "{SSHA512}": passlib_hash.ldap_salted_sha512,
    "{SHA}": passlib_hash.ldap_sha1,
}
_LDAP_PARSE = {
    prefix: _handler_format("ldap", handler, "{SSHA}, {SSHA256}, {SSHA512} or {SHA} and base64", None, 1)
    for prefix, handler in _LDAP.items()
}


def _ldap(obj: Mapping[str, Any], hashed: str, policy: HashPolicy) -> LegacyHash:
    prefix = hashed[: hashed.find("}") + 1].upper()
    parse = _LDAP_PARSE.get(prefix)
    if parse is None:
        raise HashError("is not a ldap hash: expected {SSHA}, {SSHA256}, {SSHA512} or {SHA} and base64")
    return parse(obj, prefix + hashed[len(prefix) :], policy)  # type: ignore[no-any-return]


# Plain or salted digests (opt-in).


def _digest_format(kind: str) -> Any:
    size = hashlib.new(kind).digest_size

    def parse(obj: Mapping[str, Any], hashed: str, policy: HashPolicy) -> LegacyHash:
        salt = obj.get("salt", "")
        position = obj.get("salt_position", "suffix")
        try:
            digest = bytes.fromhex(hashed) if len(hashed) == 2 * size else _b64(hashed)
            if len(digest) != size or not isinstance(salt, str) or position not in ("prefix", "suffix"):
                raise ValueError(hashed)
        except (ValueError, binascii.Error):
            raise HashError(
                f"is not a {kind} digest: expected {size} bytes in hex or base64, an optional `salt` string and"
                " `salt_position` prefix or suffix"
            ) from None
        salt_bytes = salt.encode()

        def verify(password: bytes) -> bool:
            message = salt_bytes + password if position == "prefix" else password + salt_bytes
            return hmac.compare_digest(hashlib.new(kind, message).digest(), digest)

        return LegacyHash(kind, _store(obj), 0.001, 0, verify)

    return parse


# A user waiting for lazy migration (docs/reference.md#hooks-lazy-migration).


def _migrate_on_sign_in(obj: Mapping[str, Any]) -> LegacyHash:
    """The marker `{"type": "migrate_on_sign_in"}`: nothing else in it, and no password ever matches it here.

    The sign-in checks it against the dummy hash (`PasswordVerifier.check`), as an unknown login id, then asks the
    project's `user.password_migration` hooks.
    """
    others = sorted(k for k in obj if k != "type")
    if others:
        raise HashError(
            f"is a {MIGRATE_ON_SIGN_IN} marker, which has no other member than type (found {', '.join(others)})",
            {"member": others[0]},
        )
    return LegacyHash(MIGRATE_ON_SIGN_IN, _MARKER, 0.0, 0, None)


_MARKER = msgspec.json.encode({"type": MIGRATE_ON_SIGN_IN}).decode()
"""The marker as stored: the column's usual JSON form, which `stored_format` reads."""


_Parser = Callable[[Mapping[str, Any], str, HashPolicy], LegacyHash]
_PARSERS: dict[str, _Parser] = {
    "bcrypt": _bcrypt,
    "argon2": _argon2,
    "scrypt": _scrypt,
    "firebase_scrypt": _firebase,
    "pbkdf2": _pbkdf2,
    "sha512_crypt": _handler_format(
        "sha512_crypt", passlib_hash.sha512_crypt, "$6$[rounds=N$]salt$hash", "sha_crypt_rounds", 100_000
    ),
    "sha256_crypt": _handler_format(
        "sha256_crypt", passlib_hash.sha256_crypt, "$5$[rounds=N$]salt$hash", "sha_crypt_rounds", 150_000
    ),
    "md5_crypt": _handler_format("md5_crypt", passlib_hash.md5_crypt, "$1$salt$hash", None, 1),
    "phpass": _handler_format(
        "phpass", passlib_hash.phpass, "$P$ or $H$, a cost character, salt and hash", "phpass_cost", 2**17
    ),
    "ldap": _ldap,
    **{kind: _digest_format(kind) for kind in WEAK_TYPES},
}
assert (*_PARSERS, MIGRATE_ON_SIGN_IN) == PASSWORD_TYPES


# Re-hashing (the project's `password_algorithm`).

_ARGON2ID = argon2.PasswordHasher()
"""argon2-cffi's defaults: RFC 9106's second recommendation (t=3, m=64 MiB, p=4)."""
ARGON2ID_MEMORY = _ARGON2ID.memory_cost * 1024


def hash_password(password: bytes, algorithm: str, bcrypt_cost: int) -> str:
    """The stored form of `password` hashed with `algorithm` (`bcrypt` or `argon2id`); blocking, run it on the pool."""
    if algorithm == "argon2id":
        return _store({"type": "argon2", "password_hash": _ARGON2ID.hash(password)})
    return bcrypt.hashpw(password[:BCRYPT_MAX_BYTES], bcrypt.gensalt(rounds=bcrypt_cost)).decode()


_ARGON2ID_HEAD = '{"type":"argon2","password_hash":"$argon2id$'
_ARGON2_COSTS = re.compile(r"m=(\d+),t=(\d+)")


def is_target(stored: str, algorithm: str, bcrypt_cost: int) -> bool:
    """Whether a stored hash is in the project's algorithm at its cost (else the next good sign-in re-hashes it).

    A hash cheaper than the re-hash would make (bcrypt below `bcrypt_cost`, Argon2id below argon2-cffi's `m` or `t`)
    is a legacy hash too: a wrong password against it answers faster than an unknown login id's dummy check, which
    tells that the login id exists (SECURITY.md). A stored head that ends before the costs counts as the target.
    """
    if algorithm == "argon2id":
        if not stored.startswith(_ARGON2ID_HEAD):
            return False
        costs = _ARGON2_COSTS.search(stored, len(_ARGON2ID_HEAD))
        return costs is None or (int(costs[1]) >= _ARGON2ID.memory_cost and int(costs[2]) >= _ARGON2ID.time_cost)
    if stored.startswith("{"):  # plain bcrypt is stored verbatim; Django's bcrypt_sha256 is not
        return False
    cost = stored[4:6]
    return not cost.isdigit() or int(cost) >= bcrypt_cost
