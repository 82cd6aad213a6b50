"""Every error the plugin reports: a name, a reason, a message, optional info.

See docs/reference.md#errors-import-records and docs/reference.md#errors-envelope.

Code raises `TaskNotFound()` and friends. The hierarchy knows nothing of HTTP: `web/error_responses.py` maps each class
to its status and headers (one table) and turns an error into either envelope.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from litestar_userio.causes import Cause, describe, summarize

__all__ = [
    "AdminAuthFailed",
    "BodyTooLarge",
    "Cause",
    "ChangeCursorExpired",
    "DatabaseUnavailable",
    "DuplicateKeyFound",
    "DuplicatedIdentity",
    "DuplicatedUserID",
    "ErrorObject",
    "ExtraNotInstalled",
    "Forbidden",
    "Gone",
    "GroupUnknownKeys",
    "HTTPSRequired",
    "HookCompileFailed",
    "HookDisallowed",
    "HookError",
    "HookInvalidResponse",
    "HookResponseMalformed",
    "HookSecretNotFound",
    "HookSecretsDisabled",
    "HookTimeout",
    "HookVersionNotFound",
    "HookWorkerUnavailable",
    "IdempotencyKeyReused",
    "InternalError",
    "Invalid",
    "InvalidAccountStatusTransition",
    "InvalidBcryptHash",
    "InvalidCredentials",
    "InvalidCursor",
    "InvalidJWTMutations",
    "InvalidPasswordHash",
    "InvalidRequest",
    "InvalidSignInRequest",
    "InvalidTOTPSecret",
    "MaximumConcurrentJobLimitExceeded",
    "NotFound",
    "PasswordExpired",
    "PasswordVerificationBusy",
    "QueueUnavailable",
    "RateLimited",
    "RefreshTokenInvalid",
    "RoleUnknownKeys",
    "ScimAuthFailed",
    "ScimError",
    "ScimNotImplemented",
    "ScimPreconditionFailed",
    "ScimTooLarge",
    "SecretExportDisabled",
    "ServiceUnavailable",
    "SignInRefused",
    "TaskNotFound",
    "TooManyRequest",
    "UnknownClient",
    "UnknownHost",
    "UnstorableText",
    "UnsupportedMediaType",
    "UserDisabled",
    "UserExportDisabled",
    "UserExportNonUniqueFieldNames",
    "UserIOError",
    "UserNotFound",
    "UserOutsideValidPeriod",
    "UserTemporarilyDisabled",
    "ValidationFailed",
    "WebHookDisallowed",
    "WebhookDeliveryNotFound",
    "WebhookInvalid",
    "WebhookNotFound",
    "WriteConflict",
    "unavailable_dependency",
]


class ErrorObject(msgspec.Struct, omit_defaults=True):
    """The error object of the export envelope, and of a failed import record (without `code`)."""

    name: str
    reason: str
    message: str
    code: int | msgspec.UnsetType = msgspec.UNSET
    info: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET


class UserIOError(Exception):
    """Base of all reported errors: a name, a reason, a message, optional info (its HTTP status: `statuses.py`)."""

    name: ClassVar[str] = "InternalError"
    reason: ClassVar[str] = "UnexpectedError"
    default_message: ClassVar[str] = "unexpected error"

    def __init__(self, message: str | None = None, *, info: dict[str, Any] | None = None) -> None:
        self.message = message or self.default_message
        self.info = info
        super().__init__(self.message)

    def to_object(self, code: int | msgspec.UnsetType = msgspec.UNSET) -> ErrorObject:
        """The error as the export envelope's inner object; `code` is its HTTP status (`statuses.error_object`)."""
        return ErrorObject(
            name=self.name,
            reason=self.reason,
            message=self.message,
            code=code,
            info=self.info if self.info is not None else msgspec.UNSET,
        )


class Invalid(UserIOError):
    """The request or a record is malformed."""

    name = "Invalid"
    reason = "Invalid"
    default_message = "invalid request"


class InvalidRequest(Invalid):
    """The request body is not a valid request (import top level)."""

    reason = "InvalidRequest"


class BodyTooLarge(Invalid):
    """The body is over the limit (docs/reference.md#limits)."""

    reason = "RequestEntityTooLarge"
    default_message = "request body is too large"


class UnsupportedMediaType(Invalid):
    """The POST bodies must be `application/json` (docs/reference.md#errors-import)."""

    reason = "UnsupportedMediaType"
    default_message = "Content-Type must be application/json"


class ValidationFailed(Invalid):
    """Input fails validation; `info.causes` says where and why."""

    reason = "ValidationFailed"
    default_message = "invalid request body"

    def __init__(self, causes: list[Cause], message: str | None = None) -> None:
        for cause in causes:
            if not cause.message:
                cause.message = describe(cause.location, cause.kind, cause.details)
        super().__init__(message or summarize(causes), info={"causes": msgspec.to_builtins(causes)})
        self.causes = causes


class DuplicateKeyFound(ValidationFailed):
    """A request body gives one key twice in an object; the cause's location points at it.

    See docs/reference.md#input-hygiene.
    """

    def __init__(self, key: str, location: str) -> None:
        super().__init__(
            [Cause(location, "duplicateKey", {"key": key})], f"request body has a duplicate key {key!r} at {location}"
        )


class UnstorableText(ValidationFailed):
    """Text no database here stores (U+0000, NUL); each cause names where (docs/reference.md#input-hygiene).

    The admin API's parameters and bodies are refused with the location; `db/engine.py` raises it, at the record
    (`""`), in place of PostgreSQL's refusal of a NUL that came another way (a host's own call).
    """

    def __init__(self, causes: list[Cause] | None = None) -> None:
        causes = causes or [Cause("", "general", {"message": "U+0000 (NUL) is not allowed in text"})]
        where = ", ".join(cause.location for cause in causes if cause.location)
        message = "U+0000 (NUL) is not allowed in text" + (f": remove it from {where}" if where else "")
        super().__init__(causes, message)


class InvalidBcryptHash(Invalid):
    """`password_hash` is not a well-formed bcrypt hash."""

    reason = "InvalidBcryptHash"
    default_message = "invalid bcrypt hash"


class InvalidPasswordHash(Invalid):
    """A password object of another format than bcrypt is malformed, refused, or above a cost bound.

    See docs/reference.md#passwords-formats.
    """

    reason = "InvalidPasswordHash"
    default_message = "invalid password hash"


class InvalidTOTPSecret(Invalid):
    """`mfa.totp.secret` is not RFC 4648 base32 without padding."""

    reason = "InvalidTOTPSecret"
    default_message = "invalid TOTP secret"


class DuplicatedIdentity(Invalid):
    """A login id of the record belongs to another user (ref: `InvariantViolated`, cause `DuplicatedIdentity`)."""

    reason = "InvariantViolated"
    default_message = "identity already exists"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message, info={"cause": {"kind": "DuplicatedIdentity"}})


class DuplicatedUserID(Invalid):
    """A record's `sub` is the id of a user already stored, in this project or another.

    See docs/reference.md#import-user-ids.
    """

    reason = "DuplicatedUserID"
    default_message = "this user id is already taken"


class IdempotencyKeyReused(Invalid):
    """An `Idempotency-Key` already named a task whose request was different."""

    reason = "IdempotencyKeyReused"
    default_message = "this Idempotency-Key was used for a different request"


class Forbidden(UserIOError):
    """Not allowed."""

    name = "Forbidden"
    reason = "Forbidden"
    default_message = "forbidden"


class SecretExportDisabled(Forbidden):
    """A lossless export (`format: "userio"`) of a project whose `allow_secret_export` setting is not true."""

    reason = "SecretExportDisabled"
    default_message = (
        "the lossless export is off for this project: `project configure --set allow_secret_export=true` allows it"
    )


class HTTPSRequired(Forbidden):
    """Requests must use HTTPS (docs/reference.md#authentication)."""

    reason = "HTTPSRequired"
    default_message = "HTTPS is required"


class UnknownHost(Forbidden):
    """The Host header names no project."""

    reason = "UnknownHost"
    default_message = "the Host header does not name a project"


class AdminAuthFailed(Forbidden):
    """The Admin API JWT is missing or invalid (docs/reference.md#authentication)."""

    reason = "InvalidAdminAPIToken"
    default_message = "invalid Admin API JWT"


class NotFound(UserIOError):
    """The thing asked for does not exist."""

    name = "NotFound"
    reason = "NotFound"
    default_message = "not found"


class TaskNotFound(NotFound):
    """The id refers to no task of this project (or its result expired)."""

    reason = "TaskNotFound"
    default_message = "task not found"


class UserNotFound(NotFound):
    """No user of this project has that id (ref name)."""

    reason = "UserNotFound"
    default_message = "user not found"


def _define_keys(kind: str) -> str:
    """What fixes an unknown role or group key: the command that defines it, or the setting that creates it."""
    return (
        f"define them with `litestar userio {kind} add --project PROJECT KEY...`, or let the import create them:"
        f" `litestar userio project configure --project PROJECT --set create_unknown_{kind}_on_import=true`"
    )


class RoleUnknownKeys(NotFound):
    """Roles named by a record are not defined in the project."""

    reason = "RoleUnknownKeys"
    default_message = "unknown role keys"

    def __init__(self, keys: list[str]) -> None:
        super().__init__(f"unknown role keys: {', '.join(keys)}; {_define_keys('roles')}", info={"keys": keys})


class GroupUnknownKeys(NotFound):
    """Groups named by a record are not defined in the project."""

    reason = "GroupUnknownKeys"
    default_message = "unknown group keys"

    def __init__(self, keys: list[str]) -> None:
        super().__init__(f"unknown group keys: {', '.join(keys)}; {_define_keys('groups')}", info={"keys": keys})


class TooManyRequest(UserIOError):
    """A limit was hit."""

    name = "TooManyRequest"
    reason = "TooManyRequest"
    default_message = "too many requests"


class RateLimited(TooManyRequest):
    """The `UserExport` bucket is empty; `Retry-After` says when it refills (docs/reference.md#errors-export)."""

    reason = "RateLimited"
    default_message = "rate limited"

    def __init__(self, bucket_name: str, retry_after_seconds: int) -> None:
        super().__init__(
            f"rate limited: try again in {retry_after_seconds} s",
            info={"bucket_name": bucket_name},
        )
        self.retry_after_seconds = retry_after_seconds


class MaximumConcurrentJobLimitExceeded(TooManyRequest):
    """One running export at a time (docs/reference.md#limits)."""

    reason = "MaximumConcurrentJobLimitExceeded"
    default_message = "an export is already running"


class UserExportNonUniqueFieldNames(Invalid):
    """Field names must be unique; `info.field_names` lists all of them (docs/reference.md#export-columns)."""

    reason = "UserExportNonUniqueFieldNames"
    default_message = "field names are not unique"

    def __init__(self, field_names: list[str]) -> None:
        duplicates = sorted({n for n in field_names if field_names.count(n) > 1})
        super().__init__(f"field names are not unique: {', '.join(duplicates)}", info={"field_names": field_names})


class PasswordVerificationBusy(TooManyRequest):
    """Too many sign-in attempts of one project are already running or waiting for a bcrypt thread."""

    reason = "PasswordVerificationBusy"
    default_message = "too many sign-in attempts are waiting; try again shortly"


class InternalError(UserIOError):
    """The server could not do what was asked."""

    name = "InternalError"
    reason = "UnexpectedError"


class UserExportDisabled(InternalError):
    """Export is off for the project, or no storage is configured (docs/reference.md#errors-export)."""

    reason = "UserExportDisabled"
    default_message = "user export is disabled"


class HookCompileFailed(Invalid):
    """A saved hook does not compile; `info` says which hook, where and why."""

    reason = "HookCompileFailed"
    default_message = "hook does not compile"

    def __init__(self, index: int, line: int, column: int, message: str) -> None:
        super().__init__(
            f"hooks[{index}] does not compile at {line}:{column}: {message}",
            info={"index": index, "line": line, "column": column, "message": message},
        )


class HookError(UserIOError):
    """A blocking hook stopped the issuance of a token (fail closed, no retries: docs/reference.md#hooks-failures)."""

    name = "InternalError"


class HookDisallowed(HookError):
    """A hook answered `is_allowed: false`."""

    name = "Forbidden"
    reason = "HookDisallowed"
    default_message = "disallowed by a hook"

    MAX_TITLE = 200
    """Characters of a hook's title kept (docs/limits.md): a token endpoint shows it to anonymous clients."""
    MAX_REASON = 1000
    """Characters of a hook's reason kept."""

    def __init__(self, title: str | None = None, reason: str | None = None) -> None:
        title = _bounded(title, self.MAX_TITLE)
        reason = _bounded(reason, self.MAX_REASON)
        info = {k: v for k, v in (("title", title), ("reason", reason)) if v is not None}
        super().__init__(reason or title or self.default_message, info=info or None)


def _bounded(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else text[: limit - 1] + "\u2026"


class HookInvalidResponse(HookError):
    """A hook threw, crashed, ran out of memory, or answered something that is not a valid response."""

    reason = "HookInvalidResponse"
    default_message = "a hook gave an invalid response"


class HookResponseMalformed(HookInvalidResponse):
    """The hook answered, but not in its event's response shape; the message names the member and what it was.

    `is_allowed must be a boolean, got "yes"`. A client sees the reference's `HookInvalidResponse`.
    """


class HookTimeout(HookError):
    """A hook (or all of them together) ran past its time limit."""

    reason = "HookTimeout"
    default_message = "a hook did not answer in time"


class InvalidJWTMutations(HookError):
    """A hook removed or changed a claim the server put into the token; hooks may only add claims."""

    reason = "InvalidJWTMutations"
    default_message = "a hook removed or changed protected claims"

    def __init__(self, removed: list[str], changed: list[str]) -> None:
        parts = [
            f"removed: {', '.join(removed)}" if removed else "",
            f"changed: {', '.join(changed)}" if changed else "",
        ]
        super().__init__(
            f"a hook may only add claims ({'; '.join(p for p in parts if p)})",
            info={"removed": removed, "changed": changed},
        )


class InvalidAccountStatusTransition(Invalid):
    """The record's account valid period is not a period (ref: from must be before until)."""

    reason = "InvalidAccountStatusTransition"
    default_message = "invalid account status transition"


class SignInRefused(UserIOError):
    """A sign-in or refresh the token endpoint refuses, answered per RFC 6749 5.2.

    See docs/reference.md#users-sign-in-refusals.

    `oauth_error` is the RFC's code; the answer's `error_description` is the class's fixed text, never an
    admin's free-text reason, and `error_reason` the reference's reason name.
    """

    name = "Invalid"
    oauth_error: ClassVar[str] = "invalid_grant"


class InvalidCredentials(SignInRefused):
    """Unknown login id or wrong password: one answer for both, so a guess learns nothing."""

    reason = "InvalidCredentials"
    default_message = "wrong login id or password"


class InvalidSignInRequest(SignInRefused):
    """A sign-in parameter no login id or client id can hold (U+0000): RFC 6749 `invalid_request`, 400."""

    reason = "InvalidRequest"
    oauth_error = "invalid_request"
    default_message = "the request is malformed"


class UnknownClient(SignInRefused):
    """The `client_id` names no application of the project (RFC 6749: `invalid_client`, 401)."""

    reason = "InvalidClient"
    oauth_error = "invalid_client"
    default_message = "unknown client_id"


class UserDisabled(SignInRefused):
    """The user is disabled (told only after the password was right)."""

    reason = "DisabledUser"
    default_message = "the account is disabled"


class UserTemporarilyDisabled(SignInRefused):
    """The user is inside a temporary disable window (told only after the password was right)."""

    reason = "TemporarilyDisabledUser"
    default_message = "the account is temporarily disabled"


class UserOutsideValidPeriod(SignInRefused):
    """Sign-in refused: now is before `account_valid_from` or from `account_valid_until` on (ref)."""

    reason = "UserOutsideValidPeriod"
    default_message = "the account cannot sign in at this time"


class PasswordExpired(SignInRefused):
    """Sign-in refused: the password is past its `expire_after` and must be changed first (ref)."""

    reason = "PasswordExpiryForceChange"
    default_message = "the password has expired; change it, then sign in again"


class RefreshTokenInvalid(SignInRefused):
    """A refresh token that is unknown, expired, revoked, or used before (which revokes its family)."""

    reason = "InvalidRefreshToken"
    default_message = "the refresh token is not valid"


class ServiceUnavailable(UserIOError):
    """The database or the queue cannot be reached right now; the client may retry."""

    name = "ServiceUnavailable"
    reason = "DependencyUnavailable"
    default_message = "a service this request needs is unavailable; try again shortly"

    def __init__(self, dependency: str) -> None:
        super().__init__(
            f"the {dependency} is unavailable; try again shortly",
            info={"dependency": dependency},
        )


class DatabaseUnavailable(ServiceUnavailable):
    """The database cannot be reached (connection lost, server shutting down, file unreadable, locked too long).

    Raised by `db/engine.py` in place of the driver's error: nothing above it inspects driver exceptions.
    """

    def __init__(self) -> None:
        super().__init__("database")


class QueueUnavailable(ServiceUnavailable):
    """Redis cannot be reached; raised by the queue backend (`queue/arq.py`) in place of the client's error."""

    def __init__(self) -> None:
        super().__init__("queue")


class ExtraNotInstalled(ImportError):
    """The configuration asks for a backend whose client is an extra not installed: one line says which to install."""

    def __init__(self, feature: str, extra: str) -> None:
        super().__init__(f"{feature} needs the {extra!r} extra: pip install 'litestar-userio[{extra}]'")


class WriteConflict(InternalError):
    """A concurrent transaction got there first (unique violation, serialization failure, deadlock).

    Raised by `db/engine.py` in place of the driver's error; running the transaction again on what is committed
    now may succeed, so callers retry it before it ever reaches a client.
    """

    reason = "WriteConflict"
    default_message = "a concurrent change got in the way; try again"


def unavailable_dependency(exc: BaseException) -> str | None:
    """Which dependency an error says is down ("database", "queue"), or None when it says nothing of the kind."""
    if isinstance(exc, ServiceUnavailable) and exc.info is not None:
        return str(exc.info["dependency"])
    return None


class HookWorkerUnavailable(HookError):
    """No hook worker was free within the queue timeout (the pool was busy); the hook itself never ran."""

    reason = "HookWorkerUnavailable"
    default_message = "no hook worker was free in time"


class HookSecretsDisabled(InternalError):
    """Hook secrets need `HookConfig.secrets_key`, which this deployment does not set."""

    reason = "HookSecretsDisabled"
    default_message = "hook secrets are disabled: no secrets key is configured"


class WebhookNotFound(NotFound):
    """No webhook of that id in this project."""

    reason = "WebhookNotFound"
    default_message = "no such webhook"


class WebhookDeliveryNotFound(NotFound):
    """No delivery of that id in this project (or it was purged)."""

    reason = "WebhookDeliveryNotFound"
    default_message = "no such webhook delivery"


class WebhookInvalid(Invalid):
    """A webhook the rules refuse: its URL (scheme, address, private origin), its events, too many webhooks."""

    reason = "InvalidWebhook"
    default_message = "invalid webhook"


class WebHookDisallowed(Forbidden):
    """A blocking user hook (`user.pre_create`, `user.profile.pre_update`) refused the change (ref name).

    `info.reasons`: `[{reason, title}]`, one per refusing hook.
    """

    reason = "WebHookDisallowed"
    default_message = "disallowed by web-hook event handler"

    def __init__(self, reasons: list[dict[str, str]]) -> None:
        super().__init__(info={"reasons": reasons})


class HookSecretNotFound(NotFound):
    """No hook secret of that name in this project."""

    reason = "HookSecretNotFound"
    default_message = "no such hook secret"


class HookVersionNotFound(NotFound):
    """No saved version of this project's hooks with that number."""

    reason = "HookVersionNotFound"
    default_message = "no such hook version"


class ScimError(Invalid):
    """A SCIM request refused with one of RFC 7644 3.12's `scimType`s (400 unless a subclass says otherwise).

    The SCIM controller answers it in the SCIM error schema; `scim_type` None: the RFC names none for it.
    """

    reason = "ScimInvalid"
    default_message = "invalid SCIM request"

    def __init__(self, scim_type: str | None, message: str | None = None) -> None:
        super().__init__(message)
        self.scim_type = scim_type


class ScimAuthFailed(ScimError):
    """No SCIM bearer token of this project (missing, unknown or revoked): 401."""

    reason = "ScimUnauthorized"
    default_message = "a SCIM bearer token of this project is required"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(None, message)


class ScimPreconditionFailed(ScimError):
    """`If-Match` names another version of the resource (RFC 7644 3.14): 412."""

    reason = "ScimPreconditionFailed"
    default_message = "the resource has changed: its version does not match If-Match"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(None, message)


class ScimTooLarge(ScimError):
    """A Bulk request over `maxOperations` or `maxPayloadSize` (RFC 7644 3.7.4): 413, nothing applied."""

    reason = "ScimPayloadTooLarge"
    default_message = "the bulk request is too large"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(None, message)


class ScimNotImplemented(ScimError):
    """An operation this server does not offer (RFC 7644 3.12): 501."""

    reason = "ScimNotImplemented"
    default_message = "not implemented"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(None, message)


class InvalidCursor(Invalid):
    """A change-log cursor (or export `since`) that is not one of this project's (docs/changes.md)."""

    reason = "InvalidCursor"
    default_message = "invalid cursor: pass back a cursor or watermark this project's change log gave"


class Gone(UserIOError):
    """What was asked for existed once and is gone for good."""

    name = "Gone"
    reason = "Gone"
    default_message = "gone"


class ChangeCursorExpired(Gone):
    """The cursor is older than the oldest kept entry: entries after it were purged; take a new snapshot."""

    reason = "ChangeCursorExpired"
    default_message = (
        "this cursor is older than the change log's retention: entries after it were purged;"
        " take a full export and follow from its watermark"
    )
