"""The plugin's Piccolo tables. Every row belongs to a project (docs/reference.md#authentication-projects-and-hosts).

Uniqueness that spans several columns (a login id per project, a role key per project) is declared
by raw SQL in the initial migration, which Piccolo's column options cannot express. The schema is the same
on both engines; the one engine-specific storage option (lz4 compression of the import chunks' JSON on
PostgreSQL) is declared in that migration's `POSTGRES_STORAGE`.
"""

from __future__ import annotations

from piccolo.columns import (
    JSONB,
    BigInt,
    Boolean,
    DoublePrecision,
    ForeignKey,
    Integer,
    OnDelete,
    Serial,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.table import Table

__all__ = [
    "TABLES",
    "AdminAPIKey",
    "Application",
    "Authenticator",
    "Change",
    "ChangeConsumer",
    "ChangeDocuments",
    "ChangeHorizon",
    "CustomAttribute",
    "Deployment",
    "ExportTask",
    "Group",
    "Hook",
    "HookRunRecord",
    "HookSecret",
    "HookSettings",
    "HookVersion",
    "Identity",
    "ImportChunk",
    "ImportTask",
    "OAuthIdentity",
    "Project",
    "ProjectDomain",
    "RateLimitEvent",
    "RefreshToken",
    "Role",
    "ScimToken",
    "SigningKey",
    "User",
    "UserGroup",
    "UserRole",
    "Webhook",
    "WebhookDelivery",
]


class Deployment(Table, tablename="userio_deployment"):
    """This deployment's id: one row, random, written once (`Database.deployment_id`); its jobs carry it."""

    singleton = Varchar(length=8, primary_key=True)
    """Always `this`: the primary key keeps the row one, however many processes start at once."""
    id = Varchar(length=36)


class Project(Table, tablename="userio_project"):
    """A tenant: its users, keys, hooks and tasks are its own."""

    id = Varchar(length=64, primary_key=True)
    created_at = Timestamptz()
    settings = JSONB(default={})
    """`ProjectSettings` (projects/settings.py) as JSON."""


class ProjectDomain(Table, tablename="userio_project_domain"):
    """A Host name that selects a project (docs/reference.md#authentication-projects-and-hosts)."""

    domain = Varchar(length=255, primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)


class AdminAPIKey(Table, tablename="userio_admin_api_key"):
    """A public key that verifies Admin API JWTs; several per project allow rotation."""

    id = Serial(primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    kid = Varchar(length=64)
    """Unique per project: the same key may serve several projects."""
    public_key_pem = Text()
    created_at = Timestamptz()


class User(Table, tablename="userio_user"):
    """A user; attributes are JSON as in the reference, login ids live in `Identity`."""

    id = Varchar(length=128, primary_key=True)
    """Generated, or the id the user had in the old system (an import record's `sub`,
    docs/reference.md#import-user-ids)."""
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    """On PostgreSQL this and the import's other bulk references (login ids, authenticators, memberships) are not
    checked row by row; statement triggers cascade the deletes (migration 2026-11-24 says why)."""
    created_at = Timestamptz()
    updated_at = Timestamptz()
    last_login_at = Timestamptz(null=True, default=None)
    is_disabled = Boolean(default=False)
    standard_attributes = JSONB(default={})
    custom_attributes = JSONB(default={})
    account_valid_from = Timestamptz(null=True, default=None)
    """Sign-in is refused before it (ref)."""
    account_valid_until = Timestamptz(null=True, default=None)
    """Sign-in is refused from it on (ref)."""
    temporarily_disabled_from = Timestamptz(null=True, default=None)
    """With `temporarily_disabled_until`, a window in which the user is disabled (ref); both or neither."""
    temporarily_disabled_until = Timestamptz(null=True, default=None)
    """The end of the temporary disable window (exclusive)."""
    disable_reason = Text(null=True, default=None)
    """The admin's free text of the last disable; never shown to the user signing in."""
    external_id = Text(null=True, default=None)
    """The user's id in the identity provider that provisions it (SCIM `externalId`, docs/scim.md); filterable."""


class Identity(Table, tablename="userio_identity"):
    """A login id (email, phone, username); one unique index, on `(project_id, unique_key)`."""

    id = Varchar(length=36, primary_key=True)
    project_id = Varchar(length=64)
    """No foreign key: the user's row carries the project's (a direct check cost 8 us per imported row)."""
    user = ForeignKey(User, db_column_name="user_id", on_delete=OnDelete.cascade, null=False, index=True)
    login_id_key = Varchar(length=32)
    login_id_type = Varchar(length=32)
    original_value = Text()
    normalized_value = Text()
    created_at = Timestamptz()
    unique_key = Text(null=True, default=None)
    """`userio_core.login_ids.login_key` of the normalized value: unique per project across kinds (one login id, one
    user); on a second login id with the same key, the key and `login_id_key` joined by U+001F (migration
    2026-12-02T01), so the one index also keeps one value per kind. Never NULL once migrated."""


class OAuthIdentity(Table, tablename="userio_oauth_identity"):
    """A linked OAuth/OIDC identity; unique per project, provider alias and subject.

    See docs/reference.md#import-linked-identities.
    """

    id = Varchar(length=36, primary_key=True)
    project_id = Varchar(length=64)
    """No foreign key: the user's row carries the project's (as `Identity.project_id`)."""
    user = ForeignKey(User, db_column_name="user_id", on_delete=OnDelete.cascade, null=False, index=True)
    provider_alias = Varchar(length=128)
    """The project's name for the provider (`google`, `apple`, `corp-oidc`): what the host's sign-in looks up."""
    provider_type = Varchar(length=128)
    """The kind of provider (`google`, `oidc`); the alias when the record gives none."""
    subject = Text()
    """The provider's `sub` for the user."""
    claims = JSONB(default={})
    """The provider's profile claims as imported (the export's `user_profile`)."""
    created_at = Timestamptz()


class Authenticator(Table, tablename="userio_authenticator"):
    """A primary password, or a second factor: password, TOTP, OOB email, OOB phone."""

    id = Varchar(length=36, primary_key=True)
    project_id = Varchar(length=64)
    """No foreign key: the user's row carries the project's (as `Identity.project_id`)."""
    user = ForeignKey(User, db_column_name="user_id", on_delete=OnDelete.cascade, null=False, index=True)
    kind = Varchar(length=16)
    """`primary` or `secondary`."""
    type = Varchar(length=32)
    """`password`, `totp`, `oob_otp_email` or `oob_otp_sms`."""
    password_hash = Text(null=True, default=None)
    totp_secret = Text(null=True, default=None)
    oob_target = Text(null=True, default=None)
    """The email address or phone number a one-time code goes to."""
    created_at = Timestamptz()
    expire_after = Timestamptz(null=True, default=None)
    """A password past it cannot sign in until it is changed (ref `password.expire_after`)."""


class Role(Table, tablename="userio_role"):
    """A role key defined in a project."""

    id = Varchar(length=36, primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    key = Varchar(length=64)
    name = Text(null=True, default=None)
    created_at = Timestamptz()


class Group(Table, tablename="userio_group"):
    """A group key defined in a project."""

    id = Varchar(length=36, primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    key = Varchar(length=64)
    name = Text(null=True, default=None)
    created_at = Timestamptz()
    external_id = Text(null=True, default=None)
    """The group's id in the identity provider that provisions it (SCIM `externalId`)."""
    updated_at = Timestamptz(null=True, default=None)
    """The last change of its name or members through SCIM (`meta.lastModified`); None: never changed."""


class UserRole(Table, tablename="userio_user_role"):
    """A user holds a role."""

    id = Serial(primary_key=True)
    user = ForeignKey(User, db_column_name="user_id", on_delete=OnDelete.cascade, null=False)
    role = ForeignKey(Role, db_column_name="role_id", on_delete=OnDelete.cascade, null=False, index=True)


class UserGroup(Table, tablename="userio_user_group"):
    """A user belongs to a group."""

    id = Serial(primary_key=True)
    user = ForeignKey(User, db_column_name="user_id", on_delete=OnDelete.cascade, null=False)
    group = ForeignKey(Group, db_column_name="group_id", on_delete=OnDelete.cascade, null=False, index=True)


class CustomAttribute(Table, tablename="userio_custom_attribute"):
    """A declared custom attribute: values are checked against it on import."""

    id = Serial(primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    name = Varchar(length=64)
    type = Varchar(length=32)
    constraints = JSONB(default={})
    """`minimum`, `maximum` (number, integer) or `enum` (a list of strings)."""
    position = Integer(default=0)


class ImportTask(Table, tablename="userio_import_task"):
    """An import request: a row first, then jobs.

    See docs/reference.md#import-task-lifecycle and docs/reference.md#tasks-rows-first.
    """

    id = Varchar(length=40, primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False, index=True)
    created_at = Timestamptz()
    status = Varchar(length=16, default="pending")
    identifier = Varchar(length=32)
    upsert = Boolean(default=False)
    dry_run = Boolean(default=False)
    total = Integer(default=0)
    chunk_count = Integer(default=0)
    processed = Integer(default=0)
    inserted = Integer(default=0)
    updated = Integer(default=0)
    skipped = Integer(default=0)
    failed = Integer(default=0)
    completed_at = Timestamptz(null=True, default=None)
    expire_at = Timestamptz(null=True, default=None, index=True)
    idempotency_key = Varchar(length=255, null=True, default=None)
    """The `Idempotency-Key` header of the request, unique per project: a replay answers the same task."""
    request_sha256 = Varchar(length=64, null=True, default=None)


class ImportChunk(Table, tablename="userio_import_chunk"):
    """A slice of a task's records that one job applies in one transaction."""

    id = Serial(primary_key=True)
    task = ForeignKey(ImportTask, db_column_name="task_id", on_delete=OnDelete.cascade, null=False)
    seq = Integer()
    status = Varchar(length=16, default="pending", index=True)
    indices = Text()
    """JSON array: the positions of this chunk's records in the request."""
    records = Text(null=True, default=None)
    """JSON array of the records as submitted; cleared once applied, so secrets do not linger."""
    result = Text(null=True, default=None)
    """JSON array of this chunk's details; the status endpoint merges the chunks' arrays in index order."""
    attempts = Integer(default=0)
    enqueued_at = Timestamptz(null=True, default=None)


class ExportTask(Table, tablename="userio_export_task"):
    """An export request (docs/reference.md#export-task-lifecycle): a row first, then a job."""

    id = Varchar(length=48, primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False, index=True)
    created_at = Timestamptz()
    status = Varchar(length=16, default="pending")
    request = Text()
    """The request as given (JSON), echoed in every answer."""
    processed = Integer(default=0)
    attempts = Integer(default=0)
    enqueued_at = Timestamptz(null=True, default=None)
    completed_at = Timestamptz(null=True, default=None)
    failed_at = Timestamptz(null=True, default=None)
    error = Text(null=True, default=None)
    """The error object (JSON) of a failed export."""
    file_key = Text(null=True, default=None)
    size = BigInt(null=True, default=None)
    sha256 = Varchar(length=64, null=True, default=None)
    record_count = Integer(null=True, default=None)
    expire_at = Timestamptz(null=True, default=None, index=True)
    watermark = Text(null=True, default=None)
    """The change-log cursor of the snapshot the file holds (docs/changes.md), once completed."""


class RateLimitEvent(Table, tablename="userio_rate_limit_event"):
    """One use of a rate-limit bucket (every deployment keeps its buckets here, whatever its queue)."""

    id = Serial(primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    bucket = Varchar(length=64)
    created_at = Timestamptz()


class SigningKey(Table, tablename="userio_signing_key"):
    """An RS256 key that signs a project's tokens; one is active, all unretired ones are published (JWKS)."""

    id = Serial(primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    kid = Varchar(length=64)
    private_key_pem = Text()
    public_jwk = Text()
    """The public key as a JWK (JSON)."""
    active = Boolean(default=False)
    created_at = Timestamptz()
    retired_at = Timestamptz(null=True, default=None)


class Application(Table, tablename="userio_application"):
    """An OAuth client of a project; its setting decides whether access tokens are JWTs.

    See docs/reference.md#hooks-jwt-access-tokens.
    """

    id = Serial(primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    client_id = Varchar(length=128)
    name = Text(null=True, default=None)
    issue_jwt_access_token = Boolean(default=False)
    access_token_lifetime = Integer(default=1800)
    """Seconds."""
    created_at = Timestamptz()


class Hook(Table, tablename="userio_hook"):
    """A blocking hook of a project: TypeScript as written, and the JavaScript compiled from it at save time."""

    id = Serial(primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    position = Integer()
    event = Varchar(length=64)
    source = Text()
    javascript = Text()
    source_id = Varchar(length=64)
    """SHA-256 of the JavaScript: the runtime's cache key."""
    created_at = Timestamptz()
    on_error = Varchar(length=16, default="deny")
    """`deny` (fail closed, docs/reference.md#hooks-failures) or `continue` (issue without this hook's changes)."""


class HookSettings(Table, tablename="userio_hook_settings"):
    """A project's hook settings beside the hooks: the fetch allowlist and the current version number."""

    id = Serial(primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False, unique=True)
    fetch_allowlist = Text(default="[]")
    """JSON array of origins (`https://api.example.com`)."""
    version = Integer(default=0)
    """The latest saved version of the project's hooks."""
    updated_at = Timestamptz()


class HookVersion(Table, tablename="userio_hook_version"):
    """Every save of a project's hooks: who saved it, when, and the saved body (unique per project and version)."""

    id = Serial(primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    version = Integer()
    created_at = Timestamptz()
    actor_kid = Varchar(length=255, null=True)
    """The admin token's key id."""
    actor_sub = Varchar(length=255, null=True)
    """The admin token's subject."""
    body = Text()
    """The saved body as JSON: `{"hooks": [...], "fetch_allowlist": [...]}`."""


class HookSecret(Table, tablename="userio_hook_secret"):
    """A project's hook secret, encrypted (AES-GCM, key from the configuration); unique per project and name."""

    id = Serial(primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    name = Varchar(length=128)
    ciphertext = Text()
    """base64 of nonce + ciphertext; the project id and the name are its associated data."""
    updated_at = Timestamptz()


class HookRunRecord(Table, tablename="userio_hook_run"):
    """The outcome of one production hook run (the run log), kept for `HookConfig.run_log_retention`."""

    id = Serial(primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    event = Varchar(length=64)
    hook_index = Integer()
    started_at = Timestamptz()
    duration_ms = DoublePrecision()
    outcome = Varchar(length=16)
    """`allowed`, `refused` or `error`."""
    error_kind = Varchar(length=32, null=True)
    console = Text(default="[]")
    """JSON: the run's console, truncated, secrets masked."""
    claims_added = Text(default="[]")
    """JSON: the names of the claims the run added, never their values."""
    sampled_rate = DoublePrecision(default=1.0)
    """The share of runs logged when this one was (1.0: every run)."""


class RefreshToken(Table, tablename="userio_refresh_token"):
    """A refresh token, stored as its SHA-256 only; each use rotates it within its family (`tokens/refresh.py`)."""

    id = Varchar(length=36, primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    user = ForeignKey(User, db_column_name="user_id", on_delete=OnDelete.cascade, null=False, index=True)
    client_id = Text()
    family_id = Varchar(length=36, index=True)
    """The tokens of one sign-in: a reused token revokes them all."""
    token_hash = Text(unique=True)
    scope = Text()
    created_at = Timestamptz()
    expires_at = Timestamptz()
    used_at = Timestamptz(null=True, default=None)
    revoked_at = Timestamptz(null=True, default=None)


class ScimToken(Table, tablename="userio_scim_token"):
    """A project's SCIM bearer token (docs/scim.md), stored as its SHA-256 only; deleting the row revokes it."""

    id = Varchar(length=40, primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False, index=True)
    token_hash = Text(unique=True)
    created_at = Timestamptz()
    last_used_at = Timestamptz(null=True, default=None)
    """When a SCIM request last authenticated with it (updated at most once a minute)."""


class Webhook(Table, tablename="userio_webhook"):
    """A project's webhook: where its signed deliveries go and which change-log entries it wants."""

    id = Varchar(length=36, primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False, index=True)
    position = Integer()
    url = Text()
    events = Text(default="[]")
    """JSON array of the change-log entry types it wants."""
    include_import = Boolean(default=False)
    """Entries whose origin is `import` are delivered only when true (the import emits no `user.created`)."""
    secret = Text()
    """The signing secret: sealed with `HookConfig.secrets_key` when one is set (`sealed:` prefix), else as is."""
    created_at = Timestamptz()


class WebhookDelivery(Table, tablename="userio_webhook_delivery"):
    """One change-log entry to one webhook: its body, fixed when made, and where its attempts stand."""

    id = Varchar(length=36, primary_key=True)
    project = ForeignKey(Project, db_column_name="project_id", on_delete=OnDelete.cascade, null=False)
    webhook = ForeignKey(Webhook, db_column_name="webhook_id", on_delete=OnDelete.cascade, null=False)
    change_id = Varchar(length=64)
    """The entry's id: the event's `id` (a receiver drops a duplicate by it)."""
    seq = BigInt()
    """The entry's position in its project's log: one user's deliveries to one webhook go in this order."""
    user_id = Varchar(length=128)
    event_type = Varchar(length=64)
    body = Text()
    """The event as sent (every attempt sends these bytes)."""
    status = Varchar(length=16, default="pending")
    """`pending`, `succeeded` or `failed`."""
    attempts = Integer(default=0)
    max_attempts = Integer(default=7)
    """Attempts it may take: one plus the retry delays when made; a retry of a failed one allows one more."""
    next_attempt_at = Timestamptz()
    lease_until = Timestamptz(null=True, default=None)
    """While an attempt is under way; a lapsed lease (its worker died) lets another job take it again."""
    last_status_code = Integer(null=True, default=None)
    last_error = Text(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class Change(Table, tablename="userio_change"):
    """One committed change of a user (`changes/`, docs/changes.md).

    Created by raw SQL per engine (migration 2026-12-01T01): the defaults of `seq` and `xact` are the commit order,
    which Piccolo's columns do not express.
    """

    seq = BigInt(primary_key=True)
    xact = BigInt()
    """The writing transaction's id on PostgreSQL (`pg_current_xact_id()`), 0 on SQLite."""
    project_id = Varchar(length=64)
    user_id = Varchar(length=128)
    kind = Varchar(length=32)
    """`created`, `updated`, `password_changed`, `disabled`, `enabled` or `deleted`."""
    occurred_at = Timestamptz()
    origin_kind = Varchar(length=16)
    task_id = Varchar(length=64, null=True, default=None)
    document = Text(null=True, default=None)
    """The user as exported after the change, without secrets (JSON); the last state for `deleted`. None when
    the entry's document is line `batch_index` of `ChangeDocuments` row `batch` (a bulk append)."""
    batch = BigInt(null=True, default=None)
    batch_index = Integer(null=True, default=None)
    entries = Integer(null=True, default=None)
    """A bulk row (migration 2026-12-02T03): how many entries it holds, at the positions `seq - entries + 1` to
    `seq`; their users and kinds are `user_ids` and `kinds` (JSON arrays), their documents the lines of `batch`.
    None on a row of one entry."""
    user_ids = Text(null=True, default=None)
    kinds = Text(null=True, default=None)


class ChangeDocuments(Table, tablename="userio_change_documents"):
    """The documents of one bulk append (an import chunk), as ndjson: compressed by TOAST as one value."""

    id = BigInt(primary_key=True)
    project_id = Varchar(length=64)
    documents = Text()


class ChangeHorizon(Table, tablename="userio_change_horizon"):
    """Per project, the newest position purged: a cursor before it has missed entries (410)."""

    project_id = Varchar(length=64, primary_key=True)
    xact = BigInt()
    seq = BigInt()


class ChangeConsumer(Table, tablename="userio_change_consumer"):
    """The position a consumer (`events`, `webhooks`, ...) has handled in a project's log; key (project, name)."""

    project_id = Varchar(length=64, primary_key=True)
    name = Varchar(length=64)
    xact = BigInt()
    seq = BigInt()
    updated_at = Timestamptz()


TABLES: tuple[type[Table], ...] = (
    Deployment,
    Project,
    ProjectDomain,
    AdminAPIKey,
    User,
    Identity,
    OAuthIdentity,
    Authenticator,
    Role,
    Group,
    UserRole,
    UserGroup,
    CustomAttribute,
    ImportTask,
    ImportChunk,
    ExportTask,
    RateLimitEvent,
    SigningKey,
    Application,
    Hook,
    HookSettings,
    HookVersion,
    HookSecret,
    HookRunRecord,
    RefreshToken,
    ScimToken,
    Webhook,
    WebhookDelivery,
    Change,
    ChangeDocuments,
    ChangeHorizon,
    ChangeConsumer,
)
"""In dependency order: a table only references tables before it."""
