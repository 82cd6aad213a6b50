"""One user at a time: create, read, search, update, set password, disable, enable, delete.

See docs/reference.md#users-admin-api.

The host's handlers take `UserAdminService` by DI and the admin REST endpoints call it too. A create is one import
record and an update is an upsert (docs/reference.md#import-updates), both applied by the import's own rules
(`imports/rules.py`), so a user changed here and one changed by an import obey the same rules. Each change is
written back by `UserRepository.flush` (or `delete_user`), which appends its change-log entry in the same
transaction; every write method takes `origin` (default `admin_api`; SCIM passes `ChangeOrigin("scim")`, sign-in
`ChangeOrigin("sign_in")`). The Litestar events are emitted from the committed entries (`changes/events_consumer.py`).
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec

from litestar_userio.changes.change_service import ChangeService
from litestar_userio.changes.entries import ADMIN_API, ChangeKind, ChangeOrigin
from litestar_userio.config import ImportConfig
from litestar_userio.db.engine import Database, Row, Tx
from litestar_userio.errors import (
    Cause,
    Invalid,
    InvalidRequest,
    NotFound,
    UserIOError,
    UserNotFound,
    ValidationFailed,
    WriteConflict,
)
from litestar_userio.hooks.hook_service import HookService
from litestar_userio.hooks.token_events import user_object
from litestar_userio.hooks.user_events import PRE_CREATE, PRE_UPDATE, TRIGGERED_BY
from litestar_userio.imports.claims import Claims, look_up_claims
from litestar_userio.imports.import_schemas import PasswordInput, UserRecord
from litestar_userio.imports.rules import ImportWorld, check_disable_window, utc_timestamp
from litestar_userio.imports.validation import ParsedRecord, parse_record, timestamp_causes
from litestar_userio.projects.project_service import ProjectRecord, ProjectService
from litestar_userio.runtime import paused_gc
from litestar_userio.users.custom_attributes import CustomAttributeSpec
from litestar_userio.users.exported import build_document, without_secrets
from litestar_userio.users.login_id_rules import LoginIDRules
from litestar_userio.users.model import AuthenticatorState, UserState, is_disabled_at
from litestar_userio.users.passwords import PasswordVerifier
from litestar_userio.users.search import Condition, UserSort
from litestar_userio.users.user_repository import LoadedUsers, UserRepository
from userio_core.attribute_formats import LOGIN_ID_ATTRIBUTES, storable_text
from userio_core.clock import Clock
from userio_core.ids import new_id
from userio_core.retry import Backoff, retrying

__all__ = [
    "KEEP",
    "ChangeOrigin",
    "NewUser",
    "UserAdminService",
    "UserHit",
    "UserPage",
    "UserSearchPage",
    "without_secrets",
]

logger = logging.getLogger("litestar_userio.users")

_CONFLICT_RETRIES = 5
_SCAN_BATCH = 200
"""Users read per query while a `disabled` filter (computed, not a column) fills a page."""


class _Keep:
    """The type of `KEEP`."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP = _Keep()
"""`external_id=KEEP` (the default): the write leaves the user's external id as it is."""


@dataclass
class NewUser:
    """One user for `create_many`: its import record (JSON), a plain password to hash, the IdP's external id."""

    record: bytes
    password: str | None = None
    external_id: str | _Keep | None = KEEP


@dataclass
class UserHit:
    """A user as exported, and its identity provider's id (`external_id`, SCIM `externalId`), if any."""

    document: dict[str, Any]
    external_id: str | None


@dataclass
class UserSearchPage:
    """One page of a search (`UserAdminService.search`) and how many users match in all."""

    total: int
    items: list[UserHit]


@dataclass
class UserPage:
    """One page of users as exported, and the cursor of the next page (None on the last)."""

    items: list[dict[str, Any]]
    next_cursor: str | None


class UserAdminService:
    """The single-user lifecycle of docs/reference.md#users-admin-api, for the host's handlers and the admin API."""

    def __init__(
        self,
        db: Database,
        projects: ProjectService,
        passwords: PasswordVerifier,
        clock: Clock,
        *,
        imports: ImportConfig,
        changes: ChangeService,
        hooks: HookService | None = None,
    ) -> None:
        self.db = db
        self.hooks = hooks
        """Runs the blocking `user.pre_create` and `user.profile.pre_update` hooks (None: a host without hooks)."""
        self.changes = changes
        """Woken after each change committed: its consumers (the Litestar events among them) follow the log."""
        self.projects = projects
        self.passwords = passwords
        self.clock = clock
        self.imports = imports
        """The import's password bounds: a record here passes the checks it would pass in an import."""
        self.users = UserRepository()

    # Reads.

    async def get(self, project_id: str, user_id: str) -> dict[str, Any]:
        """The user as exported; `UserNotFound` when the project has no user of that id."""
        async with self.db.reader() as tx:
            return await self._document(tx, project_id, user_id)

    async def load(self, project_id: str, user_id: str) -> UserState | None:
        """The user's state as the rules and the hooks read it; None when the project has no user of that id."""
        async with self.db.reader() as tx:
            return await self.users.load_one(tx, project_id, user_id)

    async def find_by_login_id(self, project_id: str, login_id: str) -> dict[str, Any] | None:
        """The user whose email, phone number or username is `login_id`, normalized as sign-in does; or None."""
        page = await self.list_users(project_id, login_id=login_id, limit=1)
        return page.items[0] if page.items else None

    async def list_users(
        self,
        project_id: str,
        *,
        login_id: str | None = None,
        q: str | None = None,
        role: str | None = None,
        group: str | None = None,
        disabled: bool | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> UserPage:
        """A page of the project's users in id order, filtered; pass `next_cursor` back as `cursor`.

        `login_id` an exact login id (normalized as sign-in does), `q` the start of one, `role`/`group` a key held,
        `disabled` the state now (docs/reference.md#users-disabled-state, computed by `is_disabled_at`, so it is
        filtered here, not in SQL).
        """
        after = _decode_cursor(cursor)
        now = self.clock.now()
        rules = await self._login_id_rules(project_id)
        user_ids: set[str] | None = None
        items: list[dict[str, Any]] = []
        async with self.db.reader() as tx:
            if login_id is not None:
                wanted = {a: {rules.normalize(a, login_id.strip())} for a in LOGIN_ID_ATTRIBUTES}
                user_ids = set((await self.users.find_owners(tx, project_id, wanted)).values())
                if not user_ids:
                    return UserPage([], None)
            prefixes = None if q is None else {a: rules.normalize(a, q.strip()) for a in LOGIN_ID_ATTRIBUTES}
            batch = limit + 1 if disabled is None else max(_SCAN_BATCH, limit + 1)
            while len(items) <= limit:
                rows = await self.users.user_rows_page(
                    tx,
                    project_id,
                    after=after,
                    limit=batch,
                    user_ids=user_ids,
                    prefixes=prefixes,
                    role=role,
                    group=group,
                )
                for row in rows:
                    document = build_document(row, project_id, now)
                    if disabled is None or document["disabled"] is disabled:
                        items.append(document)
                        if len(items) > limit:
                            break
                if len(rows) < batch:
                    break
                after = rows[-1]["id"]
        next_cursor = _encode_cursor(items[limit - 1]["sub"]) if len(items) > limit else None
        return UserPage(items[:limit], next_cursor)

    async def get_hit(self, project_id: str, user_id: str) -> UserHit:
        """The user as exported with its external id; `UserNotFound` when the project has no user of that id."""
        async with self.db.reader() as tx:
            row: Row | None = await self.users.user_row(tx, project_id, user_id)
        if row is None:
            raise UserNotFound()
        return UserHit(build_document(row, project_id, self.clock.now()), row["external_id"])

    async def search(
        self, project_id: str, condition: Condition, sort: UserSort, *, offset: int, limit: int
    ) -> UserSearchPage:
        """A page of the users matching `condition`, and how many match in all (SCIM lists).

        `condition` is data (`users/search.py`: one parameterized query); `offset` skipped, at most `limit`, in `sort`.
        """
        now = self.clock.now()
        async with self.db.reader() as tx:
            total = await self.users.count(tx, project_id, condition)
            rows = await self.users.search(tx, project_id, condition, sort, offset=offset, limit=limit) if limit else []
        return UserSearchPage(total, [UserHit(build_document(r, project_id, now), r["external_id"]) for r in rows])

    # Changes.

    async def create(
        self,
        project: ProjectRecord,
        record: bytes,
        *,
        origin: ChangeOrigin = ADMIN_API,
        password: str | None = None,
        external_id: str | _Keep | None = KEEP,
    ) -> tuple[dict[str, Any], list[str]]:
        """Create one user from an import record (JSON); the user as exported and the import's warnings.

        The identifier is the first present of `email`, `phone_number`, `preferred_username`
        (docs/reference.md#users-admin-api); a record fails as it would in an import (`ValidationFailed`,
        `InvariantViolated`, `DuplicatedUserID`, ...). `password`: a plain password, hashed with the project's
        algorithm (the record then has no `password` of its own); `external_id`: the provisioning IdP's id. The
        project's `user.pre_create` hooks see the user as it would be first: a refusal is `WebHookDisallowed` and
        nothing is written; their mutations go through the same validation as the record (docs/hooks.md#user-hooks).
        """
        [created] = await self.create_many(project, [NewUser(record, password, external_id)], origin=origin)
        if isinstance(created, UserIOError):
            raise created
        return created

    async def create_many(
        self, project: ProjectRecord, users: Sequence[NewUser], *, origin: ChangeOrigin = ADMIN_API
    ) -> list[tuple[dict[str, Any], list[str]] | UserIOError]:
        """Create several users in one transaction, each exactly as `create` would; each fails alone.

        The answer holds, in order, each user as exported with its warnings, or the error its record failed with.
        Records are applied one after the other (a later one sees the earlier: a login id taken by one fails the
        next), as an import chunk applies them; one write for all (SCIM Bulk: 1 000 creations in one request).
        """
        results: list[tuple[dict[str, Any], list[str]] | UserIOError | None] = [None] * len(users)
        prepared: list[tuple[int, UserRecord, str, list[str], str | _Keep | None]] = []
        schema = await self.projects.custom_schema(project.id)
        for index, new in enumerate(users):
            try:
                record, identifier, warnings = await self._prepare_new(project, new, schema, origin)
            except UserIOError as exc:
                results[index] = exc
                continue
            prepared.append((index, record, identifier, warnings, new.external_id))
        if prepared:
            for index, outcome in (await self._insert_many(project, prepared, origin, schema)).items():
                results[index] = outcome
        return [r if r is not None else UserIOError() for r in results]

    async def _prepare_new(
        self, project: ProjectRecord, new: NewUser, schema: dict[str, CustomAttributeSpec], origin: ChangeOrigin
    ) -> tuple[UserRecord, str, list[str]]:
        """One new user's record as it will be inserted, its identifier and warnings; its own failure raised.

        The per-user step of every creation (`create` is `create_many` of one): the import's validation, the
        project's blocking `user.pre_create` hooks (so a Bulk's creations pass them one by one as single ones do),
        and the plain password hashed with the project's algorithm.
        """
        identifier = _identifier(new.record)
        parsed = await self._parse(project, new.record, identifier, schema)
        if await self._has_hooks(project.id, PRE_CREATE):

            async def apply(tx: Tx, world: ImportWorld) -> str:
                assert parsed.record is not None
                return world.insert_user(parsed.record, [])

            changes = await self._pre_hooks(project, PRE_CREATE, parsed, None, apply, identifier or "email", origin)
            if changes:
                parsed = await self._parse(project, _merged(new.record, changes), identifier, schema)
        assert parsed.record is not None
        if new.password is not None:
            if parsed.record.password is not msgspec.UNSET:
                raise ValidationFailed(
                    [Cause("", "oneOf", {"expected": ["password", "password_hash"]})],
                    "give either password or password_hash",
                )
            algorithm = project.settings.password_algorithm
            parsed.record.password = PasswordInput(
                type=algorithm, password_hash=await self.passwords.hash(project.id, new.password, algorithm)
            )
        return parsed.record, identifier or "email", list(parsed.warnings)

    async def _insert_many(
        self,
        project: ProjectRecord,
        prepared: list[tuple[int, UserRecord, str, list[str], str | _Keep | None]],
        origin: ChangeOrigin,
        schema: dict[str, CustomAttributeSpec],
    ) -> dict[int, tuple[dict[str, Any], list[str]] | UserIOError]:
        """The prepared records inserted in one transaction (`_change` for many new users)."""
        settings = project.settings
        rules = settings.login_id_rules()
        records = [record for _, record, *_ in prepared]
        retries = retrying(attempts=_CONFLICT_RETRIES + 1, on=WriteConflict, backoff=Backoff(0.01, jitter=(1.0, 5.0)))
        async for attempt in retries:
            with attempt:
                outcomes: dict[int, tuple[dict[str, Any], list[str]] | UserIOError] = {}
                async with self.db.transaction() as tx:
                    # Who holds the records' login ids, linked identities and subs: the import's one lookup.
                    claims = await look_up_claims(tx, self.users, project.id, records, rules)
                    roles: set[str] = set()
                    groups: set[str] = set()
                    for _, record, *_ in prepared:
                        record_roles, record_groups = _keys(record, [])
                        roles |= record_roles
                        groups |= record_groups
                    role_ids = await self.users.key_ids(tx, project.id, "userio_role", roles)
                    group_ids = await self.users.key_ids(tx, project.id, "userio_group", groups)
                    now = self.clock.now()
                    world = _world(project, "email", now, {}, role_ids, group_ids, schema, claims)
                    created: dict[int, tuple[str, list[str]]] = {}
                    external_ids: dict[str, str | None] = {}
                    with paused_gc():  # a synchronous burst, as an import chunk's apply
                        for index, record, identifier, warnings, external_id in prepared:
                            world.identifier = identifier
                            kept = list(warnings)
                            try:
                                user_id = world.insert_user(record, kept)
                            except (Invalid, NotFound) as exc:  # the record's own failure, checked before any change
                                outcomes[index] = exc
                                continue
                            created[index] = (user_id, kept)
                            if not isinstance(external_id, _Keep):
                                external_ids[user_id] = external_id
                    if world.new_roles:
                        role_ids |= await self.users.key_ids(
                            tx, project.id, "userio_role", world.new_roles, create_at=now
                        )
                    if world.new_groups:
                        group_ids |= await self.users.key_ids(
                            tx, project.id, "userio_group", world.new_groups, create_at=now
                        )
                    loaded = LoadedUsers(users={})
                    written = await self.users.flush(
                        tx,
                        project.id,
                        loaded,
                        world.users.values(),
                        role_ids,
                        group_ids,
                        origin=origin,
                        at=now,
                        external_ids=external_ids,
                    )
                    rows = await self.users.user_rows_of(tx, project.id, [user_id for user_id, _ in created.values()])
                with paused_gc():
                    for index, (user_id, kept) in created.items():
                        outcomes[index] = (build_document(rows[user_id], project.id, now), kept)
                if written:
                    self.changes.wake(project.id)
                return outcomes
        raise AssertionError("unreachable: retrying re-raises the last conflict")  # pragma: no cover

    async def update(
        self,
        project: ProjectRecord,
        user_id: str,
        record: bytes,
        *,
        origin: ChangeOrigin = ADMIN_API,
        external_id: str | _Keep | None = KEEP,
        pre_update: bool = True,
    ) -> tuple[dict[str, Any], list[str]]:
        """Apply the update rules exactly as an upsert import, to one user; as exported, with warnings.

        See docs/reference.md#import-updates.

        `sub` is refused (ids never change); the last login id of a user cannot go. A record that changes nothing
        writes nothing (and logs nothing). `external_id` sets or (None) removes the provisioning IdP's id in the same
        transaction. The project's `user.profile.pre_update` hooks see the user as it would be first (unless
        `pre_update` is false: a lazy migration completing a waiting user); a refusal is `WebHookDisallowed` and
        nothing is written; their mutations go through the same validation as the record.
        """
        decoded = _json_object(record)
        if "sub" in decoded:
            raise ValidationFailed([Cause("", "additionalProperties", {"actual": ["sub"]})], "sub cannot be updated")
        parsed = await self._parse(project, record, None)

        def applying(parsed: ParsedRecord, warnings: list[str]) -> Callable[[Tx, ImportWorld], Awaitable[str]]:
            async def apply(tx: Tx, world: ImportWorld) -> str:
                assert parsed.record is not None
                user = world.users[user_id]
                world.update_user(user, parsed.record, warnings)
                if not user.login_ids:
                    raise ValidationFailed(
                        [Cause("", "general", {"message": "a user keeps at least one login id"})],
                        "this change would remove the user's last login id",
                    )
                return user_id

            return apply

        if pre_update and await self._has_hooks(project.id, PRE_UPDATE):
            changes = await self._pre_hooks(project, PRE_UPDATE, parsed, user_id, applying(parsed, []), "", origin)
            if changes:
                parsed = await self._parse(project, _merged(record, changes), None)
        warnings = list(parsed.warnings)
        document = await self._change(
            project, parsed.record, user_id, applying(parsed, warnings), origin=origin, external_id=external_id
        )
        return document, warnings

    async def set_password(
        self,
        project: ProjectRecord,
        user_id: str,
        *,
        password: str | None = None,
        password_hash: Any = None,
        origin: ChangeOrigin = ADMIN_API,
    ) -> None:
        """Replace the primary password: `password` hashed here, or `password_hash` an import password object.

        The new password has no `expire_after` unless the password object gives one.
        """
        if (password is None) == (password_hash is None):
            raise ValidationFailed(
                [Cause("", "oneOf", {"expected": ["password", "password_hash"]})],
                "give either password or password_hash",
            )
        if password is not None:
            algorithm = project.settings.password_algorithm
            new = PasswordInput(
                type=algorithm, password_hash=await self.passwords.hash(project.id, password, algorithm)
            )
        else:
            # The import's own checks of a password object (type, well-formed hash, cost bound).
            parsed = await self._parse(project, msgspec.json.encode({"password": password_hash}), None)
            assert parsed.record is not None and isinstance(parsed.record.password, PasswordInput)
            new = parsed.record.password

        async def apply(tx: Tx, world: ImportWorld) -> str:
            user = world.users[user_id]
            user.authenticators = [a for a in user.authenticators if not (a.kind == "primary" and a.type == "password")]
            expire_after = utc_timestamp(new.expire_after)
            user.authenticators.append(
                AuthenticatorState(
                    id=new_id(),
                    kind="primary",
                    type="password",
                    created_at=world.now,
                    password_hash=new.stored_hash,
                    expire_after=expire_after,
                )
            )
            _touch(user, world.now, "password_changed")
            return user_id

        await self._change(project, None, user_id, apply, origin=origin)

    async def disable(
        self,
        project: ProjectRecord,
        user_id: str,
        *,
        reason: str | None = None,
        temporarily_disabled_from: datetime | str | None = None,
        temporarily_disabled_until: datetime | str | None = None,
        origin: ChangeOrigin = ADMIN_API,
    ) -> dict[str, Any]:
        """Disable until enabled, or only inside a window (both bounds, from < until, inside the valid period).

        A bound is a datetime with a time zone or an RFC 3339 string, checked by the import's timestamp rule
        (`ValidationFailed` at `/temporarily_disabled_from` or `/temporarily_disabled_until`). Any disable revokes
        the user's refresh tokens when it is written: every session ends (ref, `users.model.ends_sessions`).
        """
        window = (
            _window_bound("temporarily_disabled_from", temporarily_disabled_from),
            _window_bound("temporarily_disabled_until", temporarily_disabled_until),
        )
        check_disable_window(*window, None, None)  # the valid period is the user's, checked once it is loaded

        async def apply(tx: Tx, world: ImportWorld) -> str:
            user = world.users[user_id]
            start, end = window
            if start is not None and end is not None:
                check_disable_window(start, end, user.account_valid_from, user.account_valid_until)
                user.disabled = False  # disabled only inside the window
            else:
                user.disabled = True
            user.temporarily_disabled_from, user.temporarily_disabled_until = window
            user.disable_reason = reason
            _touch(user, world.now, "disabled")
            return user_id

        return await self._change(project, None, user_id, apply, origin=origin)

    async def enable(self, project: ProjectRecord, user_id: str, *, origin: ChangeOrigin = ADMIN_API) -> dict[str, Any]:
        """Clear a disable and a temporary disable window (the account valid period stays)."""

        async def apply(tx: Tx, world: ImportWorld) -> str:
            user = world.users[user_id]
            user.disabled = False
            user.temporarily_disabled_from = user.temporarily_disabled_until = user.disable_reason = None
            _touch(user, world.now, "enabled")
            return user_id

        return await self._change(project, None, user_id, apply, origin=origin)

    async def delete(self, project: ProjectRecord, user_id: str, *, origin: ChangeOrigin = ADMIN_API) -> None:
        """Delete the user and every identity, authenticator, role, group and refresh token of it (erasure)."""
        async with self.db.transaction() as tx:
            document = await self._document(tx, project.id, user_id)
            await self.users.delete_user(tx, project.id, user_id, last=document, origin=origin, at=self.clock.now())
        self.changes.wake(project.id)

    def is_disabled(self, user: UserState) -> bool:
        """Whether `user` is disabled now (docs/reference.md#users-disabled-state, `users.model.is_disabled_at`)."""
        return is_disabled_at(user, self.clock.now())

    # The one way a change is made.

    async def _change(
        self,
        project: ProjectRecord,
        record: UserRecord | None,
        user_id: str | None,
        apply: Callable[[Tx, ImportWorld], Awaitable[str]],
        *,
        origin: ChangeOrigin,
        identifier: str = "",
        external_id: str | _Keep | None = KEEP,
        dry: bool = False,
    ) -> dict[str, Any]:
        """Run `apply` on the world of one user (locked) in a transaction, write it back, return it as exported.

        `dry`: nothing is written; `_WouldBe` carries the user as it would be, as the hooks see a user.

        The user's row is locked (PostgreSQL) or the database's one writer held (SQLite) from the read to the
        write, so two concurrent changes of one user apply one after the other and neither is lost; a unique
        violation (a login id or an id taken meanwhile) runs the change again on what is committed then.
        """
        settings = project.settings
        rules = settings.login_id_rules()
        schema = await self.projects.custom_schema(project.id)
        retries = retrying(attempts=_CONFLICT_RETRIES + 1, on=WriteConflict, backoff=Backoff(0.01, jitter=(1.0, 5.0)))
        async for attempt in retries:
            with attempt:
                async with self.db.transaction() as tx:
                    if user_id is not None and not await self.users.in_project(tx, project.id, user_id):
                        raise UserNotFound()
                    loaded = await self.users.load(tx, [user_id] if user_id is not None else [])
                    if user_id is not None and user_id not in loaded.users:
                        raise UserNotFound()  # deleted meanwhile, before this change took its lock
                    # Who holds the record's login ids, linked identities and sub: the import's one lookup.
                    records = [record] if record is not None else []
                    claims = await look_up_claims(tx, self.users, project.id, records, rules)
                    keys = _keys(record, loaded.users.values())
                    role_ids = await self.users.key_ids(tx, project.id, "userio_role", keys[0])
                    group_ids = await self.users.key_ids(tx, project.id, "userio_group", keys[1])
                    now = self.clock.now()
                    world = _world(project, identifier, now, loaded.users, role_ids, group_ids, schema, claims)
                    changed_id = await apply(tx, world)
                    if dry:
                        would_be = world.users[changed_id]
                        raise _WouldBe(user_object(would_be, now) if loaded.changes(would_be) else None)
                    if world.new_roles:
                        role_ids |= await self.users.key_ids(
                            tx, project.id, "userio_role", world.new_roles, create_at=now
                        )
                    if world.new_groups:
                        group_ids |= await self.users.key_ids(
                            tx, project.id, "userio_group", world.new_groups, create_at=now
                        )
                    written = await self.users.flush(
                        tx, project.id, loaded, world.users.values(), role_ids, group_ids, origin=origin, at=now
                    )
                    if not isinstance(external_id, _Keep):
                        await self.users.set_external_id(tx, project.id, changed_id, external_id)
                    document = await self._document(tx, project.id, changed_id)
                if written:
                    self.changes.wake(project.id)
                return document
        raise AssertionError("unreachable: retrying re-raises the last conflict")  # pragma: no cover

    async def _has_hooks(self, project_id: str, event_type: str) -> bool:
        return self.hooks is not None and await self.hooks.has_hooks(project_id, event_type)

    async def _pre_hooks(
        self,
        project: ProjectRecord,
        event_type: str,
        parsed: ParsedRecord,
        user_id: str | None,
        apply: Callable[[Tx, ImportWorld], Awaitable[str]],
        identifier: str,
        origin: ChangeOrigin,
    ) -> dict[str, Any]:
        """The blocking user hooks on the user as the change would leave it (worked out, not written).

        Their changes come back as record members. Raises their refusal (`WebHookDisallowed`) or failure.
        """
        assert self.hooks is not None
        try:
            await self._change(project, parsed.record, user_id, apply, origin=origin, identifier=identifier, dry=True)
        except _WouldBe as would_be:
            if would_be.user is None:  # a change of nothing (SCIM's `active` alone, written apart) asks no hook
                return {}
            triggered_by = TRIGGERED_BY.get(origin.kind, "system")
            return await self.hooks.run_user_hooks(project.id, event_type, would_be.user, triggered_by)
        raise AssertionError("unreachable: a dry change raises _WouldBe")  # pragma: no cover

    async def _document(self, tx: Tx, project_id: str, user_id: str) -> dict[str, Any]:
        row: Row | None = await self.users.user_row(tx, project_id, user_id)
        if row is None:
            raise UserNotFound()
        return build_document(row, project_id, self.clock.now())

    async def _parse(
        self,
        project: ProjectRecord,
        record: bytes,
        identifier: str | None,
        schema: dict[str, CustomAttributeSpec] | None = None,
    ) -> ParsedRecord:
        """The import's validation of one record (the project's password formats and bounds); its error raised.

        `schema`: the project's custom attributes when the caller read them already (a batch reads them once).
        """
        if schema is None:
            schema = await self.projects.custom_schema(project.id)
        policy = project.settings.hash_policy(self.imports.hash_bounds, self.imports.max_bcrypt_cost)
        special_use = project.settings.allow_special_use_email_domains
        parsed = parse_record(record, schema or None, policy, identifier=identifier, special_use_emails=special_use)
        if parsed.error is not None:
            raise parsed.error
        return parsed

    async def _login_id_rules(self, project_id: str) -> LoginIDRules:
        project = await self.projects.get(project_id)
        if project is None:
            raise UserNotFound()
        return project.settings.login_id_rules()


class _WouldBe(Exception):
    """The user a dry change would leave (its transaction rolled back), as the hooks see a user; None: unchanged."""

    def __init__(self, user: dict[str, Any] | None) -> None:
        super().__init__("dry run")
        self.user = user


def _world(
    project: ProjectRecord,
    identifier: str,
    now: datetime,
    users: dict[str, UserState],
    role_ids: dict[str, str],
    group_ids: dict[str, str],
    schema: dict[str, CustomAttributeSpec],
    claims: Claims,
) -> ImportWorld:
    """The world a change applies the import's rules in: the project's settings and who holds what (`claims`)."""
    settings = project.settings
    world = ImportWorld(
        identifier=identifier,
        upsert=True,
        now=now,
        users=users,
        known_roles=set(role_ids),
        known_groups=set(group_ids),
        create_unknown_roles=settings.create_unknown_roles_on_import,
        create_unknown_groups=settings.create_unknown_groups_on_import,
        custom_schema=schema or None,
        login_id_rules=settings.login_id_rules(),
        taken_ids=claims.taken_ids,
        key_owners=claims.key_owners,
    )
    world.owners.update(claims.owners)
    world.oauth_owners.update(claims.oauth_owners)
    return world


def _merged(record: bytes, changes: dict[str, Any]) -> bytes:
    """The record with the hooks' changes over it (an import record: the request's own validation checks it)."""
    return msgspec.json.encode({**_json_object(record), **changes})


def _touch(user: UserState, now: datetime, kind: ChangeKind) -> None:
    """Mark `user` changed at `now`, as the change log calls it."""
    user.updated_at, user.changed, user.change_kind = now, True, kind


def _window_bound(name: str, value: datetime | str | None) -> datetime | None:
    """A disable window's bound in UTC, by the import's timestamp rule; `ValidationFailed` naming it otherwise."""
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValidationFailed([Cause(f"/{name}", "format", {"error": "needs a time zone", "format": "date-time"})])
        value = value.isoformat()
    if causes := timestamp_causes(f"/{name}", value):
        raise ValidationFailed(causes)
    return utc_timestamp(value)


def _json_object(record: bytes) -> dict[str, Any]:
    try:
        decoded = msgspec.json.decode(record)
    except msgspec.DecodeError as exc:
        raise ValidationFailed([Cause("", "json", {"error": str(exc)})], "request body is not valid JSON") from exc
    if not isinstance(decoded, dict):
        raise ValidationFailed([Cause("", "type", {"expected": ["object"], "actual": [type(decoded).__name__]})])
    return decoded


def _identifier(record: bytes) -> str | None:
    """The first login id the record gives as a string (docs/reference.md#users-admin-api); None when it gives none."""
    decoded = _json_object(record)
    for attribute in ("email", "phone_number", "preferred_username"):
        if isinstance(decoded.get(attribute), str):
            return attribute
    missing = ["email", "phone_number", "preferred_username"]
    raise ValidationFailed(
        [Cause("", "required", {"expected": missing, "missing": missing})],
        "a user needs one of email, phone_number or preferred_username",
    )


def _keys(record: UserRecord | None, users: Iterable[UserState]) -> tuple[set[str], set[str]]:
    """The role and group keys the record names or the loaded users hold, for their ids."""
    roles: set[str] = set()
    groups: set[str] = set()
    if record is not None:
        if isinstance(record.roles, list):
            roles.update(record.roles)
        if isinstance(record.groups, list):
            groups.update(record.groups)
    for user in users:
        roles |= user.roles
        groups |= user.groups
    return roles, groups


def _encode_cursor(user_id: str) -> str:
    return base64.urlsafe_b64encode(user_id.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str | None) -> str:
    if not cursor:
        return ""
    try:
        after = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise InvalidRequest("invalid cursor: pass back a next_cursor this API gave") from exc
    if not storable_text(after):  # no user id holds U+0000 (PostgreSQL would refuse the query)
        raise InvalidRequest("invalid cursor: pass back a next_cursor this API gave")
    return after
