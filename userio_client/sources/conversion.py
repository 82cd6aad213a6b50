"""The interface every `--from` source implements (`Source`) and the helpers the converters share.

`--from`: turn another system's user export into import records (docs/reference.md#import-records).

Each converter keeps what our API accepts and drops the rest (timestamps, login counters, identities,
provider internals), so a converted record never fails for a key the server refuses. The choices, also in
docs/migration-guide.md:

- The old system's user id is kept as the user's `sub` where it is a valid user id
  (docs/reference.md#import-user-ids: `auth0|...`, Keycloak's UUIDs, Firebase's uids, Django's primary keys), so
  rows of the host's other tables that point at the user still do; one that is not is warned about
  (`id_not_kept`) and the user gets a new id; `--new-ids` gives every user a new id (`keep_old_id`). The id is
  also kept in a custom attribute (`auth0_user_id`, `cognito_username`, ...).
- `false` for `email_verified`, `phone_number_verified` and `disabled` is sent only with `--upsert`: on an
  insert it is the default already and the server would warn on every record that it has no effect.
- Every password hash a source gives is carried in its own format (docs/reference.md#passwords-formats: `bcrypt`,
  `argon2`, `pbkdf2`, `firebase_scrypt`, ...); a hash no format takes, and MFA a source cannot export, means a reset or
  re-enrolment.
- OAuth/OIDC identities (Google, Apple, an OIDC provider) become linked identities
  (docs/reference.md#import-linked-identities).
- Whatever a converter cannot carry (an unknown hash, a SAML identity, MFA, a passkey) is a warning on that
  record (`{"kind", "message"}` in the report, counted in the run's summary), and so is every member of the
  source record that is dropped (`dropped:<member>`, counted by name): never a silent drop.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from userio_core.ids import is_user_id

__all__ = ["ConversionError", "Source", "SourceName", "Warnings", "hash_type", "keep_old_id"]


SourceName = Literal["auth0", "cognito-csv", "supabase", "clerk", "userio", "firebase", "keycloak", "django", "kratos"]
Warnings = list[dict[str, str]]
"""Where a converter notes what it could not carry: `{"kind": ..., "message": ...}` per item."""


class ConversionError(ValueError):
    """A source record that cannot be converted (a malformed value); the CLI adds the line number."""


@dataclass(frozen=True, slots=True)
class Source:
    """A `--from` source: how its file is read and how one of its records becomes ours."""

    name: SourceName
    reads: Literal["ndjson", "csv"]
    convert: Callable[..., dict[str, Any]]
    failed_suffix: str
    """The failed file keeps the source's own format, so it can be resubmitted with the same `--from`."""
    members: str | None = None
    """JSON sources: the member of a top-level object that holds the records (`{"users": [...]}`), if any; an
    array or ndjson of records is read too (a failed file is ndjson)."""
    csv_header: tuple[str, ...] | None = None
    """A headerless CSV the source also writes (Firebase), read with these columns by `convert_csv`."""
    convert_csv: Callable[..., dict[str, Any]] | None = None
    id_attribute: str | None = None
    """The custom attribute the converter keeps the old system's user id in (`auth0_user_id`): `keep_old_id` makes
    it the record's `sub` too."""
    id_name: str = "old id"
    """What the source calls that id, for messages (`Auth0 user_id`, `Firebase localId`, `Django pk`)."""
    keep_ids: bool = True
    """Whether the old id becomes `sub` (False with `--new-ids`: every user gets a new id)."""


_ID_NOT_KEPT = "id_not_kept"


def keep_old_id(source: Source, record: dict[str, Any], warnings: Warnings | None) -> bool:
    """Give a converted record the old system's id as `sub` where it is a valid user id; True when it did.

    One that is not (docs/reference.md#import-user-ids) is a warning on the record, and the server gives the user
    a new id; the id stays in its custom attribute either way.
    """
    if not source.keep_ids or source.id_attribute is None:
        return False
    custom = record.get("custom_attributes")
    old = custom.get(source.id_attribute) if isinstance(custom, dict) else None
    if old is None or isinstance(old, bool) or not isinstance(old, str | int):
        return False
    text = str(old)
    if not is_user_id(text):
        _warn(
            warnings,
            _ID_NOT_KEPT,
            f"the {source.id_name} {text[:140]!r} is not a valid user id (1-128 of A-Za-z0-9._:|@-, starting with a"
            f" letter or digit): the user gets a new id; the old one stays in custom_attributes.{source.id_attribute}",
        )
        return False
    record["sub"] = text
    return True


def _warn(warnings: Warnings | None, kind: str, message: str) -> None:
    if warnings is not None:
        warnings.append({"kind": kind, "message": message})


_NOT_BCRYPT = "password_not_carried"
_SOCIAL = "social_identity_not_carried"
_MFA = "mfa_not_carried"


def _hash_kind(value: str) -> str:
    if value.startswith("$"):
        return value.split("$")[1] or "unknown"
    return "unknown"


def _string_list(value: Any) -> list[str] | None:
    return list(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


# Password hashes in the shapes of docs/reference.md#passwords-formats: what a converter sends for each hash its source
# gives.

_PREFIXED_TYPES: Final = (
    (("$2a$", "$2b$", "$2y$", "bcrypt_sha256$$2"), "bcrypt"),
    (("$argon2id$", "$argon2i$", "$argon2d$"), "argon2"),
    (("$scrypt$",), "scrypt"),
    (("$pbkdf2-sha1$", "$pbkdf2-sha256$", "$pbkdf2-sha512$", "$pbkdf2$", "pbkdf2_sha256$", "pbkdf2_sha1$"), "pbkdf2"),
    (("$6$",), "sha512_crypt"),
    (("$5$",), "sha256_crypt"),
    (("$1$",), "md5_crypt"),
    (("$P$", "$H$"), "phpass"),
    (("{SSHA}", "{SSHA256}", "{SSHA512}", "{SHA}", "{ssha}", "{sha}"), "ldap"),
)


def hash_type(value: str) -> str | None:
    """The `password.type` of a self-describing hash string (PHC, crypt, LDAP, Django), or None.

    See docs/reference.md#passwords-formats.
    """
    for prefixes, type_ in _PREFIXED_TYPES:
        if value.startswith(prefixes):
            return type_
    return None


def _password(value: Any, warnings: Warnings | None, where: str) -> dict[str, Any] | None:
    """A self-describing hash as a password object; another (or an unusable one) is a warning."""
    if not isinstance(value, str) or not value:
        return None
    type_ = hash_type(value)
    if type_ is None:
        _warn(
            warnings,
            _NOT_BCRYPT,
            f"{where} is a {_hash_kind(value)} hash no import format takes: not imported, the user must reset the"
            " password",
        )
        return None
    return {"type": type_, "password_hash": value}


def _b64_phc(data: bytes) -> str:
    """The PHC string format's base64: standard alphabet, no padding."""
    return base64.b64encode(data).decode().rstrip("=")


def _drop(warnings: Warnings | None, member: str, why: str = "no import record member holds it") -> None:
    """A source member that is not carried: one warning kind per member, so the summary counts each by name."""
    _warn(warnings, f"dropped:{member}", f"{member} is not carried: {why}")


def _drop_unknown(user: Mapping[str, Any], known: frozenset[str], warnings: Warnings | None) -> None:
    for member, value in user.items():
        if member not in known and value not in (None, "", [], {}, False):
            _drop(warnings, member)


def _identity(alias: str, subject: Any, claims: Mapping[str, Any], provider_type: str | None = None) -> dict[str, Any]:
    identity: dict[str, Any] = {"type": "oauth", "provider_alias": alias, "subject": str(subject)}
    if provider_type is not None and provider_type != alias:
        identity["provider_type"] = provider_type
    kept = {k: v for k, v in claims.items() if v not in (None, "")}
    if kept:
        identity["claims"] = kept
    return identity


def _firebase_password(hash_value: str, salt: str, hash_config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not hash_value:
        return None
    password: dict[str, Any] = {"type": "firebase_scrypt", "password_hash": hash_value, "salt": salt}
    password.update(hash_config or {})
    return password


_KEY = re.compile(r"[a-zA-Z_][a-zA-Z0-9:_]{0,39}")
"""A role or group key the server takes (`userio_core/attribute_formats.KEY_PATTERN`; not imported: its validators
cost 0.1 s)."""
