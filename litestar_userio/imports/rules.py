"""How one record changes the users (docs/reference.md#import-updates), decided in memory and in index order.

`ImportWorld` holds the users a chunk touches. `apply` checks a record whole before it changes anything,
so a record is applied entirely or not at all (docs/reference.md#import-order-and-atomicity), and a later record sees
what earlier ones did. No I/O here: the service loads the world and writes back what changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from msgspec import UNSET, UnsetType

from litestar_userio.errors import (
    Cause,
    DuplicatedIdentity,
    DuplicatedUserID,
    GroupUnknownKeys,
    InvalidAccountStatusTransition,
    RoleUnknownKeys,
    UserIOError,
    ValidationFailed,
)
from litestar_userio.imports.import_schemas import (
    AddressInput,
    ImportDetail,
    OAuthIdentityInput,
    UserRecord,
    Warning,
)
from litestar_userio.imports.record_schema import parse_rfc3339
from litestar_userio.imports.validation import STANDARD_STRING_ATTRIBUTES, ParsedRecord
from litestar_userio.statuses import error_object
from litestar_userio.users.custom_attributes import CustomAttributeSpec
from litestar_userio.users.login_id_rules import CASE_INSENSITIVE, LoginIDRules
from litestar_userio.users.model import AuthenticatorState, LoginID, OAuthLink, UserState, disabled_state
from userio_core.attribute_formats import LOGIN_ID_ATTRIBUTES
from userio_core.ids import new_id
from userio_core.login_ids import login_key

__all__ = ["ImportWorld", "check_disable_window", "utc_timestamp"]

_VERIFIABLE = ("email", "phone_number")


@dataclass
class ImportWorld:
    """The users one chunk may touch, indexed by login id, and the project facts the rules need."""

    identifier: str
    upsert: bool
    now: datetime
    users: dict[str, UserState]
    known_roles: set[str]
    known_groups: set[str]
    create_unknown_roles: bool = False
    create_unknown_groups: bool = False
    custom_schema: Mapping[str, CustomAttributeSpec] | None = None
    login_id_rules: LoginIDRules = CASE_INSENSITIVE
    taken_ids: set[str] = field(default_factory=set)
    """The records' `sub`s that some stored user, in any project, already has (docs/reference.md#import-user-ids)."""
    owners: dict[tuple[str, str], str] = field(default_factory=dict)
    key_owners: dict[str, str] = field(default_factory=dict)
    """Login key (`login_ids.login_key`) -> user id: the stored holders of the keys the chunk names, and the world's.
    One login id names one user across kinds: a username spelled like another user's email is refused."""
    oauth_owners: dict[tuple[str, str], str] = field(default_factory=dict)
    """(provider alias, subject) -> user id: the stored owners of the pairs the chunk names, and the world's."""
    new_roles: set[str] = field(default_factory=set)
    new_groups: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        for user in self.users.values():
            for login_id in user.login_ids.values():
                self.owners[(login_id.attribute, login_id.normalized)] = user.id
                if login_id.unique_key is not None:
                    self.key_owners[login_id.unique_key] = user.id
            for pair in user.oauth:
                self.oauth_owners[pair] = user.id

    def apply(self, index: int, parsed: ParsedRecord) -> ImportDetail:
        """Apply one record; the detail says what happened (docs/reference.md#import-outcomes-and-details)."""
        warnings = list(parsed.warnings)
        try:
            if parsed.error is not None:
                raise parsed.error
            assert parsed.record is not None
            outcome, user_id = self._apply(parsed.record, warnings)
        except UserIOError as error:
            return ImportDetail(index=index, record=parsed.echo, outcome="failed", errors=[error_object(error)])
        return ImportDetail(
            index=index,
            record=parsed.echo,
            outcome=outcome,
            user_id=user_id,
            warnings=[Warning(w) for w in warnings] if warnings else UNSET,
        )

    def insert_user(self, record: UserRecord, warnings: list[str]) -> str:
        """One user created by the record, as an import inserts it (the admin API's create); its id."""
        return self._insert(record, warnings)

    def update_user(self, user: UserState, record: UserRecord, warnings: list[str]) -> None:
        """`user` changed by the record, as an upsert import updates it (the admin API's PATCH).

        With an empty `identifier`, every login id of the record is a change, as the update rules treat any
        non-identifier (docs/reference.md#import-updates).
        """
        self._update(user, record, warnings)

    def _apply(self, record: UserRecord, warnings: list[str]) -> tuple[Any, str]:
        value = getattr(record, self.identifier)
        if value is UNSET or value is None:
            missing = [self.identifier]
            raise ValidationFailed([Cause("", "required", {"expected": missing, "missing": missing})])
        user_id = self.owners.get((self.identifier, self.login_id_rules.normalize(self.identifier, value)))
        if user_id is None:
            return "inserted", self._insert(record, warnings)
        if not self.upsert:
            warnings.append("skipping because upsert = false and user exists")
            return "skipped", user_id
        self._update(self.users[user_id], record, warnings)
        return "updated", user_id

    # Checks, done before anything changes.

    def _check_login_ids(self, user_id: str | None, record: UserRecord) -> dict[str, tuple[str, str]]:
        """The login ids the record sets, as attribute -> (value, normalized); refused if another user has one."""
        wanted: dict[str, tuple[str, str]] = {}
        for attribute in LOGIN_ID_ATTRIBUTES:
            value = getattr(record, attribute)
            if isinstance(value, str):
                normalized = self.login_id_rules.normalize(attribute, value)
                owner = self.owners.get((attribute, normalized))
                if owner is not None and owner != user_id:
                    raise DuplicatedIdentity(f"{attribute} {value!r} is already used by another user")
                holder = self.key_owners.get(login_key(normalized)) if owner is None else None
                if holder is not None and holder != user_id:
                    raise DuplicatedIdentity(
                        f"{attribute} {value!r} is already used by another user as another kind of login id"
                        " (one login id names one user)"
                    )
                wanted[attribute] = (value, normalized)
        return wanted

    def _check_identities(self, user_id: str | None, record: UserRecord) -> list[OAuthIdentityInput]:
        """The linked identities the record names; refused if another user holds one.

        See docs/reference.md#import-linked-identities.
        """
        if not isinstance(record.identities, list):
            return []
        for identity in record.identities:
            owner = self.oauth_owners.get((identity.provider_alias, identity.subject))
            if owner is not None and owner != user_id:
                raise DuplicatedIdentity(
                    f"identities: {identity.provider_alias} subject {identity.subject!r} is already linked to another"
                    " user"
                )
        return record.identities

    def _check_sub(self, user: UserState | None, record: UserRecord) -> None:
        """A `sub` names a new user's id: refused when taken; on an existing user it must be that user's id."""
        sub = record.sub
        if not isinstance(sub, str) or (user is not None and sub == user.id):
            return
        if user is not None:
            message = f"sub {sub!r} differs from the id {user.id!r} of the user this record updates; ids never change"
            raise ValidationFailed([Cause("/sub", "const", {"expected": user.id, "message": message})], message)
        if sub in self.taken_ids or sub in self.users:
            raise DuplicatedUserID(f"user id {sub!r} is already taken")

    def _valid_period(self, user: UserState | None, record: UserRecord) -> tuple[datetime | None, datetime | None]:
        """The account valid period after the record (ref: each bound given replaces that bound, stored in UTC)."""
        valid_from = user.account_valid_from if user else None
        valid_until = user.account_valid_until if user else None
        if isinstance(record.account_valid_from, str):
            valid_from = utc_timestamp(record.account_valid_from)
        if isinstance(record.account_valid_until, str):
            valid_until = utc_timestamp(record.account_valid_until)
        if valid_from is not None and valid_until is not None and not valid_from < valid_until:
            raise InvalidAccountStatusTransition(
                "the start timestamp of account valid period must be less than the end timestamp of the account"
                " valid period",
                info={"cause": {"kind": "AccountValidFromShouldBeBeforeAccountValidUntil"}},
            )
        return valid_from, valid_until

    def _disable_window(
        self, user: UserState | None, record: UserRecord, valid_period: tuple[datetime | None, datetime | None]
    ) -> tuple[datetime | None, datetime | None]:
        """The temporary disable window after the record: each bound given replaces that bound (as the valid period)."""
        window_from = user.temporarily_disabled_from if user else None
        window_until = user.temporarily_disabled_until if user else None
        if isinstance(record.temporarily_disabled_from, str):
            window_from = utc_timestamp(record.temporarily_disabled_from)
        if isinstance(record.temporarily_disabled_until, str):
            window_until = utc_timestamp(record.temporarily_disabled_until)
        if record.temporarily_disabled_from is not UNSET or record.temporarily_disabled_until is not UNSET:
            check_disable_window(window_from, window_until, *valid_period)
        return window_from, window_until

    def _disabled_warning(self, user: UserState, disabled: bool) -> str | None:
        """The reference's warning when `disabled` asks for the state the user is already in (no change)."""
        if disabled and user.disabled:
            return "invalid account status transition: disabled -> disabled"
        if not disabled and not user.disabled:
            state = disabled_state(
                self.now,
                disabled=False,
                account_valid_from=user.account_valid_from,
                account_valid_until=user.account_valid_until,
            )
            return f"invalid account status transition: {state or 'normal'} -> normal"
        return None

    def _check_keys(self, record: UserRecord) -> None:
        for keys, known, create, error in (
            (record.roles, self.known_roles | self.new_roles, self.create_unknown_roles, RoleUnknownKeys),
            (record.groups, self.known_groups | self.new_groups, self.create_unknown_groups, GroupUnknownKeys),
        ):
            if isinstance(keys, list) and not create:
                unknown = sorted({k for k in keys if k not in known})
                if unknown:
                    raise error(unknown)

    def _remember_keys(self, record: UserRecord) -> None:
        if isinstance(record.roles, list):
            self.new_roles.update(k for k in record.roles if k not in self.known_roles)
        if isinstance(record.groups, list):
            self.new_groups.update(k for k in record.groups if k not in self.known_groups)

    def _custom_items(self, record: UserRecord) -> dict[str, Any]:
        if record.custom_attributes is UNSET:
            return {}
        if self.custom_schema:
            return {k: v for k, v in record.custom_attributes.items() if k in self.custom_schema}
        return dict(record.custom_attributes)

    # Insert: the record's values, absent and null alike mean "not set".

    def _insert(self, record: UserRecord, warnings: list[str]) -> str:
        self._check_sub(None, record)
        wanted = self._check_login_ids(None, record)
        links = self._check_identities(None, record)
        self._check_keys(record)
        valid_from, valid_until = self._valid_period(None, record)
        window = self._disable_window(None, record, (valid_from, valid_until))
        for attribute in LOGIN_ID_ATTRIBUTES:
            if getattr(record, attribute) is None:
                warnings.append(f"{attribute} = null has no effect in insert.")
        for attribute in _VERIFIABLE:
            flag = getattr(record, f"{attribute}_verified")
            if flag is False:
                warnings.append(f"{attribute}_verified = false has no effect in insert.")
            elif flag is True and attribute not in wanted:
                warnings.append(f"{attribute}_verified = true has no effect when {attribute} is absent.")
        if record.mfa is not UNSET:
            for attribute in ("email", "phone_number"):
                if getattr(record.mfa, attribute) is None:
                    warnings.append(f"mfa.{attribute} = null has no effect in insert.")
        if record.disabled is False:
            warnings.append("disabled = false has no effect in insert.")

        user_id = record.sub if isinstance(record.sub, str) else new_id()
        user = UserState(id=user_id, created_at=self.now, updated_at=self.now, is_new=True, changed=True)
        user.account_valid_from, user.account_valid_until = valid_from, valid_until
        user.temporarily_disabled_from, user.temporarily_disabled_until = window
        for attribute, (value, normalized) in wanted.items():
            self._set_login_id(user, attribute, value, normalized)
            if getattr(record, f"{attribute}_verified", None) is True:
                user.verified.add(attribute)
        for attribute in STANDARD_STRING_ATTRIBUTES:
            value = getattr(record, attribute)
            if isinstance(value, str):
                user.standard[attribute] = value
        if isinstance(record.address, AddressInput):
            user.standard["address"] = _address(record.address)
        user.custom = {k: v for k, v in self._custom_items(record).items() if v is not None}
        user.disabled = record.disabled is True
        if isinstance(record.roles, list):
            user.roles = set(record.roles)
        if isinstance(record.groups, list):
            user.groups = set(record.groups)
        user.roles_changed = user.groups_changed = True
        if record.password:
            user.authenticators.append(
                self._authenticator(
                    "primary",
                    "password",
                    password_hash=record.password.stored_hash,
                    expire_after=utc_timestamp(record.password.expire_after),
                )
            )
        if record.mfa is not UNSET:
            if isinstance(record.mfa.email, str):
                user.authenticators.append(
                    self._authenticator("secondary", "oob_otp_email", oob_target=record.mfa.email)
                )
            if isinstance(record.mfa.phone_number, str):
                user.authenticators.append(
                    self._authenticator("secondary", "oob_otp_sms", oob_target=record.mfa.phone_number)
                )
            if record.mfa.password:
                user.authenticators.append(
                    self._authenticator(
                        "secondary",
                        "password",
                        password_hash=record.mfa.password.stored_hash,
                        expire_after=utc_timestamp(record.mfa.password.expire_after),
                    )
                )
            if record.mfa.totp:
                user.authenticators.append(self._authenticator("secondary", "totp", totp_secret=record.mfa.totp.secret))
        self._link(user, links)
        self._remember_keys(record)
        self.users[user.id] = user
        return user.id

    # Update (docs/reference.md#import-updates), row by row.

    def _update(self, user: UserState, record: UserRecord, warnings: list[str]) -> None:
        self._check_sub(user, record)
        wanted = self._check_login_ids(user.id, record)
        links = self._check_identities(user.id, record)
        self._check_keys(record)
        valid_period = self._valid_period(user, record)
        window = self._disable_window(user, record, valid_period)

        # preferred_username, email, phone_number: UPDATED_IF_PRESENT_AND_REMOVED_IF_NULL, not the identifier.
        for attribute in LOGIN_ID_ATTRIBUTES:
            value = getattr(record, attribute)
            if attribute == self.identifier or value is UNSET:
                continue
            if value is None:
                self._remove_login_id(user, attribute)
            else:
                self._set_login_id(user, attribute, *wanted[attribute])
        # email_verified, phone_number_verified: UPDATED_IF_PRESENT, for the value given in the same record.
        for attribute in _VERIFIABLE:
            flag = getattr(record, f"{attribute}_verified")
            if flag is UNSET:
                continue
            value = getattr(record, attribute)
            if value is UNSET:
                warnings.append(f"{attribute}_verified has no effect when {attribute} is absent.")
            elif value is None:
                warnings.append(f"{attribute}_verified has no effect when {attribute} = null.")
            elif flag:
                user.verified.add(attribute)
            else:
                user.verified.discard(attribute)
        # Other standard attributes: UPDATED_IF_PRESENT_AND_REMOVED_IF_NULL; address replaced whole.
        for attribute in STANDARD_STRING_ATTRIBUTES:
            _set_or_remove(user.standard, attribute, getattr(record, attribute))
        address = record.address
        _set_or_remove(user.standard, "address", _address(address) if isinstance(address, AddressInput) else address)
        # custom_attributes.*: UPDATED_IF_PRESENT_AND_REMOVED_IF_NULL, each on its own.
        for name, value in self._custom_items(record).items():
            _set_or_remove(user.custom, name, value)
        # roles, groups: UPDATED_IF_PRESENT, the set becomes exactly the list.
        if isinstance(record.roles, list) and set(record.roles) != user.roles:
            user.roles, user.roles_changed = set(record.roles), True
        if isinstance(record.groups, list) and set(record.groups) != user.groups:
            user.groups, user.groups_changed = set(record.groups), True
        # disabled: UPDATED_IF_PRESENT; asking for the current state is a warning (ref).
        if isinstance(record.disabled, bool):
            if warning := self._disabled_warning(user, record.disabled):
                warnings.append(warning)
            user.disabled = record.disabled
        # account_valid_from, account_valid_until: UPDATED_IF_PRESENT, each bound on its own (ref).
        user.account_valid_from, user.account_valid_until = valid_period
        # temporarily_disabled_from, temporarily_disabled_until: UPDATED_IF_PRESENT, each bound on its own.
        user.temporarily_disabled_from, user.temporarily_disabled_until = window
        # password, mfa.password, mfa.totp: IGNORED.
        if record.password:
            warnings.append("password is ignored because the user already exists.")
        if record.mfa is not UNSET:
            if record.mfa.password:
                warnings.append("mfa.password is ignored because the user already exists.")
            if record.mfa.totp:
                warnings.append("mfa.totp is ignored because the user already exists.")
            # mfa.email, mfa.phone_number: UPDATED_IF_PRESENT_AND_REMOVED_IF_NULL.
            self._set_oob(user, "oob_otp_email", record.mfa.email)
            self._set_oob(user, "oob_otp_sms", record.mfa.phone_number)
        # identities: UPDATED_IF_PRESENT, each on its own: added, or its type and claims replaced; none removed.
        self._link(user, links)
        self._remember_keys(record)
        user.updated_at = self.now
        user.changed = True

    # Mutations.

    def _set_login_id(self, user: UserState, attribute: str, value: str, normalized: str) -> None:
        current = user.login_ids.get(attribute)
        if current is not None and current.normalized == normalized:
            current.original = value
            return
        self._remove_login_id(user, attribute)
        key = login_key(normalized)
        held = any(other.unique_key == key for other in user.login_ids.values())  # its email is its username too
        user.login_ids[attribute] = LoginID(
            id=current.id if current else new_id(),
            attribute=attribute,
            key=LOGIN_ID_ATTRIBUTES[attribute],
            original=value,
            normalized=normalized,
            created_at=self.now,
            unique_key=None if held else key,
        )
        self.owners[(attribute, normalized)] = user.id
        if not held:
            self.key_owners[key] = user.id

    def _link(self, user: UserState, links: list[OAuthIdentityInput]) -> None:
        for identity in links:
            pair = (identity.provider_alias, identity.subject)
            provider_type = identity.provider_type if isinstance(identity.provider_type, str) else pair[0]
            claims = identity.claims if isinstance(identity.claims, dict) else {}
            current = user.oauth.get(pair)
            if current is None:
                user.oauth[pair] = OAuthLink(
                    id=new_id(),
                    provider_alias=identity.provider_alias,
                    provider_type=provider_type,
                    subject=identity.subject,
                    claims=claims,
                    created_at=self.now,
                    changed=True,
                )
                self.oauth_owners[pair] = user.id
                continue
            if isinstance(identity.provider_type, str) and current.provider_type != provider_type:
                current.provider_type, current.changed = provider_type, True
            if isinstance(identity.claims, dict) and current.claims != claims:
                current.claims, current.changed = claims, True

    def _remove_login_id(self, user: UserState, attribute: str) -> None:
        current = user.login_ids.pop(attribute, None)
        user.verified.discard(attribute)
        if current is not None:
            self.owners.pop((attribute, current.normalized), None)
            if current.unique_key is not None:
                # Another login id of the user with the same key takes it over, or the key is free.
                heir = next((o for o in user.login_ids.values() if login_key(o.normalized) == current.unique_key), None)
                if heir is not None:
                    heir.unique_key = current.unique_key
                else:
                    self.key_owners.pop(current.unique_key, None)

    def _set_oob(self, user: UserState, type_: str, target: str | UnsetType | None) -> None:
        if target is UNSET:
            return
        existing = [a for a in user.authenticators if a.kind == "secondary" and a.type == type_]
        if target is not None and [a.oob_target for a in existing] == [target]:
            return
        user.authenticators = [a for a in user.authenticators if a not in existing]
        if target is not None:
            user.authenticators.append(self._authenticator("secondary", type_, oob_target=target))

    def _authenticator(self, kind: str, type_: str, **secret: Any) -> AuthenticatorState:
        return AuthenticatorState(id=new_id(), kind=kind, type=type_, created_at=self.now, **secret)


def check_disable_window(
    start: datetime | None, end: datetime | None, valid_from: datetime | None, valid_until: datetime | None
) -> None:
    """A temporary disable window: both bounds or neither, from < until, inside the account valid period (ref).

    The admin API's disable and an import record's `temporarily_disabled_*` are held to it alike.
    """
    if (start is None) != (end is None):
        raise InvalidAccountStatusTransition(
            "a temporary disable window needs both temporarily_disabled_from and temporarily_disabled_until",
            info={"cause": {"kind": "TemporarilyDisabledWindowIncomplete"}},
        )
    if start is None or end is None:
        return
    if not start < end:
        raise InvalidAccountStatusTransition(
            "temporarily_disabled_from must be before temporarily_disabled_until",
            info={"cause": {"kind": "TemporarilyDisabledFromShouldBeBeforeUntil"}},
        )
    if (valid_from is not None and start < valid_from) or (valid_until is not None and end > valid_until):
        raise InvalidAccountStatusTransition(
            "the temporary disable window must lie inside the account valid period",
            info={"cause": {"kind": "TemporarilyDisabledOutsideValidPeriod"}},
        )


def utc_timestamp(value: str | UnsetType) -> datetime | None:
    """An RFC 3339 timestamp (validated already: `record_schema.parse_rfc3339`) in UTC, as the reference stores it."""
    if not isinstance(value, str):
        return None
    instant = parse_rfc3339(value)
    assert instant is not None, "validated by the record's checks"
    return instant


def _address(address: AddressInput) -> dict[str, str]:
    return {k: v for k in AddressInput.__struct_fields__ if isinstance(v := getattr(address, k), str)}


def _set_or_remove(target: dict[str, Any], key: str, value: Any) -> None:
    if value is UNSET:
        return
    if value is None:
        target.pop(key, None)
    else:
        target[key] = value
