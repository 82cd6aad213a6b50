"""A reference model of the import (SPEC 2.4, DECISIONS 3), written from the documents, not from the code.

It knows a project's users as plain data and applies records to them one by one in index order, saying for each what
the status endpoint must report (outcome, user, warnings, redacted echo, and for a failed record which error reasons
are acceptable) and what the database must then hold. It judges validity only for the values the tests generate,
whose validity the documents decide on their own (formats of DECISIONS 3: an address without `@`, a number that is
not E.164, an empty string, ...).

Choices the documents leave to the reference and that the model takes from it:
- Login ids are unique per kind on the normalized value: emails case-insensitive (DECISIONS 3), usernames too (the
  reference's default login-id config), phone numbers in E.164 (the pools hold only E.164 numbers).
- A login id that changes to another value is unverified unless the same record says `*_verified: true`; removing it
  removes its verification (verification belongs to the value).
- `*_verified` is only stored next to its login id, as in OIDC claims.
- A record that fails validation fails whatever the users are; a skipped record is not checked against the users.
"""

from __future__ import annotations

import copy
import re
import zoneinfo
from dataclasses import dataclass, field
from datetime import date
from typing import Any

__all__ = ["LOGIN_ID_KEYS", "Expected", "ImportModel", "ModelUser", "redacted"]

LOGIN_IDS = ("email", "phone_number", "preferred_username")
LOGIN_ID_KEYS = {"email": "email", "phone_number": "phone", "preferred_username": "username"}
"""Attribute -> the identity's `login_id.key` (SPEC 2.6 `/identities`)."""
VERIFIABLE = ("email", "phone_number")
PROFILE = (
    "name",
    "given_name",
    "family_name",
    "middle_name",
    "nickname",
    "profile",
    "picture",
    "website",
    "gender",
    "birthdate",
    "zoneinfo",
    "locale",
)
ADDRESS = ("formatted", "street_address", "locality", "region", "postal_code", "country")
RECORD_MEMBERS = frozenset(
    (
        *LOGIN_IDS,
        "email_verified",
        "phone_number_verified",
        *PROFILE,
        "address",
        "custom_attributes",
        "roles",
        "groups",
        "disabled",
        "password",
        "mfa",
    )
)
MFA_MEMBERS = frozenset(("email", "phone_number", "password", "totp"))

_EMAIL = re.compile(r"[^@\s]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_E164 = re.compile(r"\+[1-9][0-9]{7,14}")
_BCRYPT = re.compile(r"\$2[aby]\$(0[4-9]|1[0-4])\$[./A-Za-z0-9]{53}")  # cost 4 to ImportConfig.max_bcrypt_cost
_BASE32 = re.compile(r"[A-Z2-7]+")
_LOCALE = re.compile(r"[a-z]{2,3}(-[A-Z][a-z]{3})?(-[A-Z]{2})?")


def normalize(attribute: str, value: str) -> str:
    """What a login id is unique on (see the module docstring)."""
    if attribute == "email":
        return value.lower()
    if attribute == "preferred_username":
        return value.casefold()
    return value


_TIMEZONES = frozenset(zoneinfo.available_timezones())
"""Read once: listing them walks the tz database (6 s of the import model's 48 s when read per value)."""


def _valid_string(attribute: str, value: str) -> bool:
    """DECISIONS 3 "Formats", for the kinds of value the tests generate."""
    if value == "":
        return False
    if attribute == "email":
        return bool(_EMAIL.fullmatch(value))
    if attribute == "phone_number":
        return bool(_E164.fullmatch(value))
    if attribute == "preferred_username":
        return not any(c.isspace() for c in value)
    if attribute == "birthdate":
        if re.fullmatch(r"\d{4}", value):
            return True
        try:
            date.fromisoformat(value.replace("0000-", "2000-", 1).replace("--", "2000-", 1))
        except ValueError:
            return False
        return True
    if attribute == "zoneinfo":
        return value in _TIMEZONES
    if attribute == "locale":
        return bool(_LOCALE.fullmatch(value))
    if attribute in ("profile", "picture", "website"):
        return re.fullmatch(r"https?://[^\s/]+(/\S*)?", value) is not None
    return True


def redacted(record: Any) -> Any:
    """SPEC 2.1 / DECISIONS 3: the echo, with every secret replaced by `REDACTED`."""
    echo = copy.deepcopy(record)
    if not isinstance(echo, dict):
        return echo
    if isinstance(echo.get("password"), dict) and "password_hash" in echo["password"]:
        echo["password"]["password_hash"] = "REDACTED"
    mfa = echo.get("mfa")
    if isinstance(mfa, dict):
        if isinstance(mfa.get("password"), dict) and "password_hash" in mfa["password"]:
            mfa["password"]["password_hash"] = "REDACTED"
        if isinstance(mfa.get("totp"), dict) and "secret" in mfa["totp"]:
            mfa["totp"]["secret"] = "REDACTED"
    return echo


@dataclass
class ModelUser:
    """A user as the documents describe it."""

    id: str
    login_ids: dict[str, str] = field(default_factory=dict)
    """attribute -> value as last given."""
    verified: set[str] = field(default_factory=set)
    profile: dict[str, Any] = field(default_factory=dict)
    custom: dict[str, Any] = field(default_factory=dict)
    roles: set[str] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)
    disabled: bool = False
    password: str | None = None
    mfa_email: str | None = None
    mfa_phone: str | None = None
    mfa_password: str | None = None
    totp: str | None = None

    def standard_attributes(self) -> dict[str, Any]:
        """The stored OIDC standard attributes: login ids (normalized, as the reference stores them), their
        verification, the profile."""
        out: dict[str, Any] = {}
        for attribute in LOGIN_IDS:
            if attribute in self.login_ids:
                out[attribute] = normalize(attribute, self.login_ids[attribute])
                if attribute in VERIFIABLE:
                    out[f"{attribute}_verified"] = attribute in self.verified
        out.update(copy.deepcopy(self.profile))
        return out

    def identities(self) -> dict[str, str]:
        return {LOGIN_ID_KEYS[a]: v for a, v in self.login_ids.items()}

    def authenticators(self) -> list[tuple[str, str, str]]:
        """(kind, type, secret or target), sorted like the test reader sorts them."""
        items = [
            ("primary", "password", self.password),
            ("secondary", "oob_otp_email", self.mfa_email),
            ("secondary", "oob_otp_sms", self.mfa_phone),
            ("secondary", "password", self.mfa_password),
            ("secondary", "totp", self.totp),
        ]
        return sorted((k, t, v) for k, t, v in items if v is not None)


@dataclass
class Expected:
    """What the status endpoint must say about one record."""

    outcome: str
    user_id: str | None
    reasons: frozenset[str] = frozenset()
    """For `failed`: the error reasons that would each be a right answer (a record may be wrong in several ways)."""
    warnings: list[str] = field(default_factory=list)
    echo: Any = None


_ABSENT = object()


class ImportModel:
    """One project's users, changed by records exactly as SPEC 2.4 and DECISIONS 3 say."""

    def __init__(self, roles: set[str], groups: set[str]) -> None:
        self.users: dict[str, ModelUser] = {}
        self.roles = roles
        self.groups = groups

    def owner(self, attribute: str, value: str) -> str | None:
        wanted = normalize(attribute, value)
        for user in self.users.values():
            held = user.login_ids.get(attribute)
            if held is not None and normalize(attribute, held) == wanted:
                return user.id
        return None

    # Validation of one record on its own (DECISIONS 3: each record is checked in the job and fails alone).

    def problems(self, record: dict[str, Any]) -> set[str]:
        """The error reasons the record earns without looking at any user."""
        reasons: set[str] = set()
        invalid = "ValidationFailed"
        if set(record) - RECORD_MEMBERS:
            reasons.add(invalid)
        for attribute in (*LOGIN_IDS, *PROFILE):
            value = record.get(attribute)
            if value is not None and (not isinstance(value, str) or not _valid_string(attribute, value)):
                reasons.add(invalid)
        for flag in ("email_verified", "phone_number_verified", "disabled"):
            if flag in record and not isinstance(record[flag], bool):
                reasons.add(invalid)
        address = record.get("address")
        if address is not None and (
            not isinstance(address, dict)
            or set(address) - set(ADDRESS)
            or any(v is not None and (not isinstance(v, str) or v == "") for v in address.values())
        ):
            reasons.add(invalid)
        mfa_members = record.get("mfa") if isinstance(record.get("mfa"), dict) else {}
        if record.get("password", {}) is None or any(mfa_members.get(m, {}) is None for m in ("password", "totp")):
            reasons.add(invalid)  # null is refused for password, mfa.password and mfa.totp (ref: type)
        for password in (record.get("password"), (record.get("mfa") or {}).get("password")):
            if password is None:
                continue
            if set(password) != {"type", "password_hash"} or password["type"] != "bcrypt":
                reasons.add(invalid)
            elif not _BCRYPT.fullmatch(password["password_hash"]):
                reasons.add("InvalidBcryptHash")
        mfa = record.get("mfa")
        if mfa is not None:
            if set(mfa) - MFA_MEMBERS:
                reasons.add(invalid)
            for member, attribute in (("email", "email"), ("phone_number", "phone_number")):
                value = mfa.get(member)
                if value is not None and not _valid_string(attribute, value):
                    reasons.add(invalid)
            totp = mfa.get("totp")
            if totp is not None:
                secret = totp.get("secret", "")
                if not _BASE32.fullmatch(secret) or len(secret) % 8 in (1, 3, 6):
                    reasons.add("InvalidTOTPSecret")
        return reasons

    # Applying one record.

    def apply(self, record: dict[str, Any], identifier: str, upsert: bool, inserted_id: str | None) -> Expected:
        """Apply a record as the import must; `inserted_id` names the user if the record creates one."""
        echo = redacted(record)
        reasons = self.problems(record)
        value = record.get(identifier)
        if value is None:
            reasons.add("ValidationFailed")  # the identifier is required in every record
        if reasons:
            return Expected("failed", None, frozenset(reasons), echo=echo)
        assert isinstance(value, str)
        user_id = self.owner(identifier, value)
        if user_id is not None and not upsert:
            return Expected("skipped", user_id, warnings=["skipping because upsert = false and user exists"], echo=echo)
        reasons = self._conflicts(record, user_id, identifier)
        if reasons:
            return Expected("failed", None, frozenset(reasons), echo=echo)
        if user_id is None:
            new_id = inserted_id or "<no user_id in the detail>"
            warnings = self._insert(new_id, record)
            return Expected("inserted", None, warnings=warnings, echo=echo)
        warnings = self._update(self.users[user_id], record, identifier)
        return Expected("updated", user_id, warnings=warnings, echo=echo)

    def _conflicts(self, record: dict[str, Any], user_id: str | None, identifier: str) -> set[str]:
        reasons: set[str] = set()
        for attribute in LOGIN_IDS:
            value = record.get(attribute)
            if not isinstance(value, str) or (user_id is not None and attribute == identifier):
                continue
            owner = self.owner(attribute, value)
            if owner is not None and owner != user_id:
                reasons.add("InvariantViolated")  # cause DuplicatedIdentity (DECISIONS 3)
        if isinstance(record.get("roles"), list) and set(record["roles"]) - self.roles:
            reasons.add("RoleUnknownKeys")
        if isinstance(record.get("groups"), list) and set(record["groups"]) - self.groups:
            reasons.add("GroupUnknownKeys")
        return reasons

    def _insert(self, user_id: str, record: dict[str, Any]) -> list[str]:
        warnings = []
        user = ModelUser(user_id)
        for attribute in LOGIN_IDS:
            value = record.get(attribute, _ABSENT)
            if value is None:
                warnings.append(f"{attribute} = null has no effect in insert.")
            elif isinstance(value, str):
                user.login_ids[attribute] = value
        for attribute in VERIFIABLE:
            flag = record.get(f"{attribute}_verified", _ABSENT)
            if flag is False:
                warnings.append(f"{attribute}_verified = false has no effect in insert.")
            elif flag is True and attribute not in user.login_ids:
                warnings.append(f"{attribute}_verified = true has no effect when {attribute} is absent.")
            elif flag is True:
                user.verified.add(attribute)
            # SPEC 2.4: on a first import an absent `email_verified` leaves the email unverified.
        for attribute in PROFILE:
            if isinstance(record.get(attribute), str):
                user.profile[attribute] = record[attribute]
        if isinstance(record.get("address"), dict):
            user.profile["address"] = {k: v for k, v in record["address"].items() if v is not None}
        user.custom = {k: v for k, v in record.get("custom_attributes", {}).items() if v is not None}
        user.roles = set(record.get("roles", ()))
        user.groups = set(record.get("groups", ()))
        if record.get("disabled") is False:
            warnings.append("disabled = false has no effect in insert.")
        user.disabled = record.get("disabled") is True
        if record.get("password") is not None:
            user.password = record["password"]["password_hash"]
        mfa = record.get("mfa")
        if mfa is not None:
            for member in ("email", "phone_number"):
                if member in mfa and mfa[member] is None:
                    warnings.append(f"mfa.{member} = null has no effect in insert.")
            user.mfa_email = mfa.get("email")
            user.mfa_phone = mfa.get("phone_number")
            if mfa.get("password") is not None:
                user.mfa_password = mfa["password"]["password_hash"]
            if mfa.get("totp") is not None:
                user.totp = mfa["totp"]["secret"]
        self.users[user_id] = user
        return warnings

    def _update(self, user: ModelUser, record: dict[str, Any], identifier: str) -> list[str]:
        warnings = []
        # preferred_username, email, phone_number: UPDATED_IF_PRESENT_AND_REMOVED_IF_NULL, unless the identifier.
        for attribute in LOGIN_IDS:
            if attribute == identifier or attribute not in record:
                continue
            value = record[attribute]
            current = user.login_ids.get(attribute)
            if value is None:
                user.login_ids.pop(attribute, None)
                user.verified.discard(attribute)
                continue
            if current is None or normalize(attribute, current) != normalize(attribute, value):
                user.verified.discard(attribute)
            user.login_ids[attribute] = value
        # email_verified, phone_number_verified: UPDATED_IF_PRESENT, for the value the same record gives.
        for attribute in VERIFIABLE:
            flag = f"{attribute}_verified"
            if flag not in record:
                continue
            if attribute not in record:
                warnings.append(f"{flag} has no effect when {attribute} is absent.")
            elif record[attribute] is None:
                warnings.append(f"{flag} has no effect when {attribute} = null.")
            elif record[flag]:
                user.verified.add(attribute)
            else:
                user.verified.discard(attribute)
        # Other standard attributes: UPDATED_IF_PRESENT_AND_REMOVED_IF_NULL; address replaced whole.
        for attribute in (*PROFILE, "address"):
            if attribute not in record:
                continue
            value = record[attribute]
            if value is None:
                user.profile.pop(attribute, None)
            elif attribute == "address":
                user.profile["address"] = {k: v for k, v in value.items() if v is not None}
            else:
                user.profile[attribute] = value
        # custom_attributes.*: each on its own.
        for name, value in record.get("custom_attributes", {}).items():
            if value is None:
                user.custom.pop(name, None)
            else:
                user.custom[name] = value
        # roles, groups: the set becomes exactly the list; disabled: UPDATED_IF_PRESENT.
        if "roles" in record:
            user.roles = set(record["roles"])
        if "groups" in record:
            user.groups = set(record["groups"])
        if "disabled" in record:
            if record["disabled"] == user.disabled:  # the reference warns of a transition to the same state
                state = "disabled" if user.disabled else "normal"
                warnings.append(f"invalid account status transition: {state} -> {state}")
            user.disabled = record["disabled"]
        # password, mfa.password, mfa.totp: IGNORED (warned, DECISIONS 3); mfa.email, mfa.phone_number: replaced.
        if record.get("password") is not None:
            warnings.append("password is ignored because the user already exists.")
        mfa = record.get("mfa")
        if mfa is not None:
            for member in ("password", "totp"):
                if mfa.get(member) is not None:
                    warnings.append(f"mfa.{member} is ignored because the user already exists.")
            if "email" in mfa:
                user.mfa_email = mfa["email"]
            if "phone_number" in mfa:
                user.mfa_phone = mfa["phone_number"]
        return warnings
