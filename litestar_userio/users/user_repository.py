"""Loading users in bulk into `UserState`s and writing back what changed, in a handful of queries.

A chunk of an import touches a few hundred users: one query finds them by login id, five load them whole
(locked on PostgreSQL), and the write-back is a COPY or one statement per table.

The write-back is the one place every change of a user goes through (import, admin API, SCIM, sign-in), so it is
also the one place that appends to the change log (`_log`, `changes/`): in the same transaction, with the user as
exported after the change; a user whose state did not change is neither written nor logged.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from litestar_userio.changes.change_repository import ChangeRepository
from litestar_userio.changes.entries import ChangeKind, ChangeOrigin, UserChange
from litestar_userio.db.engine import Row, Tx
from litestar_userio.db.tables import Authenticator, Group, RefreshToken, Role, User
from litestar_userio.users.exported import document_of, without_secrets
from litestar_userio.users.model import (
    AccountState,
    AuthenticatorState,
    LoginID,
    OAuthLink,
    UserState,
    account_state,
    ends_sessions,
)
from litestar_userio.users.search import AllOf, AnyOf, Compare, Condition, Constant, Negation, UserSort
from userio_core.attribute_formats import LOGIN_ID_ATTRIBUTES
from userio_core.ids import new_id
from userio_core.login_ids import login_key

__all__ = [
    "LoadedUsers",
    "UserRepository",
    "lossless_rows_query",
    "sign_in_user_from_row",
    "sign_in_user_query",
    "user_from_row",
    "user_rows_query",
]

_ATTRIBUTE_OF_KEY = {key: attribute for attribute, key in LOGIN_ID_ATTRIBUTES.items()}
_VERIFIED_FLAGS = ("email_verified", "phone_number_verified")
_KEY_TABLES: dict[str, type[Role] | type[Group]] = {"userio_role": Role, "userio_group": Group}


_SECOND = "\x1f"
"""Joins a login key and a kind into the stored key of a user's second login id with that key (its email that is
its username too): no login id holds a control character, so no first holder's key looks like one. One unique index,
`(project_id, unique_key)`, then keeps both rules: one login id names one user across kinds, and one value per kind
(migration 2026-12-02T01; a second index on `(project_id, login_id_key, normalized_value)` cost each imported record
about 260 bytes of WAL)."""


def _stored_key(login_id: LoginID) -> str:
    """`userio_identity.unique_key` of `login_id`: its login key where it holds it, else key and kind joined."""
    if login_id.unique_key is not None:
        return login_id.unique_key
    return f"{login_key(login_id.normalized)}{_SECOND}{login_id.key}"


def _held_key(stored: str | None) -> str | None:
    """The login key a stored `unique_key` holds (None for a second login id with that key)."""
    return None if stored is None or _SECOND in stored else stored


def _probe(kind: str, normalized: str) -> list[str]:
    """The stored keys a login id of `kind` with value `normalized` may have: what an index probe looks up."""
    key = login_key(normalized)
    return [key, f"{key}{_SECOND}{kind}"]


def _login_id_match(args: list[str], login_ids: Mapping[str, str]) -> str:
    """A condition on `userio_identity i` finding one of `login_ids` (attribute -> normalized) by index probes.

    Its values are appended to `args`; an ORDER BY follows that puts the key's holder first.

    Where two users held one key before the rule of migration 2026-12-01T02, the holder is the one signed in, never
    whichever row comes first.
    """
    clauses, held = [], []
    for attribute, normalized in login_ids.items():
        kind = LOGIN_ID_ATTRIBUTES[attribute]
        args += [*_probe(kind, normalized), kind, normalized]
        n = len(args)
        clauses.append(
            f"(i.unique_key IN (${n - 3}, ${n - 2}) AND i.login_id_key = ${n - 1} AND i.normalized_value = ${n})"
        )
        held.append(f"${n - 3}")
    return (
        f"({' OR '.join(clauses) or 'FALSE'})"
        f" ORDER BY CASE WHEN i.unique_key IN ({', '.join(held) or 'NULL'}) THEN 0 ELSE 1 END, i.created_at, i.id"
    )


def _dump(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else (value or {})


@dataclass
class LoadedUsers:
    """Users as loaded, plus what the write-back compares against."""

    users: dict[str, UserState]
    identities: dict[str, tuple[str, str, str, str | None]] = field(default_factory=dict)
    """Identity id -> (user id, original, normalized, unique key) as loaded."""
    authenticators: dict[str, str] = field(default_factory=dict)
    """Authenticator id -> user id as loaded."""
    oauth: set[str] = field(default_factory=set)
    """The ids of the linked identities as loaded."""
    before: dict[str, tuple[bytes, bool]] = field(default_factory=dict)
    """User id -> (`state_of` the user, its `disabled` flag) as loaded: what tells a change from a no-op."""
    accounts: dict[str, AccountState] = field(default_factory=dict)
    """User id -> its disable state and primary password as loaded (`ends_sessions` compares against it)."""

    def changes(self, user: UserState) -> bool:
        """Whether `user` (new, or one of these as a change left it) is a change to write: a no-op is not."""
        return user.changed and (user.is_new or self.before.get(user.id, (b"", False))[0] != state_of(user))


_encode_state = msgspec.json.Encoder(order="sorted").encode


def state_of(user: UserState) -> bytes:
    """Everything a change may alter of `user`, as bytes: equal before and after means nothing changed.

    `updated_at` is not part of it (a write that changes nothing else is no change); secrets are (a new password).
    """
    authenticators = sorted(
        _encode_state((a.kind, a.type, a.password_hash, a.totp_secret, a.oob_target, a.expire_after))
        for a in user.authenticators
    )
    links = sorted(_encode_state((o.provider_alias, o.subject, o.provider_type, o.claims)) for o in user.oauth.values())
    return _encode_state(
        (
            user.disabled,
            user.standard_attributes(),
            user.custom,
            sorted((i.attribute, i.original, i.normalized) for i in user.login_ids.values()),
            authenticators,
            links,
            sorted(user.roles),
            sorted(user.groups),
            user.account_valid_from,
            user.account_valid_until,
            user.temporarily_disabled_from,
            user.temporarily_disabled_until,
            user.disable_reason,
        )
    )


def user_rows_query(tx: Tx, where: str) -> str:
    """One row per user with its related rows aggregated as JSON; `where` filters `userio_user u`."""
    identity = ("i.login_id_key", "i.login_id_type", "i.original_value", "i.normalized_value", "i.id", "i.created_at")
    return (
        "SELECT u.id, u.created_at, u.updated_at, u.last_login_at, u.is_disabled, u.account_valid_from,"
        " u.account_valid_until, u.temporarily_disabled_from, u.temporarily_disabled_until,"
        " u.standard_attributes, u.custom_attributes, u.external_id,"
        f" (SELECT {tx.json_rows(*identity)}"
        "  FROM userio_identity i WHERE i.user_id = u.id) AS identities,"
        # Password hashes are never read.
        f" (SELECT {tx.json_rows('a.kind', 'a.type', 'a.totp_secret', 'a.oob_target')} FROM (SELECT * FROM"
        "  userio_authenticator WHERE user_id = u.id AND NOT (kind = 'primary' AND type = 'password')"
        "  ORDER BY created_at, id) a) AS authenticators,"
        f"{_links_and_keys(tx)} FROM userio_user u WHERE {where}"
    )


def _links_and_keys(tx: Tx) -> str:
    """The columns both user queries end with: linked identities in creation order, role and group keys sorted."""
    return (
        f" (SELECT {tx.json_rows('o.provider_alias', 'o.provider_type', 'o.subject', 'o.claims')} FROM (SELECT *"
        "  FROM userio_oauth_identity WHERE user_id = u.id ORDER BY created_at, id) o) AS oauth_identities,"
        f" (SELECT {tx.json_values('k.key')} FROM (SELECT r.key FROM userio_user_role m JOIN userio_role r"
        "  ON r.id = m.role_id WHERE m.user_id = u.id ORDER BY r.key) k) AS roles,"
        f" (SELECT {tx.json_values('k.key')} FROM (SELECT g.key FROM userio_user_group m JOIN userio_group g"
        "  ON g.id = m.group_id WHERE m.user_id = u.id ORDER BY g.key) k) AS groups"
    )


def lossless_rows_query(tx: Tx, where: str) -> str:
    """One row per user with everything an import record carries, secrets included; `where` filters `userio_user u`.

    The lossless export's (docs/reference.md#export-lossless): `user_rows_query`'s user, plus the disable window,
    every authenticator with its password hash and expiry, and login ids as originally given.
    """
    authenticator = ("a.kind", "a.type", "a.password_hash", "a.totp_secret", "a.oob_target", "a.expire_after")
    return (
        "SELECT u.id, u.is_disabled, u.account_valid_from, u.account_valid_until, u.temporarily_disabled_from,"
        " u.temporarily_disabled_until, u.standard_attributes, u.custom_attributes,"
        f" (SELECT {tx.json_rows('i.login_id_key', 'i.original_value')}"
        "  FROM userio_identity i WHERE i.user_id = u.id) AS identities,"
        f" (SELECT {tx.json_rows(*authenticator)}"
        "  FROM (SELECT * FROM userio_authenticator WHERE user_id = u.id ORDER BY created_at, id) a) AS authenticators,"
        f"{_links_and_keys(tx)} FROM userio_user u WHERE {where}"
    )


def sign_in_user_query(tx: Tx, where: str) -> str:
    """`user_rows_query`'s user with its primary password hash and expiry (`SignInUser`); `where` filters `u`."""
    return (
        f"SELECT q.*, a.password_hash, a.expire_after FROM ({user_rows_query(tx, where)}) q"
        " LEFT JOIN userio_authenticator a ON a.user_id = q.id AND a.kind = 'primary' AND a.type = 'password'"
    )


def sign_in_user_from_row(row: Row) -> SignInUser:
    """A `SignInUser` from a row of `sign_in_user_query`."""
    user = user_from_row(row)
    state = SignInState(
        user.disabled,
        user.account_valid_from,
        user.account_valid_until,
        row["expire_after"],
        user.temporarily_disabled_from,
        user.temporarily_disabled_until,
    )
    return SignInUser(user, state, row["password_hash"])


def _json_list(value: Any) -> list[Any]:
    return [] if value is None else list(msgspec.json.decode(value))


def user_from_row(row: Row) -> UserState:
    """A `UserState` from a row of `user_rows_query` (no second factors: the token path needs none)."""
    standard = _json(row["standard_attributes"])
    verified = {flag.removesuffix("_verified") for flag in _VERIFIED_FLAGS if standard.get(flag)}
    for attribute in (*LOGIN_ID_ATTRIBUTES, *_VERIFIED_FLAGS):
        standard.pop(attribute, None)
    user = UserState(
        id=row["id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        disabled=bool(row["is_disabled"]),
        standard=standard,
        custom=_json(row["custom_attributes"]),
        account_valid_from=row["account_valid_from"],
        account_valid_until=row["account_valid_until"],
        temporarily_disabled_from=row["temporarily_disabled_from"],
        temporarily_disabled_until=row["temporarily_disabled_until"],
        last_login_at=row["last_login_at"],
        roles=set(_json_list(row["roles"])),
        groups=set(_json_list(row["groups"])),
    )
    for key, _type, original, normalized, identity_id, created_at in _json_list(row["identities"]):
        attribute = _ATTRIBUTE_OF_KEY[key]
        created = datetime.fromisoformat(created_at) if isinstance(created_at, str) else row["created_at"]
        user.login_ids.setdefault(attribute, LoginID(identity_id, attribute, key, original, normalized, created))
    user.verified = verified & set(user.login_ids)
    return user


@dataclass(frozen=True)
class SignInState:
    """What a sign-in checks once the credentials passed: disabled, the valid period, the password's expiry."""

    disabled: bool
    account_valid_from: datetime | None
    account_valid_until: datetime | None
    password_expire_after: datetime | None
    """`expire_after` of the primary password; None without one."""
    temporarily_disabled_from: datetime | None = None
    temporarily_disabled_until: datetime | None = None


@dataclass(frozen=True)
class SignInUser:
    """What a sign-in or a refresh reads of a user, in one query: the user as tokens see it, its state, its hash."""

    user: UserState
    """With login ids, roles, groups and attributes (`user_rows_query`)."""
    state: SignInState
    password_hash: str | None
    """The primary password's stored hash; None without one."""


class UserRepository:
    """Bulk reads and writes of whole users inside a caller's transaction."""

    def __init__(self) -> None:
        self._changes = ChangeRepository()

    async def sign_in_state(self, tx: Tx, project_id: str, user_id: str) -> SignInState | None:
        """The user's valid period and primary password expiry; None when the project has no such user."""
        row = await tx.fetchrow(
            "SELECT u.is_disabled, u.account_valid_from, u.account_valid_until, a.expire_after,"
            " u.temporarily_disabled_from, u.temporarily_disabled_until FROM userio_user u"
            " LEFT JOIN userio_authenticator a"
            " ON a.user_id = u.id AND a.kind = 'primary' AND a.type = 'password'"
            " WHERE u.id = $1 AND u.project_id = $2",
            user_id,
            project_id,
        )
        if row is None:
            return None
        return SignInState(
            bool(row["is_disabled"]),
            row["account_valid_from"],
            row["account_valid_until"],
            row["expire_after"],
            row["temporarily_disabled_from"],
            row["temporarily_disabled_until"],
        )

    async def sign_in_user(
        self, tx: Tx, project_id: str, *, login_ids: Mapping[str, str] | None = None, user_id: str | None = None
    ) -> SignInUser | None:
        """The user a sign-in (`login_ids`: attribute -> normalized) or a refresh (`user_id`) names, whole, or None.

        One statement: `user_rows_query`'s user with its sign-in state and primary password hash, where a password
        grant read the hash, the state twice and the user twice (5 statements, issue 47).
        """
        args: list[str] = [project_id]
        if login_ids is not None:
            where = (
                "u.project_id = $1 AND u.id = (SELECT i.user_id FROM userio_identity i"
                f" WHERE i.project_id = $1 AND {_login_id_match(args, login_ids)} LIMIT 1)"
            )
        else:
            assert user_id is not None
            args.append(user_id)
            where = "u.project_id = $1 AND u.id = $2"
        row = await tx.fetchrow(sign_in_user_query(tx, where), *args)
        return None if row is None else sign_in_user_from_row(row)

    async def record_sign_in(self, tx: Tx, project_id: str, user_id: str, at: datetime) -> None:
        """Set the user's `last_login_at`."""
        await tx.run(User.update({User.last_login_at: at}).where((User.project == project_id) & (User.id == user_id)))

    async def find_password(
        self, tx: Tx, project_id: str, login_ids: Mapping[str, str]
    ) -> tuple[str, str | None] | None:
        """(user id, primary password hash or None) of a user owning one of `login_ids` (attribute -> normalized).

        None when no user of the project has any of them.
        """
        args: list[str] = [project_id]
        row = await tx.fetchrow(
            "SELECT i.user_id, a.password_hash FROM userio_identity i"
            " LEFT JOIN userio_authenticator a"
            " ON a.user_id = i.user_id AND a.kind = 'primary' AND a.type = 'password'"
            f" WHERE i.project_id = $1 AND {_login_id_match(args, login_ids)} LIMIT 1",
            *args,
        )
        return (row["user_id"], row["password_hash"]) if row is not None else None

    async def replace_password_hash(self, tx: Tx, project_id: str, user_id: str, old: str, new: str) -> None:
        """Swap the user's primary password hash `old` for `new`; nothing when it is no longer `old`."""
        a = Authenticator
        await tx.run(
            a.update({a.password_hash: new}).where(
                (a.project_id == project_id)
                & (a.user == user_id)
                & (a.kind == "primary")
                & (a.type == "password")
                & (a.password_hash == old)
            )
        )

    async def password_heads(self, tx: Tx, project_id: str) -> list[tuple[str | None, int, int]]:
        """(head of the primary password hash or None, users, of them never signed in), per head, one scan.

        The head is what tells the format without the secret (`passwords.formats.stored_format`): bcrypt is stored
        verbatim, its first 7 characters the variant and cost (`$2b$04$`: a cost below the re-hash's is legacy, as
        `is_target` says); every other format as JSON with `type` first; 44 characters of an argon2 one tell the
        variant, 30 hold the longest type (`migrate_on_sign_in`, docs/reference.md#hooks-lazy-migration) and its
        closing quote, and no secret of the others. A GROUP BY over a CASE, which Piccolo's builder does not express.
        """
        rows = await tx.fetch(
            "SELECT CASE WHEN a.password_hash IS NULL THEN NULL"
            " WHEN a.password_hash NOT LIKE '{%' THEN substr(a.password_hash, 1, 7)"
            ' WHEN a.password_hash LIKE \'{"type":"argon2"%\' THEN substr(a.password_hash, 1, 44)'
            " ELSE substr(a.password_hash, 1, 30) END AS head,"
            " COUNT(*) AS users, SUM(CASE WHEN u.last_login_at IS NULL THEN 1 ELSE 0 END) AS never"
            " FROM userio_user u LEFT JOIN userio_authenticator a"
            " ON a.user_id = u.id AND a.kind = 'primary' AND a.type = 'password'"
            " WHERE u.project_id = $1 GROUP BY 1",
            project_id,
        )
        return [(row["head"], int(row["users"]), int(row["never"] or 0)) for row in rows]

    async def find_owners(
        self, tx: Tx, project_id: str, login_ids: Mapping[str, Iterable[str]]
    ) -> dict[tuple[str, str], str]:
        """(attribute, normalized value) -> user id, for the login ids that exist; one query (`find_holders`)."""
        owners, _ = await self.find_holders(tx, project_id, login_ids)
        return owners

    async def find_holders(
        self, tx: Tx, project_id: str, login_ids: Mapping[str, Iterable[str]]
    ) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
        """Who holds `login_ids` (attribute -> normalized values), in one query over the one unique index.

        Two maps: (attribute, normalized value) -> user id, for the login ids that exist; and login key
        (`login_ids.login_key`) -> user id, for the keys of those values some login id of the project holds, whatever
        its kind (what refuses a username spelled like another user's email). On PostgreSQL each key is an index
        probe (LATERAL ... LIMIT 1: the key is unique, and the LIMIT keeps the planner from flattening the probe into
        a join): while a table grows fast from empty, as in a first bulk import, its statistics lag, and `= ANY(...)`
        or the flattened join was planned as a scan of the whole project (0.5 s per chunk at 70 000 identities; on
        bench/import.py without the LIMIT, 11 ms per chunk's sample).
        """
        wanted = {(LOGIN_ID_ATTRIBUTES[a], v) for a, values in login_ids.items() for v in values}
        if not wanted:
            return {}, {}
        keys = sorted({key for kind, value in wanted for key in _probe(kind, value)})
        if tx.dialect == "postgres":
            rows = await tx.fetch(
                "SELECT i.unique_key, i.login_id_key, i.normalized_value, i.user_id FROM unnest($2::text[]) AS k(key)"
                " CROSS JOIN LATERAL (SELECT unique_key, login_id_key, normalized_value, user_id FROM userio_identity"
                " WHERE project_id = $1 AND unique_key = k.key LIMIT 1) AS i",
                project_id,
                keys,
            )
        else:
            rows = await tx.fetch(
                "SELECT unique_key, login_id_key, normalized_value, user_id FROM userio_identity"
                " WHERE project_id = $1 AND unique_key IN (SELECT value FROM json_each($2))",
                project_id,
                tx.array(keys),
            )
        owners = {
            (_ATTRIBUTE_OF_KEY[r["login_id_key"]], r["normalized_value"]): r["user_id"]
            for r in rows
            if (r["login_id_key"], r["normalized_value"]) in wanted
        }
        key_owners = {r["unique_key"]: r["user_id"] for r in rows if _SECOND not in r["unique_key"]}
        return owners, key_owners

    async def find_oauth_owners(
        self, tx: Tx, project_id: str, pairs: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], str]:
        """(provider alias, subject) -> user id, for the linked identities that exist; one query."""
        wanted = sorted(set(pairs))
        if not wanted:
            return {}
        rows = await tx.fetch(
            "SELECT provider_alias, subject, user_id FROM userio_oauth_identity WHERE project_id = $1"
            " AND (provider_alias, subject) IN"
            + (
                " (SELECT * FROM unnest($2::text[], $3::text[]))"
                if tx.dialect == "postgres"
                else " (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each($2))"
            ),
            project_id,
            *(([a for a, _ in wanted], [s for _, s in wanted]) if tx.dialect == "postgres" else (tx.array(wanted),)),
        )
        return {(r["provider_alias"], r["subject"]): r["user_id"] for r in rows}

    async def existing_ids(self, tx: Tx, user_ids: Iterable[str]) -> set[str]:
        """Those of `user_ids` some user has, in any project: ids are unique in the deployment.

        See docs/reference.md#import-user-ids.
        """
        ids = sorted(set(user_ids))
        if not ids:
            return set()
        return {row["id"] for row in await tx.run(User.select(User.id).where(User.id.is_in(ids)))}

    async def load_one(self, tx: Tx, project_id: str, user_id: str) -> UserState | None:
        """One user of a project with its login ids, roles and groups, in one query (token issuance)."""
        row = await tx.fetchrow(user_rows_query(tx, "u.id = $1 AND u.project_id = $2"), user_id, project_id)
        return None if row is None else user_from_row(row)

    async def load(self, tx: Tx, user_ids: Iterable[str], *, lock: bool = True) -> LoadedUsers:
        """Load users whole, locking their rows (in id order, so concurrent chunks cannot deadlock)."""
        ids = sorted(set(user_ids))
        loaded = LoadedUsers(users={})
        if not ids:
            return loaded
        array = tx.array(ids)
        for row in await tx.fetch(
            "SELECT id, created_at, updated_at, is_disabled, standard_attributes, custom_attributes,"
            " account_valid_from, account_valid_until, temporarily_disabled_from, temporarily_disabled_until,"
            " disable_reason, last_login_at"
            f" FROM userio_user WHERE {tx.any('id', 1)} ORDER BY id{tx.for_update if lock else ''}",
            array,
        ):
            standard = _json(row["standard_attributes"])
            verified = {flag.removesuffix("_verified") for flag in _VERIFIED_FLAGS if standard.get(flag)}
            for attribute in (*LOGIN_ID_ATTRIBUTES, *_VERIFIED_FLAGS):
                standard.pop(attribute, None)
            loaded.users[row["id"]] = UserState(
                id=row["id"],
                created_at=row["created_at"],
                updated_at=row["updated_at"],
                disabled=bool(row["is_disabled"]),
                standard=standard,
                custom=_json(row["custom_attributes"]),
                verified=verified,
                account_valid_from=row["account_valid_from"],
                account_valid_until=row["account_valid_until"],
                temporarily_disabled_from=row["temporarily_disabled_from"],
                temporarily_disabled_until=row["temporarily_disabled_until"],
                disable_reason=row["disable_reason"],
                last_login_at=row["last_login_at"],
            )
        users = loaded.users
        for row in await tx.fetch(
            "SELECT id, user_id, login_id_key, original_value, normalized_value, created_at, unique_key"
            f" FROM userio_identity WHERE {tx.any('user_id', 1)} ORDER BY created_at, id",
            array,
        ):
            attribute = _ATTRIBUTE_OF_KEY[row["login_id_key"]]
            user = users[row["user_id"]]
            if attribute not in user.login_ids:
                user.login_ids[attribute] = LoginID(
                    id=row["id"],
                    attribute=attribute,
                    key=row["login_id_key"],
                    original=row["original_value"],
                    normalized=row["normalized_value"],
                    created_at=row["created_at"],
                    unique_key=_held_key(row["unique_key"]),
                )
                loaded.identities[row["id"]] = (
                    row["user_id"],
                    row["original_value"],
                    row["normalized_value"],
                    _held_key(row["unique_key"]),
                )
        for user in users.values():
            user.verified &= set(user.login_ids)
        for row in await tx.fetch(
            "SELECT id, user_id, kind, type, password_hash, totp_secret, oob_target, created_at, expire_after"
            f" FROM userio_authenticator WHERE {tx.any('user_id', 1)} ORDER BY created_at, id",
            array,
        ):
            users[row["user_id"]].authenticators.append(
                AuthenticatorState(
                    id=row["id"],
                    kind=row["kind"],
                    type=row["type"],
                    created_at=row["created_at"],
                    password_hash=row["password_hash"],
                    totp_secret=row["totp_secret"],
                    oob_target=row["oob_target"],
                    expire_after=row["expire_after"],
                )
            )
            loaded.authenticators[row["id"]] = row["user_id"]
        for row in await tx.fetch(
            "SELECT id, user_id, provider_alias, provider_type, subject, claims, created_at"
            f" FROM userio_oauth_identity WHERE {tx.any('user_id', 1)} ORDER BY created_at, id",
            array,
        ):
            link = OAuthLink(
                id=row["id"],
                provider_alias=row["provider_alias"],
                provider_type=row["provider_type"],
                subject=row["subject"],
                claims=_json(row["claims"]),
                created_at=row["created_at"],
            )
            users[row["user_id"]].oauth[(link.provider_alias, link.subject)] = link
            loaded.oauth.add(link.id)
        for table, column, attr in (("userio_role", "role_id", "roles"), ("userio_group", "group_id", "groups")):
            for row in await tx.fetch(
                f"SELECT m.user_id, k.key FROM userio_user_{table.removeprefix('userio_')} m"
                f" JOIN {table} k ON k.id = m.{column} WHERE {tx.any('m.user_id', 1)}",
                array,
            ):
                getattr(users[row["user_id"]], attr).add(row["key"])
        loaded.before = {user.id: (state_of(user), user.disabled) for user in users.values()}
        loaded.accounts = {user.id: account_state(user) for user in users.values()}
        return loaded

    async def key_ids(
        self, tx: Tx, project_id: str, table: str, keys: Iterable[str], *, create_at: datetime | None = None
    ) -> dict[str, str]:
        """Role or group key -> id for the given keys; with `create_at`, missing ones are added first."""
        keys = sorted(set(keys))
        if not keys:
            return {}
        keyed = _KEY_TABLES[table]
        if create_at is not None:
            await tx.insert(
                keyed,
                *(
                    {"id": new_id(), "project": project_id, "key": key, "name": None, "created_at": create_at}
                    for key in keys
                ),
                on_conflict="DO NOTHING",
            )
        found = await tx.run(
            keyed.select(keyed.id, keyed.key).where((keyed.project == project_id) & keyed.key.is_in(keys))
        )
        return {row["key"]: row["id"] for row in found}

    async def flush(
        self,
        tx: Tx,
        project_id: str,
        loaded: LoadedUsers,
        users: Iterable[UserState],
        role_ids: Mapping[str, str],
        group_ids: Mapping[str, str],
        *,
        origin: ChangeOrigin,
        at: datetime,
        external_ids: Mapping[str, str | None] | None = None,
    ) -> int:
        """Write every change of `users` (new or loaded) back and append each to the change log; how many changed.

        `external_ids`: the provisioning IdP's id of new users (SCIM `externalId`), by user id.

        Deletes first, so a login id can move. A loaded user whose state is as loaded is left alone (no write, no
        entry).
        """
        changed = [u for u in users if loaded.changes(u)]
        if not changed:
            return 0
        new_users = [u for u in changed if u.is_new]
        old_users = [u for u in changed if not u.is_new]
        kept_identities = {
            i.id
            for u in old_users
            for i in u.login_ids.values()
            if loaded.identities.get(i.id) == (u.id, i.original, i.normalized, i.unique_key)
        }
        await self._end_sessions(tx, loaded, old_users)
        await self._delete_stale(tx, loaded, old_users, kept_identities)
        await self._insert_users(tx, project_id, new_users, external_ids or {})
        await self._update_users(tx, old_users)
        await self._insert_related(tx, project_id, loaded, changed, kept_identities, role_ids, group_ids)
        await self._log(
            tx,
            project_id,
            [UserChange(u.id, _kind(u, loaded), _entry_document(u, project_id, at)) for u in changed],
            origin,
            at,
        )
        return len(changed)

    @staticmethod
    async def _end_sessions(tx: Tx, loaded: LoadedUsers, old_users: list[UserState]) -> None:
        """Revoke the refresh tokens of users whose change ends their sessions (a password set, a disable)."""
        ending = [
            u
            for u in old_users
            if u.id in loaded.accounts and ends_sessions(loaded.accounts[u.id], account_state(u), u.updated_at)
        ]
        if ending:
            # Every path that changes a user writes here, so a password set or a disable by any of them ends the
            # user's sessions in the change's own transaction (`users.model.ends_sessions`, SECURITY.md).
            await tx.run(
                RefreshToken.update({RefreshToken.revoked_at: ending[0].updated_at}).where(
                    RefreshToken.user.is_in([u.id for u in ending]) & RefreshToken.revoked_at.is_null()
                )
            )

    @staticmethod
    async def _delete_stale(tx: Tx, loaded: LoadedUsers, old_users: list[UserState], kept_identities: set[str]) -> None:
        """Delete what loaded users no longer have (first, so a login id can move), and their roles and groups."""
        old_ids = {u.id for u in old_users}
        stale_identities = [
            i for i, (owner, *_) in loaded.identities.items() if owner in old_ids and i not in kept_identities
        ]
        current_authenticators = {a.id for u in old_users for a in u.authenticators}
        stale_authenticators = [
            a for a, owner in loaded.authenticators.items() if owner in old_ids and a not in current_authenticators
        ]
        await tx.delete_in("userio_identity", "id", stale_identities)
        await tx.delete_in("userio_authenticator", "id", stale_authenticators)
        await tx.delete_in("userio_user_role", "user_id", [u.id for u in old_users if u.roles_changed])
        await tx.delete_in("userio_user_group", "user_id", [u.id for u in old_users if u.groups_changed])

    @staticmethod
    async def _insert_users(
        tx: Tx, project_id: str, new_users: list[UserState], external_ids: Mapping[str, str | None]
    ) -> None:
        """The new users' rows (COPY on PostgreSQL); SCIM's creations carry their external ids."""
        dump = _dump
        columns: tuple[str, ...] = (
            "id",
            "project_id",
            "created_at",
            "updated_at",
            "last_login_at",
            "is_disabled",
            "standard_attributes",
            "custom_attributes",
            "account_valid_from",
            "account_valid_until",
            "temporarily_disabled_from",
            "temporarily_disabled_until",
        )
        rows: list[tuple[Any, ...]] = [
            (
                u.id,
                project_id,
                u.created_at,
                u.updated_at,
                None,
                u.disabled,
                dump(u.standard_attributes()),
                dump(u.custom),
                u.account_valid_from,
                u.account_valid_until,
                u.temporarily_disabled_from,
                u.temporarily_disabled_until,
            )
            for u in new_users
        ]
        if external_ids:  # an import's COPY stays as it is
            columns += ("external_id",)
            rows = [(*row, external_ids.get(row[0])) for row in rows]
        await tx.insert_many("userio_user", columns, rows)

    @staticmethod
    async def _update_users(tx: Tx, old_users: list[UserState]) -> None:
        """The loaded users' rows, rewritten."""
        dump = _dump
        await tx.executemany(
            "UPDATE userio_user SET updated_at = $2, is_disabled = $3, standard_attributes = $4,"
            " custom_attributes = $5, account_valid_from = $6, account_valid_until = $7,"
            " temporarily_disabled_from = $8, temporarily_disabled_until = $9, disable_reason = $10 WHERE id = $1",
            [
                (
                    u.id,
                    u.updated_at,
                    u.disabled,
                    dump(u.standard_attributes()),
                    dump(u.custom),
                    u.account_valid_from,
                    u.account_valid_until,
                    u.temporarily_disabled_from,
                    u.temporarily_disabled_until,
                    u.disable_reason,
                )
                for u in old_users
            ],
        )

    @staticmethod
    async def _insert_related(
        tx: Tx,
        project_id: str,
        loaded: LoadedUsers,
        changed: list[UserState],
        kept_identities: set[str],
        role_ids: Mapping[str, str],
        group_ids: Mapping[str, str],
    ) -> None:
        """The changed users' new login ids, authenticators, linked identities, roles and groups."""
        dump = _dump
        await tx.insert_many(
            "userio_identity",
            (
                "id",
                "project_id",
                "user_id",
                "login_id_key",
                "login_id_type",
                "original_value",
                "normalized_value",
                "created_at",
                "unique_key",
            ),
            [
                (i.id, project_id, u.id, i.key, i.key, i.original, i.normalized, i.created_at, _stored_key(i))
                for u in changed
                for i in u.login_ids.values()
                if i.id not in kept_identities
            ],
        )
        await tx.insert_many(
            "userio_authenticator",
            (
                "id",
                "project_id",
                "user_id",
                "kind",
                "type",
                "password_hash",
                "totp_secret",
                "oob_target",
                "created_at",
                "expire_after",
            ),
            [
                (
                    a.id,
                    project_id,
                    u.id,
                    a.kind,
                    a.type,
                    a.password_hash,
                    a.totp_secret,
                    a.oob_target,
                    a.created_at,
                    a.expire_after,
                )
                for u in changed
                for a in u.authenticators
                if a.id not in loaded.authenticators
            ],
        )
        links = [(u, link) for u in changed for link in u.oauth.values() if link.changed]
        await tx.insert_many(
            "userio_oauth_identity",
            ("id", "project_id", "user_id", "provider_alias", "provider_type", "subject", "claims", "created_at"),
            [
                (i.id, project_id, u.id, i.provider_alias, i.provider_type, i.subject, dump(i.claims), i.created_at)
                for u, i in links
                if i.id not in loaded.oauth
            ],
        )
        await tx.executemany(
            "UPDATE userio_oauth_identity SET provider_type = $2, claims = $3 WHERE id = $1",
            [(i.id, i.provider_type, dump(i.claims)) for _, i in links if i.id in loaded.oauth],
        )
        await tx.insert_many(
            "userio_user_role",
            ("user_id", "role_id"),
            [(u.id, role_ids[k]) for u in changed if u.roles_changed for k in sorted(u.roles)],
        )
        await tx.insert_many(
            "userio_user_group",
            ("user_id", "group_id"),
            [(u.id, group_ids[k]) for u in changed if u.groups_changed for k in sorted(u.groups)],
        )

    async def _log(
        self, tx: Tx, project_id: str, changes: list[UserChange], origin: ChangeOrigin, at: datetime
    ) -> None:
        """The change log's one writer (docs/changes.md): every write of a user ends here, in its transaction."""
        await self._changes.append(tx, project_id, changes, origin, at)

    async def export_pages(self, tx: Tx, project_id: str, page_size: int) -> AsyncIterator[list[Row]]:
        """Pages of the project's users in id order, as rows of `user_rows_query`, for the export.

        `tx` must be a snapshot, so that no user is seen twice or missed. Each row has the user's columns plus
        `identities` (JSON arrays of `[key, type, original, normalized, id, created_at]`), `authenticators`
        (`[kind, type, totp_secret, oob_target]`), `roles` and `groups` (JSON arrays of keys, sorted); each is
        NULL when empty.

        Hand-tuned, the export's measured bulk path: one query per page (keyset on id) returns one row per user
        with its related rows aggregated as JSON by the database. The export's cost is in Python, and this halves
        the rows and dicts it handles (measured: 113 to 50 us per user).
        """
        if tx.dialect == "postgres":
            # A page's query is costed above `jit_above_cost`, and PostgreSQL JIT-compiled it anew for every page:
            # 31.5 us of backend CPU per user with JIT, 16-18 without (2000-user pages, measured per backend).
            await tx.execute("SET LOCAL jit = off")
        query = user_rows_query(tx, "u.project_id = $1 AND u.id > $2 ORDER BY u.id LIMIT $3")
        users = await tx.fetch(query, project_id, "", page_size)
        while users:
            # The next page is read while the caller turns this one into bytes: database and Python overlap.
            following = asyncio.ensure_future(tx.fetch(query, project_id, users[-1]["id"], page_size))
            await asyncio.sleep(0)  # let it send the query before the caller's CPU-bound work starts
            try:
                yield users
            except BaseException:
                following.cancel()
                raise
            users = await following

    async def lossless_pages(self, tx: Tx, project_id: str, page_size: int) -> AsyncIterator[list[Row]]:
        """Pages of the project's users in id order, as rows of `lossless_rows_query`, for the lossless export.

        As `export_pages`: `tx` a snapshot, keyset pages, the next page read while the caller encodes this one.
        Each row: the user's columns, `identities` (`[key, original]`), `authenticators` (`[kind, type,
        password_hash, totp_secret, oob_target, expire_after]`, oldest first), `oauth_identities`, `roles`, `groups`.
        """
        if tx.dialect == "postgres":
            await tx.execute("SET LOCAL jit = off")  # as `export_pages`
        query = lossless_rows_query(tx, "u.project_id = $1 AND u.id > $2 ORDER BY u.id LIMIT $3")
        users = await tx.fetch(query, project_id, "", page_size)
        while users:
            following = asyncio.ensure_future(tx.fetch(query, project_id, users[-1]["id"], page_size))
            await asyncio.sleep(0)
            try:
                yield users
            except BaseException:
                following.cancel()
                raise
            users = await following

    async def user_row(self, tx: Tx, project_id: str, user_id: str) -> Row | None:
        """The user as a row of `user_rows_query` (what the export's document is built from); None if absent."""
        return await tx.fetchrow(user_rows_query(tx, "u.id = $1 AND u.project_id = $2"), user_id, project_id)

    async def in_project(self, tx: Tx, project_id: str, user_id: str) -> bool:
        """Whether the project has a user of that id."""
        found = await tx.run(User.select(User.id).where((User.id == user_id) & (User.project == project_id)))
        return bool(found)

    async def user_rows_page(
        self,
        tx: Tx,
        project_id: str,
        *,
        after: str,
        limit: int,
        user_ids: Iterable[str] | None = None,
        prefixes: Mapping[str, str] | None = None,
        role: str | None = None,
        group: str | None = None,
    ) -> list[Row]:
        """Up to `limit` users with an id above `after`, in id order, as rows of `user_rows_query` (keyset pages).

        Filters: one of `user_ids`; a login id starting with the prefix given for its attribute (`prefixes`,
        normalized); holding the role or group key. An admin list, not a measured bulk path.
        """
        args: list[Any] = [project_id, after, limit]
        where = ["u.project_id = $1", "u.id > $2"]
        if user_ids is not None:
            args.append(tx.array(sorted(set(user_ids))))
            where.append(tx.any("u.id", len(args)))
        if prefixes is not None:
            clauses = []
            for attribute, prefix in prefixes.items():
                args += [LOGIN_ID_ATTRIBUTES[attribute], _like_prefix(prefix)]
                clauses.append(
                    f"(i.login_id_key = ${len(args) - 1} AND i.normalized_value LIKE ${len(args)} ESCAPE '\\')"
                )
            where.append(
                "EXISTS (SELECT 1 FROM userio_identity i WHERE i.user_id = u.id"
                f" AND ({' OR '.join(clauses) or 'FALSE'}))"
            )
        for key, table, column in ((role, "userio_role", "role_id"), (group, "userio_group", "group_id")):
            if key is not None:
                args.append(key)
                where.append(
                    f"EXISTS (SELECT 1 FROM userio_user_{table.removeprefix('userio_')} m JOIN {table} k"
                    f" ON k.id = m.{column} WHERE m.user_id = u.id AND k.key = ${len(args)})"
                )
        return await tx.fetch(user_rows_query(tx, " AND ".join(where) + " ORDER BY u.id LIMIT $3"), *args)

    async def search(
        self, tx: Tx, project_id: str, condition: Condition, sort: UserSort, *, offset: int, limit: int
    ) -> list[Row]:
        """A page of the project's users matching `condition`, as rows of `user_rows_query` (SCIM lists).

        `condition` is data (`users/search.py`), compiled here to one query with every value bound: no text of a
        filter is ever SQL. Ordered by `sort`, then id, so pages are stable.
        """
        args: list[Any] = [project_id]
        where = _Where(tx, args)
        clause = where.compile(condition)
        order = f"{where.sort_key(sort.field)} {'DESC' if sort.descending else 'ASC'} NULLS LAST, u.id"
        limit_p, offset_p = where.param(limit), where.param(offset)
        # The page's ids first, then their rows: a sort under the aggregating subqueries of `user_rows_query` had
        # PostgreSQL run them for every matching user, the skipped ones too (0.9 s for an empty page at 20 000).
        ids = [
            row["id"]
            for row in await tx.fetch(
                f"SELECT u.id FROM userio_user u{_index_hint(tx, condition)} WHERE u.project_id = $1 AND {clause}"
                f" ORDER BY {order} LIMIT {limit_p} OFFSET {offset_p}",
                *args,
            )
        ]
        if not ids:
            return []
        rows = await tx.fetch(
            user_rows_query(tx, f"u.project_id = $1 AND {tx.any('u.id', 2)}"), project_id, tx.array(ids)
        )
        position = {user_id: i for i, user_id in enumerate(ids)}
        return sorted(rows, key=lambda row: position[row["id"]])

    async def count(self, tx: Tx, project_id: str, condition: Condition) -> int:
        """How many of the project's users match `condition` (SCIM's `totalResults`)."""
        args: list[Any] = [project_id]
        clause = _Where(tx, args).compile(condition)
        row = await tx.fetchrow(f"SELECT COUNT(*) AS n FROM userio_user u WHERE u.project_id = $1 AND {clause}", *args)
        return int(row["n"]) if row is not None else 0

    async def user_rows_of(self, tx: Tx, project_id: str, user_ids: list[str]) -> dict[str, Row]:
        """Users of the project by id, as rows of `user_rows_query`, in one query."""
        if not user_ids:
            return {}
        rows = await tx.fetch(
            user_rows_query(tx, f"u.project_id = $1 AND {tx.any('u.id', 2)}"), project_id, tx.array(user_ids)
        )
        return {row["id"]: row for row in rows}

    async def set_external_id(self, tx: Tx, project_id: str, user_id: str, external_id: str | None) -> None:
        """The user's id in the identity provider that provisions it (SCIM `externalId`); None removes it."""
        await tx.run(
            User.update({User.external_id: external_id}).where((User.id == user_id) & (User.project == project_id))
        )

    async def delete_user(
        self,
        tx: Tx,
        project_id: str,
        user_id: str,
        *,
        last: dict[str, Any],
        origin: ChangeOrigin,
        at: datetime,
    ) -> None:
        """Delete the user with its identities, authenticators, roles, groups and refresh tokens; log `deleted`.

        `last` is the user as exported before (the `userio.user.deleted` event's argument, never a secret). Each
        table explicitly: PostgreSQL's statement triggers would cascade, SQLite's foreign keys only where the
        connection enforces them.
        """
        for table in (
            "userio_refresh_token",
            "userio_identity",
            "userio_authenticator",
            "userio_user_role",
            "userio_user_group",
        ):
            await tx.delete_in(table, "user_id", [user_id])
        await tx.run(User.delete().where((User.id == user_id) & (User.project == project_id)))
        await self._log(tx, project_id, [UserChange(user_id, "deleted", _encode(without_secrets(last)))], origin, at)


_encode = msgspec.json.encode


def _kind(user: UserState, loaded: LoadedUsers) -> ChangeKind:
    """What the log calls a change: as the caller says, else created, disabled, enabled (the flag) or updated."""
    if user.is_new:
        return "created"
    if user.change_kind is not None:
        return user.change_kind
    was_disabled = loaded.before.get(user.id, (b"", user.disabled))[1]
    if user.disabled != was_disabled:
        return "disabled" if user.disabled else "enabled"
    return "updated"


def _entry_document(user: UserState, project_id: str, at: datetime) -> bytes:
    """The user as exported after the change, as the entry keeps it (no TOTP secret, no URI holding one)."""
    return _encode(without_secrets(document_of(user, project_id, at)))


_STANDARD_FIELDS = frozenset({"given_name", "family_name", "middle_name", "name", "nickname", "locale", "zoneinfo"})
_COLUMN_FIELDS = {
    "id": "u.id",
    "external_id": "u.external_id",
    "created_at": "u.created_at",
    "updated_at": "u.updated_at",
}
_LOGIN_ID_FIELDS = {"username": "username", "email": "email", "phone_number": "phone"}


class _Where:
    """A `Condition` as SQL over `userio_user u`: every value a bound parameter, every field a fixed expression."""

    def __init__(self, tx: Tx, args: list[Any]) -> None:
        self.tx = tx
        self.args = args

    def param(self, value: Any) -> str:
        self.args.append(value)
        return f"${len(self.args)}"

    def standard(self, field: str) -> str:
        assert field in _STANDARD_FIELDS  # a fixed member name, never text from a request
        if self.tx.dialect == "postgres":
            return f"(u.standard_attributes->>'{field}')"
        return f"json_extract(u.standard_attributes, '$.{field}')"

    def sort_key(self, field: str) -> str:
        if field in _COLUMN_FIELDS:
            return _COLUMN_FIELDS[field]
        if field in _STANDARD_FIELDS:
            return f"lower({self.standard(field)})"
        if field in _LOGIN_ID_FIELDS:
            key = self.param(_LOGIN_ID_FIELDS[field])
            return (
                "(SELECT i.normalized_value FROM userio_identity i WHERE i.user_id = u.id"
                f" AND i.login_id_key = {key} LIMIT 1)"
            )
        raise ValueError(f"cannot sort by {field}")

    def compile(self, condition: Condition) -> str:
        if isinstance(condition, Constant):
            return "TRUE" if condition.value else "FALSE"
        if isinstance(condition, Negation):
            return f"NOT ({self.compile(condition.part)})"
        if isinstance(condition, AllOf | AnyOf):
            parts = condition.parts
            if isinstance(condition, AllOf):
                # `emails[type eq "work" and value eq "x"]`: the presence test is implied by the comparison, and
                # alone it is a scan of the project's users (370 ms at 200 000 beside a 3 ms index probe).
                compared = {p.field for p in parts if isinstance(p, Compare) and p.op not in ("pr", "ne")}
                parts = tuple(p for p in parts if not (isinstance(p, Compare) and p.op == "pr" and p.field in compared))
            if not parts:
                return "TRUE" if isinstance(condition, AllOf) else "FALSE"
            joiner = " AND " if isinstance(condition, AllOf) else " OR "
            return "(" + joiner.join(self.compile(part) for part in parts) + ")"
        return self.compare(condition)

    def compare(self, c: Compare) -> str:
        field = c.field
        # `u.id IN (...)`, not a correlated EXISTS: SQLite then runs the subquery once (an index probe for `eq`) and
        # looks the users up by id, where EXISTS probed the identities once per user of the project (2.9 s at 200 000).
        if field in _LOGIN_ID_FIELDS:
            kind = _LOGIN_ID_FIELDS[field]
            key = self.param(kind)
            if c.op == "pr":
                inner = ""
            elif c.op in ("sw", "co", "ew") and not c.case_exact and c.value:
                inner = " AND " + self.folded(c)
            else:
                inner = " AND " + self.text("i.normalized_value", c, negate=False)
            if c.op in ("eq", "ne") and c.case_exact:  # a normalized value (scim/filters.py): an index probe
                held, second = _probe(kind, str(c.value))
                inner += f" AND i.unique_key IN ({self.param(held)}, {self.param(second)})"
            found = (
                f"u.id IN (SELECT i.user_id FROM userio_identity i WHERE i.project_id = $1"
                f" AND i.login_id_key = {key}{inner})"
            )
            return f"NOT ({found})" if c.op == "ne" else found
        if field == "group_id":
            inner = "" if c.op == "pr" else f" WHERE m.group_id = {self.param(c.value)}"
            found = f"u.id IN (SELECT m.user_id FROM userio_user_group m{inner})"
            return f"NOT ({found})" if c.op == "ne" else found
        if field == "disabled":
            if c.op == "pr":
                return "TRUE"
            flag = "u.is_disabled" if c.value else "NOT u.is_disabled"
            return flag if c.op == "eq" else f"NOT ({flag})"
        column = _COLUMN_FIELDS.get(field) or self.standard(field)
        if c.op == "pr":
            return (
                f"({column} IS NOT NULL AND {column} <> '')" if field in _STANDARD_FIELDS else f"{column} IS NOT NULL"
            )
        # `x = $1 AND x IS NOT NULL` is false, never NULL, for a user without the value (so `not (...)` holds for
        # it), and an index on x still serves it (a COALESCE around it hid the externalId index: 108 ms at 200 000).
        if field in ("created_at", "updated_at"):
            operator = {"eq": "=", "ne": "<>", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}[c.op]
            return f"({column} {operator} {self.param(c.value)} AND {column} IS NOT NULL)"
        if c.op == "ne":
            return f"NOT ({self.text(column, c, negate=False)} AND {column} IS NOT NULL)"
        return f"({self.text(column, c, negate=False)} AND {column} IS NOT NULL)"

    def folded(self, c: Compare) -> str:
        """`sw`, `co` or `ew` on a login id's value, case-insensitive: `text`'s comparison, found through an index.

        `sw` is a range of `lower(normalized_value)` in code-point order (`COLLATE "C"`, SQLite's BINARY), the
        B-tree of migration 2026-12-02T02; `co` and `ew` on PostgreSQL add a LIKE, every wildcard escaped, that a
        trigram index answers where an operator made one (docs/scim.md; else, and on SQLite, the B-tree is read).
        `text` stays the rule: each index only narrows. At 200 000 users (docs/scim.md, Figures), `userName sw` took
        0.9-1.3 s before on both engines, 9-35 ms now; `co` 0.7-1.4 s, now 25-56 ms on PostgreSQL (0.4-0.6 s SQLite).
        """
        value = str(c.value).lower()
        exact = self.text("i.normalized_value", c, negate=False)
        if c.op == "sw":
            folded = 'lower(i.normalized_value) COLLATE "C"' if self.tx.dialect == "postgres" else _FOLDED
            bound = f"{folded} >= {self.param(value)}"
            above = _successor(value)
            if above is not None:
                bound += f" AND {folded} < {self.param(above)}"
            return f"{bound} AND {exact}"
        if self.tx.dialect == "postgres":  # LIKE escapes with a backslash unless told otherwise
            escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            pattern = f"%{escaped}%" if c.op == "co" else f"%{escaped}"
            return f"{_FOLDED} LIKE {self.param(pattern)} AND {exact}"
        return exact

    def text(self, column: str, c: Compare, *, negate: bool) -> str:
        """A string comparison; `co`, `sw` and `ew` by position, not LIKE: a filter's `%` and `_` are plain text."""
        value = str(c.value)
        if not c.case_exact:
            column, value = f"lower({column})", value.lower()
        op = "eq" if c.op == "ne" else c.op
        if op in ("co", "sw", "ew") and value == "":
            return f"{column} IS NOT NULL"
        p = self.param(value)
        postgres = self.tx.dialect == "postgres"
        sql = {
            "eq": f"{column} = {p}",
            "gt": f"{column} > {p}",
            "ge": f"{column} >= {p}",
            "lt": f"{column} < {p}",
            "le": f"{column} <= {p}",
            "co": f"strpos({column}, {p}) > 0" if postgres else f"instr({column}, {p}) > 0",
            "sw": f"starts_with({column}, {p})" if postgres else f"substr({column}, 1, length({p})) = {p}",
            "ew": f"right({column}, length({p})) = {p}" if postgres else f"substr({column}, -length({p})) = {p}",
        }[op]
        return f"NOT ({sql})" if negate else sql


def _index_hint(tx: Tx, condition: Condition) -> str:
    """On SQLite, an `externalId eq` every match must satisfy takes its own index.

    Without statistics SQLite walked the (project, id) index for `ORDER BY u.id` and tested each user's
    `external_id` (1.1 s at 200 000 users).
    """
    parts = condition.parts if isinstance(condition, AllOf) else (condition,)
    pinned = any(isinstance(p, Compare) and p.field == "external_id" and p.op == "eq" for p in parts)
    return " INDEXED BY userio_user_external_id" if pinned and tx.dialect == "sqlite" else ""


_FOLDED = "lower(i.normalized_value)"
"""What the indexes of migration 2026-12-02T02 hold of a login id (case-insensitive filters compare it)."""


def _successor(prefix: str) -> str | None:
    """The least string above every string starting with `prefix`, in code-point order; None when none is.

    UTF-8's byte order is code-point order, so this bounds a prefix in PostgreSQL's "C" collation and in SQLite's
    BINARY: the prefix without its trailing U+10FFFF, its last character the next one (surrogates skipped).
    """
    stripped = prefix.rstrip("\U0010ffff")
    if not stripped:
        return None
    following = ord(stripped[-1]) + 1
    if 0xD800 <= following <= 0xDFFF:
        following = 0xE000
    return stripped[:-1] + chr(following)


def _like_prefix(value: str) -> str:
    """A LIKE pattern matching the values that start with `value` (escaping its wildcards)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
