"""`--from django`: a Django `dumpdata auth.user` file as import records.

The choices every converter makes are in `conversion.py`'s docstring (and docs/migration-guide.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from userio_client.sources.conversion import (
    _KEY,
    _NOT_BCRYPT,
    ConversionError,
    Source,
    Warnings,
    _b64_phc,
    _drop,
    _drop_unknown,
    _warn,
    hash_type,
)

__all__ = ["SOURCE", "django_record"]


# Django (`manage.py dumpdata auth.user`; `--natural-foreign` writes group names instead of ids).

_DJANGO_FIELDS: Final = frozenset(
    {"password", "username", "first_name", "last_name", "email", "is_active", "is_staff", "is_superuser", "groups"}
)


def _django_password(value: str, warnings: Warnings | None) -> dict[str, Any] | None:
    """Django's `<algorithm>$...` as a password object; an unusable password (`!...`) is none.

    See docs/reference.md#passwords-formats.
    """
    if not value or value.startswith("!"):
        if value:
            _warn(warnings, _NOT_BCRYPT, "the Django password is unusable (set_unusable_password): not imported")
        return None
    if len(value) == 32 and all(c in "0123456789abcdef" for c in value):  # UnsaltedMD5PasswordHasher's bare form
        return {"type": "md5", "password_hash": value}
    algorithm, _, rest = value.partition("$")
    if algorithm in ("pbkdf2_sha256", "pbkdf2_sha1"):
        return {"type": "pbkdf2", "password_hash": value}
    if algorithm == "argon2" and hash_type("$" + rest) == "argon2":  # argon2$argon2id$v=19$...: PHC less its `$`
        return {"type": "argon2", "password_hash": "$" + rest}
    if algorithm == "bcrypt" and hash_type(rest) == "bcrypt":
        return {"type": "bcrypt", "password_hash": rest}
    # bcrypt takes Django's form (docs/reference.md#passwords-formats)
    if algorithm == "bcrypt_sha256" and hash_type(rest) == "bcrypt":
        return {"type": "bcrypt", "password_hash": value}
    if algorithm == "scrypt":
        salt, n, r, p, digest = rest.split("$") if rest.count("$") == 4 else ("", "0", "", "", "")
        if salt and n.isdigit() and int(n) > 1 and int(n) & (int(n) - 1) == 0:
            ln = int(n).bit_length() - 1
            phc = f"$scrypt$ln={ln},r={r},p={p}${_b64_phc(salt.encode())}${digest.rstrip('=')}"
            return {"type": "scrypt", "password_hash": phc}
    if algorithm in ("md5", "sha1") and rest.count("$") == 1:
        salt, digest = rest.split("$")
        return {"type": algorithm, "password_hash": digest, "salt": salt, "salt_position": "prefix"}
    _warn(
        warnings,
        f"{_NOT_BCRYPT}:django_{algorithm}",
        f"Django's {algorithm} hasher has no import format: the user must reset the password",
    )
    return None


def django_record(row: Mapping[str, Any], *, upsert: bool = False, warnings: Warnings | None = None) -> dict[str, Any]:
    """An object of `dumpdata auth.user` (`{"model", "pk", "fields"}`) as an import record.

    `pbkdf2_sha256`/`pbkdf2_sha1` hashes are sent as Django writes them (`pbkdf2`), `argon2`, `bcrypt` and
    `scrypt` as PHC strings, `md5`/`sha1` as salted digests (the project must allow weak hashes); `is_active`
    false becomes `disabled`; `is_staff`/`is_superuser` (when true) and the primary key go to
    `custom_attributes` (`django_user_id`); groups by natural key (`--natural-foreign`) become groups.
    """
    fields = row.get("fields")
    if not isinstance(fields, dict):
        raise ConversionError("a dumpdata object has `fields`")
    record: dict[str, Any] = {}
    for source, target in (
        ("username", "preferred_username"),
        ("email", "email"),
        ("first_name", "given_name"),
        ("last_name", "family_name"),
    ):
        value = fields.get(source)
        if isinstance(value, str) and value:
            record[target] = value
    if "given_name" in record or "family_name" in record:
        record["name"] = f"{record.get('given_name', '')} {record.get('family_name', '')}".strip()
    active = fields.get("is_active")
    if active is False or (upsert and active is True):
        record["disabled"] = active is False
    custom: dict[str, Any] = {k: True for k in ("is_staff", "is_superuser") if fields.get(k) is True}
    if row.get("pk") is not None:
        custom["django_user_id"] = row["pk"]
    if custom:
        record["custom_attributes"] = custom
    if (password := _django_password(str(fields.get("password") or ""), warnings)) is not None:
        record["password"] = password
    groups = fields.get("groups") or []
    names = [g[0] for g in groups if isinstance(g, list) and g and isinstance(g[0], str)]
    if names:
        valid = [n for n in names if _KEY.fullmatch(n)]
        if valid:
            record["groups"] = valid
        if len(valid) < len(names):
            _warn(warnings, "dropped:groups", f"groups {sorted(set(names) - set(valid))} are not valid keys here")
    elif groups:
        _drop(warnings, "groups", "dumped as ids: run dumpdata with --natural-foreign to carry them by name")
    for member in ("last_login", "date_joined", "user_permissions"):
        if fields.get(member):
            _drop(warnings, member)
    _drop_unknown(fields, _DJANGO_FIELDS | {"last_login", "date_joined", "user_permissions"}, warnings)
    if row.get("model") not in (None, "auth.user"):
        _warn(warnings, "not_a_user", f"a {row.get('model')} object, not auth.user: converted as a user anyway")
    return record


SOURCE: Final = Source("django", "ndjson", django_record, ".ndjson", id_attribute="django_user_id", id_name="Django pk")
"""`--from django`."""
