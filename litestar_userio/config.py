"""Configuration of the plugin: plain dataclasses whose defaults are the embedded deployment."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from userio_core.clock import Clock, SystemClock

__all__ = [
    "AuthConfig",
    "ChangeLogConfig",
    "ConsoleConfig",
    "DependencyKeys",
    "ExportConfig",
    "HookConfig",
    "ImportConfig",
    "LocalStorageConfig",
    "MetricsConfig",
    "PasswordConfig",
    "PasswordHashBounds",
    "QueueConfig",
    "RateLimit",
    "S3StorageConfig",
    "ScimConfig",
    "TokenConfig",
    "TracingConfig",
    "UserIOConfig",
    "WebhookConfig",
]


@dataclass
class AuthConfig:
    """Admin API authentication (docs/reference.md#authentication)."""

    allow_http: bool = False
    """Accept plain-HTTP requests. For tests only: the admin APIs accept only HTTPS
    (docs/reference.md#authentication)."""
    leeway: timedelta = timedelta(minutes=5)
    """Clock skew tolerated on `exp`, `nbf` and `iat` (the reference's value)."""


@dataclass
class PasswordHashBounds:
    """The costliest legacy hash accepted, per format (docs/reference.md#passwords-formats).

    On import a hash above a bound fails its record (`InvalidPasswordHash`, naming the bound); at sign-in it is never
    run. Each bound caps the time or memory one attempt may take; there is no minimum (weak hashes are re-hashed at
    the first good sign-in).
    """

    argon2_memory_kib: int = 262_144
    """Argon2 `m`, KiB: one verification holds this much memory for its whole run (256 MiB)."""
    argon2_time_cost: int = 16
    """Argon2 `t`, passes over the memory."""
    argon2_parallelism: int = 8
    """Argon2 `p`, lanes (threads of one verification)."""
    scrypt_n: int = 2**17
    """scrypt `N` (memory and time: 128 * N * r bytes; 2^17 with r = 8 is 128 MiB)."""
    scrypt_rp: int = 64
    """scrypt `r * p`."""
    scrypt_memory_kib: int = 262_144
    """scrypt's memory, 128 * N * r * p bytes, in KiB (256 MiB, argon2's bound), whatever N and r * p are apart:
    `N = 2^17, r = 64` is within both and would take 1 GiB. Firebase's scrypt (N = 2^mem_cost, r = rounds, p = 1)
    too."""
    firebase_mem_cost: int = 15
    """Firebase's `mem_cost` (log2 of scrypt's N)."""
    firebase_rounds: int = 16
    """Firebase's `rounds` (scrypt's r)."""
    pbkdf2_iterations: int = 2_000_000
    """PBKDF2 iterations (SHA-256: about 0.7 s of a core here at the bound)."""
    sha_crypt_rounds: int = 1_000_000
    """crypt(3) `$5$` / `$6$` `rounds=`."""
    phpass_cost: int = 18
    """phpass log2 of the MD5 iterations."""


@dataclass
class ImportConfig:
    """The bulk import API (docs/reference.md#import)."""

    max_body_size: int = 500_000
    """500KB, decimal, as the reference counts it (docs/reference.md#limits)."""
    chunk_size: int = 2000
    """Records per job. Chunks of one task run in parallel on several workers. Each chunk costs a fixed dozen
    statements, a commit and a job: at 500, a 500 KB request of `bench/import.py`'s records (1 150) made 3 jobs, the
    last of 150, and its chunks cost 171 us of the machine's CPU per record (11 484 records/s); at 1 500 and 2 000,
    one job per request: 149-156 us (12 467-13 074 records/s). On SQLite (in-process runner) such a request took
    0.18 s at 2 000 where its 3 chunks took 0.29 s: its write lock is held for less in all."""
    chunks_at_once: int = 2
    """Chunks one process applies at once; its other jobs' chunks wait for a turn, their leases held. Two keep a
    worker busy while one waits on PostgreSQL; more only interleave, each holding its records in memory (and
    PostgreSQL serves as many transactions). `bench/import.py`, 8 jobs per worker: all 8 at once, workers 72-75 us
    and PostgreSQL 38-41 us per record, the machine 146-155; 2 at once, 67-70, 36-38 and 135-144."""
    result_ttl: timedelta = timedelta(hours=24)
    """How long a completed task answers its status; then it is purged (404)."""
    max_bcrypt_cost: int = 14
    """Highest bcrypt cost accepted in `password` and `mfa.password` (a record above it fails with
    `InvalidBcryptHash`), and verified at sign-in: each step doubles the work, and at cost 20 one wrong password
    pins a thread for over a minute. The reference accepts up to 31."""
    hash_bounds: PasswordHashBounds = field(default_factory=PasswordHashBounds)
    """The same limit for every other password format, in import and at sign-in."""

    def __post_init__(self) -> None:
        if self.chunks_at_once < 1:  # no turn would ever come: every chunk would wait until its job timed out
            raise ValueError(f"ImportConfig.chunks_at_once must be at least 1, got {self.chunks_at_once}")


@dataclass
class LocalStorageConfig:
    """Export files on the local disk, served by the plugin's download route with HMAC-signed URLs."""

    directory: Path = Path("userio-exports")
    """Where files are written (created if missing)."""
    secret: bytes | None = None
    """HMAC key of download URLs; when None one is generated and kept in `directory/.signing-key`."""
    base_url: str | None = None
    """Origin of the download route (`https://files.example.com`); None: the request's own origin."""
    route_path: str = "/_userio/downloads"
    """Path of the download route."""


@dataclass
class S3StorageConfig:
    """Export files in S3-compatible object storage, downloaded through presigned URLs."""

    bucket: str
    endpoint_url: str | None = None
    """None: AWS itself; otherwise the storage's URL (MinIO, R2, ...)."""
    region: str = "us-east-1"
    access_key_id: str | None = None
    secret_access_key: str | None = None
    prefix: str = "userio-exports/"
    """Key prefix of export files."""
    part_size: int = 8 * 1024 * 1024
    """Multipart part size; S3 requires at least 5 MiB for every part but the last."""
    checksum: Literal["CRC32"] | None = "CRC32"
    """Each part (or a file of one part) goes up with its CRC32, which the store checks before it takes the bytes;
    the file then carries a composite CRC32. None for a store that refuses `x-amz-checksum-*` headers (one that
    refuses them is asked once per process, then files go up without; `docs/deployment.md`)."""

    def __post_init__(self) -> None:
        if self.checksum not in ("CRC32", None):  # any other would be sent as is and refused by the store
            raise ValueError(f"S3StorageConfig.checksum must be 'CRC32' or None, got {self.checksum!r}")


@dataclass
class RateLimit:
    """A bucket of `limit` requests per `period`."""

    limit: int
    period: timedelta


@dataclass
class ExportConfig:
    """The bulk export API (docs/reference.md#export)."""

    storage: LocalStorageConfig | S3StorageConfig | None = field(default_factory=LocalStorageConfig)
    """Where files go; None disables export (`UserExportDisabled`)."""
    max_pending_per_project: int = 1
    """One running export at a time (docs/reference.md#limits)."""
    rate_limit: RateLimit = field(default_factory=lambda: RateLimit(24, timedelta(hours=24)))
    """The `UserExport` bucket, per project."""
    url_ttl: timedelta = timedelta(seconds=60)
    """A download URL is valid 60 seconds (docs/reference.md#export-download)."""
    result_ttl: timedelta = timedelta(hours=24)
    """A completed export's result expires 24 hours after completion (docs/reference.md#export-task-lifecycle)."""
    page_size: int = 2000
    """Users read per keyset page."""


@dataclass
class HookConfig:
    """Blocking TypeScript hooks (docs/reference.md#hooks)."""

    hook_timeout: timedelta = timedelta(seconds=5)
    """One hook's time limit."""
    total_timeout: timedelta = timedelta(seconds=10)
    """All hooks of one token together."""
    heap_limit_mb: int = 64
    """V8 heap per worker."""
    pool_size: int = 2
    """Warm V8 worker processes."""
    console_limit_bytes: int = 16_384
    """Console output kept per hook run."""
    max_hooks_per_event: int = 10
    """A longer chain is refused at save time."""
    cache_ttl: timedelta = timedelta(seconds=2)
    """How long a process reuses a project's hook list before reading it again (other processes' saves)."""
    max_pool_size: int = 8
    """The worker pool grows up to this many processes (about 77 MB each) while runs wait; extra idle ones stop."""
    tenant_share: int = 3
    """Workers one project may hold at once (production and test runs): its hooks cannot take the whole pool."""
    test_share: int = 1
    """Workers the test endpoint's runs of all projects may hold at once; the rest is kept for issuance."""
    queue_timeout: timedelta = timedelta(seconds=5)
    """How long a run may wait for a worker, apart from the hook's own time limit (error kind `no_worker`)."""
    idle_timeout: timedelta = timedelta(seconds=30)
    """An idle worker above `pool_size` is stopped after this long."""
    secrets_key: str | None = None
    """base64 of 32 random bytes (`SecretBox.generate_key()`): encrypts hook secrets at rest. Without it the
    secrets endpoints answer `HookSecretsDisabled`; changing it makes the stored secrets unreadable."""
    max_secrets: int = 50
    """Secrets per project."""
    max_secret_bytes: int = 8192
    """Largest secret value (UTF-8)."""
    fetch_max_calls: int = 10
    """`fetch` calls per hook run; the next one is refused."""
    fetch_max_body_bytes: int = 1 << 20
    """Largest response (and request) body a hook's fetch may move."""
    fetch_ca_file: str | None = None
    """CA bundle for the hooks' https fetches (default: the system's)."""
    run_log_retention: timedelta = timedelta(days=7)
    """How long the run log keeps an entry."""
    run_log_per_second: int = 20
    """Allowed runs logged per project and second by each process; above it they are sampled (refusals and
    errors are always logged)."""
    run_log_flush_interval: timedelta = timedelta(seconds=1)
    """How often each process writes its buffered run log entries."""


@dataclass
class TokenConfig:
    """Tokens the plugin signs for the host's token endpoint."""

    id_token_lifetime: timedelta = timedelta(hours=1)
    """ID tokens expire this long after issuance."""
    refresh_token_lifetime: timedelta = timedelta(days=30)
    """A refresh token works this long after it was handed out (each use hands out a fresh one)."""
    jwks_path: str | None = "/.well-known/jwks.json"
    """Where the plugin serves the `Host`'s project's public signing keys; None serves none (the host's own)."""


@dataclass
class QueueConfig:
    """Where jobs run: arq on Redis when `redis_url` is set, else the in-process runner."""

    redis_url: str | None = None
    """`redis://...` selects arq; `None` runs the same job functions in the web process."""
    queue_name: str = "userio:queue"
    """arq queue name; give each deployment sharing a Redis its own."""
    job_timeout: timedelta = timedelta(minutes=2)
    """A job running longer is cancelled; arq re-runs a dead worker's job after this plus 10 s."""
    max_tries: int = 10
    """arq retries of one job before it gives up (the sweeper re-enqueues pending work anyway)."""
    max_attempts: int = 12
    """Runs of one chunk or export (a worker dying mid-run counts) before its records are reported failed;
    bounds the damage of a task that crashes every worker that takes it."""
    stale_after: timedelta = timedelta(minutes=3)
    """Work enqueued this long ago and never started is enqueued again by the sweeper (Redis lost its queue)."""
    lease_ttl: timedelta = timedelta(seconds=6)
    """A running job renews its lease every quarter of this; a killed worker's lease lapses within it, and the
    next sweep enqueues its work again (issue 9: running again within 15 s, measured about 7 s)."""
    sweep_interval: timedelta = timedelta(seconds=3)
    """How often the sweeper runs (re-enqueue work whose lease lapsed or that was lost, purge expired tasks)."""
    concurrency: int = 2
    """Jobs run at once by the in-process runner (arq workers use `worker_max_jobs`)."""
    worker_max_jobs: int = 8
    """Jobs run at once by one arq worker process; measured: 8 kept two workers and PostgreSQL busy on 2 cores
    where 4 left a quarter of the CPU idle (waiting on commits)."""
    redis_connect_timeout: timedelta = timedelta(seconds=5)
    """How long opening one Redis connection may take, in wall time. arq's default is 1 s, and a worker running
    `worker_max_jobs` jobs opens a connection per job: on a loaded event loop a connect that succeeded was resumed
    after more than 1 s. The timeout, raised inside arq, stops the worker (taking a job) or leaves the job marked
    running until the mark expires (`job_timeout` + 10 s). An unreachable Redis is reported after this long."""
    worker_poll_delay: timedelta = timedelta(milliseconds=50)
    """How often an arq worker looks for jobs when it has a free slot. arq starts only the jobs it saw at its last
    look: at arq's default 0.5 s a worker ran a burst of chunks (0.2-0.3 s each), then sat idle until its next look
    (`bench/import.py`: half of each worker's time idle with 300 chunks queued). A look is one Redis command."""


@dataclass
class PasswordConfig:
    """Verifying passwords at sign-in (`UserService.verify_password`): bcrypt on a bounded, fair pool."""

    threads: int = 4
    """bcrypt checks run at once in this process (bcrypt releases the GIL; more threads than cores only queue)."""
    threads_per_project: int = 2
    """Checks of one project run at once; the other threads stay free for other projects."""
    max_pending_per_project: int = 32
    """Work of one project's checks running or waiting, in checks of cost 10 (a cost-12 check counts 4, a cost-4
    check 1/64); an attempt beyond it is refused with `PasswordVerificationBusy` (429). One check is always
    admitted when none is pending."""
    max_memory: int = 1024 * 1024 * 1024
    """Bytes that memory-hard checks (Argon2, scrypt, Firebase's scrypt) running at once may hold in all; a check
    waits for its share (its project's slot held). A single check above it runs alone."""
    bcrypt_cost: int = 10
    """Cost of the bcrypt hash a legacy password is re-hashed to at its first good sign-in (project setting
    `password_algorithm` = `bcrypt`, the default)."""
    dummy_hash_cost: int | None = None
    """Cost of the fixed bcrypt hash checked for an unknown login id in a project whose `password_algorithm` is
    bcrypt; None: `bcrypt_cost`, the cost every stored hash reaches at its first good sign-in (a cheaper one is
    re-hashed then), so an unknown login id costs what a known one does. A project on `argon2id` is checked
    against a fixed Argon2id hash of the re-hash's parameters."""


@dataclass
class ConsoleConfig:
    """The admin console in the browser (beyond the reference); off unless `UserIOConfig.console` is set."""

    path: str = "/_userio/console"
    """Where the console's page and assets are served."""
    public_url: str | None = None
    """Origin that `litestar userio console-url` puts in its link; None: `https://localhost:$PORT` (8443)."""
    token_ttl: timedelta = timedelta(minutes=30)
    """Lifetime of the admin token in a console link: the session ends with it."""


@dataclass
class MetricsConfig:
    """Prometheus metrics (`userio_*`; `docs/operations.md`); off unless `UserIOConfig.metrics` is set.

    See docs/reference.md#operations.

    Needs the `metrics` extra (`prometheus-client`). The counters are process-wide, like the client's own registry.
    """

    path: str = "/metrics"
    """Where the web process serves them (no admin JWT, `Host` or HTTPS rule: keep it on the internal network)."""
    worker_port: int | None = 9464
    """Port on which each arq worker serves them (`litestar userio worker --metrics-port` overrides it, e.g. for
    several workers on one host); None: workers serve none."""
    worker_address: str = "0.0.0.0"  # a scrape comes from another host
    """Address the worker's metrics server listens on."""


@dataclass
class TracingConfig:
    """OpenTelemetry traces (admin requests, import chunks, exports, hook runs and fetches); off unless set.

    Needs the `tracing` extra (`opentelemetry-api`, `-sdk`, `-instrumentation-asgi`). Spans go to the tracer provider
    the host installs (`opentelemetry.trace.set_tracer_provider`) unless one is given here.
    """

    tracer_provider: Any = None
    """An `opentelemetry.sdk.trace.TracerProvider`; None: the process's global provider."""
    request_spans: bool = True
    """A span per HTTP request through Litestar's OpenTelemetry middleware (the host may add it itself instead)."""


def _default_retry_delays() -> tuple[timedelta, ...]:
    return tuple(timedelta(seconds=s) for s in (10, 60, 600, 3600, 6 * 3600, 24 * 3600))


@dataclass
class WebhookConfig:
    """Webhooks: signed deliveries of committed change-log entries (docs/webhooks.md)."""

    retry_delays: tuple[timedelta, ...] = field(default_factory=_default_retry_delays)
    """Wait before each retry of a failed attempt (10 s, 1 min, 10 min, 1 h, 6 h, 24 h); after the last the delivery
    is `failed`. The example app reads `USERIO_WEBHOOK_RETRY_DELAYS` (comma-separated seconds)."""
    allowed_private_origins: tuple[str, ...] = ()
    """Origins (`http://127.0.0.1:8123`) a webhook may name although they are loopback or private, or plain `http`:
    the only way to reach one (the hooks' fetch address rules). The example app reads
    `USERIO_WEBHOOK_PRIVATE_ORIGINS`."""
    timeout: timedelta = timedelta(seconds=5)
    """One attempt in all (connect, send, the answer's first 64 KiB); past it the attempt failed."""
    max_response_bytes: int = 64 * 1024
    """At most this much of an answer is read (it is kept only as the delivery's error text)."""
    max_webhooks: int = 20
    """Webhooks per project."""
    batch_size: int = 64
    """Deliveries a lane claims at once (each user's oldest pending one per webhook). Their lease covers attempting
    all of them at `concurrency` with every one running to the timeout, so a lease never lapses while its lane lives:
    64 at 8 at once and 5 s, 45 s."""
    concurrency: int = 8
    """Attempts one project's lane makes at once in a process (so one project's dead receiver holds at most this many
    connections). httpcore's pool checks every connection for each request: `bench/webhooks.py`, 3 000 deliveries to
    one receiver, 472/s at 8 against 152 at 16 and 92 at 32 (a bare httpx client: 506, 161, 119 in the same runs)."""
    retention: timedelta = timedelta(days=30)
    """Finished deliveries (succeeded or failed) are purged this long after they finished."""

    def __post_init__(self) -> None:
        if self.timeout <= timedelta(0) or self.concurrency < 1 or self.batch_size < 1:
            raise ValueError("WebhookConfig.timeout, concurrency and batch_size must be positive")


@dataclass
class ScimConfig:
    """SCIM 2.0 provisioning (docs/scim.md): Users, Groups and Bulk for an identity provider."""

    path: str = "/_api/scim/v2"
    """The SCIM base URL's path; the project is the request's `Host`, as on the admin API."""
    max_operations: int = 1000
    """Bulk: most operations in one request (`maxOperations`); over it, 413 and nothing applied."""
    max_payload_size: int = 1024 * 1024
    """Bulk: most bytes of one request body (`maxPayloadSize`); over it, 413 and nothing applied."""
    max_results: int = 1000
    """Most resources in one page of a list (`count` is capped to it; `filter.maxResults`)."""
    max_filter_clauses: int = 200
    """Most comparisons in one filter; more is 400 `invalidFilter` (a filter is data, kept small)."""
    max_filter_depth: int = 32
    """Deepest nesting of parentheses and `not` in a filter; deeper is 400 `invalidFilter`."""
    max_filter_length: int = 16_384
    """Most characters of a filter; longer is 400 `invalidFilter`."""


@dataclass
class DependencyKeys:
    """The names under which the plugin provides its services to the host's handlers (Litestar DI).

    Like advanced-alchemy's `session_dependency_key`: a handler takes `userio_tokens: NamedDependency[TokenService]`.
    Rename one when it collides with a dependency of the host; the plugin's own controllers are not affected.
    """

    imports: str = "userio_imports"
    """`ImportService`: bulk import tasks."""
    exports: str = "userio_exports"
    """`ExportService`: bulk export tasks."""
    hooks: str = "userio_hooks"
    """`HookService`: the project's token hooks, versions, secrets and run log."""
    projects: str = "userio_projects"
    """`ProjectService`: projects, their domains, keys and settings (`by_host` finds a request's project)."""
    users: str = "userio_users"
    """`UserService`: `verify_password`, `check_sign_in`."""
    user_admin: str = "userio_user_admin"
    """`UserAdminService`: create, read, search, update, set password, disable, enable, delete one user."""
    webhooks: str = "userio_webhooks"
    """`WebhookService`: the project's webhooks and their deliveries."""
    tokens: str = "userio_tokens"
    """`TokenService`: issuing tokens (hooks run there), signing keys, applications, refresh tokens."""
    admin: str = "userio_admin"
    """`AdminAuthenticator`: the project of an admin API request."""
    storage: str = "userio_storage"
    """`Storage | None`: the export storage (None when exports are disabled)."""
    scim: str = "userio_scim"
    """`ScimService`: SCIM tokens and provisioning."""
    changes: str = "userio_changes"
    """`ChangeService`: the change log's feed, cursors and consumers (docs/changes.md)."""

    def __post_init__(self) -> None:
        keys = list(vars(self).values())
        if len(set(keys)) != len(keys):
            raise ValueError(f"DependencyKeys must be distinct, got {keys}")


@dataclass
class ChangeLogConfig:
    """The change log (docs/changes.md): every committed change of a user, kept for a while, followed by consumers."""

    retention: timedelta = timedelta(days=30)
    """Entries older than this are purged by the sweeper; a cursor before the purged ones answers 410."""
    poll_interval: timedelta = timedelta(seconds=1)
    """How often a process with consumers (the Litestar events in a web process) looks for entries committed
    elsewhere (an arq worker, the CLI, another web process); its own commits wake them at once."""
    consumer_page: int = 500
    """Entries a consumer handles per transaction (its cursor and its own writes commit together)."""


@dataclass
class UserIOConfig:
    """Everything the plugin needs; the defaults give the embedded deployment."""

    database_url: str = "sqlite:///userio.sqlite3"
    """`postgresql://...` in production; `sqlite:///path` for the embedded default (the plugin's own file)."""
    database_schema: str = "userio"
    """PostgreSQL: the schema of the plugin's tables and of its migration bookkeeping
    (docs/reference.md#tasks-database-schema); nothing of ours is created in or read from another, so a host's own
    tables (a `migration` table included) stay its own. Created by `migrate`, which also moves an older deployment's
    tables there from `public` once."""
    queue: QueueConfig = field(default_factory=QueueConfig)
    imports: ImportConfig = field(default_factory=ImportConfig)
    exports: ExportConfig = field(default_factory=ExportConfig)
    hooks: HookConfig = field(default_factory=HookConfig)
    webhooks: WebhookConfig = field(default_factory=WebhookConfig)
    """Webhook deliveries (retries, private origins, timeout)."""
    tokens: TokenConfig = field(default_factory=TokenConfig)
    auth: AuthConfig = field(default_factory=AuthConfig)
    passwords: PasswordConfig = field(default_factory=PasswordConfig)
    changes: ChangeLogConfig = field(default_factory=ChangeLogConfig)
    path_prefix: str = "/_api/admin"
    """Where the admin endpoints are mounted (docs/reference.md#endpoints)."""
    migrate_on_startup: bool = False
    """Run the plugin's migrations when the app starts (the example app does)."""
    db_pool_size: int = 10
    """PostgreSQL connections per process."""
    db_silent_transaction_timeout: timedelta | None = timedelta(seconds=10)
    """PostgreSQL ends a transaction whose client has sent nothing for this long (`idle_in_transaction_session_timeout`
    on the pool's connections): a worker host cut off from the network would otherwise hold its row locks (an import
    chunk, a claim) until the link returns, and no other worker could take its work over. Far above any pause inside
    our transactions (a chunk's records are checked in memory between statements: well under a second). A session
    whose client stopped in the middle of a statement waits for it beyond any PostgreSQL timeout: the sweep ends
    those of ours after the same time (`Database.end_silent_sessions`). The export's snapshot, which waits on
    storage between pages, is exempt. None: no bound."""
    project_cache_ttl: timedelta = timedelta(seconds=2)
    """How long a process reuses a project it found by a request's `Host` (`ProjectService.by_host`, asked by every
    token, admin API, SCIM and JWKS request) before reading it again. A settings change made in this process is seen
    at once; one made by another process (`userio project configure`, another web process) within this time. A host
    no project has is read each time, so a new project is found at once. `timedelta(0)` reads every time
    (docs/operations.md#caches)."""
    clock: Clock = field(default_factory=SystemClock)
    """Time source; tests pass a controllable one instead of sleeping."""
    console: ConsoleConfig | None = None
    """The admin console; None (the default) serves nothing."""
    metrics: MetricsConfig | None = None
    """Prometheus metrics; None (the default) collects and serves none."""
    tracing: TracingConfig | None = None
    """OpenTelemetry spans; None (the default) makes none."""
    health_path: str | None = "/_userio/health"
    """Liveness (`/live`) and readiness (`/ready`) probes under this path, without admin JWT, `Host` or HTTPS rule
    (docs/reference.md#operations); None serves none."""
    dependency_keys: DependencyKeys = field(default_factory=DependencyKeys)
    """DI keys of the services for the host's handlers."""
    scim: ScimConfig | None = field(default_factory=ScimConfig)
    """SCIM 2.0 provisioning under `ScimConfig.path` (bearer tokens per project); None serves none."""
