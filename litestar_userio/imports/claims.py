"""Who already holds what records claim: their login ids, linked identities and user ids.

See docs/reference.md#import-linked-identities and docs/reference.md#import-user-ids.

The one lookup an import chunk and the single-user API (`accounts/user_admin.py`) make before the rules run
(`imports/rules.py` refuses a claim another user holds: `DuplicatedIdentity`, `DuplicatedUserID`). The admin path
once looked up login ids alone, so a linked identity another user held went on to the unique index, and every
retry of the change met it again (`WriteConflict`, a 500).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from litestar_userio.db.engine import Tx
from litestar_userio.imports.import_schemas import UserRecord
from litestar_userio.imports.planning import LoginKey, record_login_keys
from litestar_userio.users.login_id_rules import LoginIDRules
from litestar_userio.users.user_repository import UserRepository

__all__ = ["Claims", "by_attribute", "look_up_claims", "wanted_login_ids"]


@dataclass
class Claims:
    """The stored holders of what the records claim."""

    owners: dict[LoginKey, str] = field(default_factory=dict)
    """(attribute, normalized login id) -> the user holding it."""
    oauth_owners: dict[tuple[str, str], str] = field(default_factory=dict)
    """(provider alias, subject) -> the user it is linked to."""
    taken_ids: set[str] = field(default_factory=set)
    """The records' `sub`s some stored user, in any project, already has."""
    key_owners: dict[str, str] = field(default_factory=dict)
    """Login key (`login_ids.login_key`) -> the user holding it, whatever the kind: one login id names one user."""


async def look_up_claims(
    tx: Tx,
    users: UserRepository,
    project_id: str,
    records: list[UserRecord],
    rules: LoginIDRules,
    *,
    holders: bool = True,
) -> Claims:
    """The holders of the records' login ids and linked identities, and which of their `sub`s are taken.

    A query each (a login id's holders by kind and by the key unique across kinds in one); `holders=False` (an
    optimistic import chunk whose sample names no stored user) skips the holders.
    """
    claims = Claims()
    if holders:
        if login_ids := wanted_login_ids(records, rules):
            claims.owners, claims.key_owners = await users.find_holders(tx, project_id, login_ids)
        if pairs := oauth_pairs(records):
            claims.oauth_owners = await users.find_oauth_owners(tx, project_id, pairs)
    if subs := {record.sub for record in records if isinstance(record.sub, str)}:
        claims.taken_ids = await users.existing_ids(tx, subs)
    return claims


def wanted_login_ids(records: list[UserRecord], rules: LoginIDRules) -> dict[str, set[str]]:
    """The records' normalized login ids by attribute, as `UserRepository.find_owners` takes them."""
    return by_attribute(key for record in records for key in record_login_keys(record, rules))


def oauth_pairs(records: list[UserRecord]) -> set[tuple[str, str]]:
    """The (provider alias, subject) pairs of the records' linked identities."""
    return {(i.provider_alias, i.subject) for r in records if isinstance(r.identities, list) for i in r.identities}


def by_attribute(keys: Iterable[LoginKey]) -> dict[str, set[str]]:
    """Login keys grouped as `UserRepository.find_owners` takes them: attribute -> normalized values."""
    grouped: dict[str, set[str]] = {}
    for attribute, value in keys:
        grouped.setdefault(attribute, set()).add(value)
    return grouped
