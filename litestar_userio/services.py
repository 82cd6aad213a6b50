"""The plugin's services, built once per process from the config and shared by handlers and jobs."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from litestar_userio.accounts.credentials import PasswordCredentials
from litestar_userio.accounts.lazy_migration import PasswordMigrator
from litestar_userio.accounts.sign_in_service import UserService
from litestar_userio.accounts.user_admin import UserAdminService
from litestar_userio.auth.admin_auth import AdminAuthenticator
from litestar_userio.changes.change_service import ChangeConsumer, ChangeService
from litestar_userio.changes.events_consumer import EventsConsumer
from litestar_userio.config import ScimConfig, UserIOConfig
from litestar_userio.db.engine import Database
from litestar_userio.db.migrate import migrate
from litestar_userio.errors import ServiceUnavailable
from litestar_userio.exports.export_service import ExportService
from litestar_userio.hooks.hook_service import HookService
from litestar_userio.imports.import_service import ImportService
from litestar_userio.jobs import plugin_jobs
from litestar_userio.observability import telemetry
from litestar_userio.projects.project_service import ProjectService
from litestar_userio.queue import build_queue
from litestar_userio.queue.queue_protocol import CONTEXT_KEY, JobQueue
from litestar_userio.scim.scim_service import ScimService
from litestar_userio.storage import Storage, build_storage
from litestar_userio.tokens.applications import ApplicationService
from litestar_userio.tokens.keys import SigningKeyStore
from litestar_userio.tokens.token_service import TokenService
from litestar_userio.users.passwords import PasswordVerifier
from litestar_userio.webhooks.consumer import WebhookConsumer
from litestar_userio.webhooks.webhook_service import WebhookService

__all__ = ["Services"]

logger = logging.getLogger("litestar_userio")

_READY_TIMEOUT = 3.0
"""Seconds a readiness check may take; a probe's own timeout is usually a few seconds."""


async def _deployment_id(db: Database) -> str | None:
    """The deployment's id for its jobs; None (jobs untagged, as before) while its database lacks the migration."""
    try:
        return await db.deployment_id()
    except ServiceUnavailable:
        raise
    except Exception as exc:  # not migrated yet (`migrate_on_startup` off): tagging waits for `migrate`
        logger.warning("no deployment id (run `litestar userio migrate`): jobs go untagged meanwhile (%s)", exc)
        return None


class Services:
    """Every service, started and closed together: jobs and CLI commands take this, handlers one service each.

    A plain class, not a dataclass: Litestar validates handler arguments it can introspect.
    """

    def __init__(
        self,
        *,
        config: UserIOConfig,
        db: Database,
        queue: JobQueue,
        storage: Storage | None,
        projects: ProjectService,
        users: UserService,
        imports: ImportService,
        exports: ExportService,
        admin: AdminAuthenticator,
        hooks: HookService,
        tokens: TokenService,
        user_admin: UserAdminService,
        webhooks: WebhookService,
        changes: ChangeService,
        scim: ScimService,
    ) -> None:
        self.config = config
        self.db = db
        self.queue = queue
        self.storage = storage
        self.projects = projects
        self.users = users
        self.imports = imports
        self.exports = exports
        self.admin = admin
        self.hooks = hooks
        self.tokens = tokens
        self.user_admin = user_admin
        self.webhooks = webhooks
        self.changes = changes
        self.scim = scim
        """SCIM tokens and provisioning (its routes only where `UserIOConfig.scim` is set)."""

    @classmethod
    async def start(
        cls,
        config: UserIOConfig,
        *,
        queue: JobQueue | None = None,
        run_jobs: bool = True,
        emit: Callable[..., None] | None = None,
    ) -> Services:
        """Open the database (migrating it if configured), the queue and the storage; build every service once.

        `emit` is the app's (`app.emit`, in a web process): the plugin's events (`events.EVENTS`) go through it, the
        users' following the change log (`changes/events_consumer.py`: this process becomes one of its consumers).

        Without `queue`, a Redis URL in the config selects arq (enqueue only: workers run the jobs), else the
        in-process runner runs them here. `run_jobs=False` builds an in-process queue that runs nothing (CLI).
        """
        telemetry.configure(config.metrics, config.tracing)
        db = Database(
            config.database_url,
            schema=config.database_schema,
            pool_size=config.db_pool_size,
            silent_transaction_timeout=config.db_silent_transaction_timeout,
        )
        await db.start()
        if config.migrate_on_startup:
            await migrate(db)
        if queue is None:
            queue = build_queue(config, plugin_jobs(), run_jobs=run_jobs)
        queue.bind_deployment(await _deployment_id(db))
        await queue.start()
        clock = config.clock
        storage = build_storage(config.exports.storage, clock) if config.exports.storage is not None else None
        projects = ProjectService(db, clock, config.project_cache_ttl)
        applications = ApplicationService(db, clock)
        passwords = PasswordVerifier(config.passwords, config.imports.max_bcrypt_cost, config.imports.hash_bounds)
        credentials = PasswordCredentials(db, passwords, projects, clock)
        hooks = HookService(db, config.hooks, clock)
        webhooks = WebhookService(
            db,
            queue,
            config.webhooks,
            clock,
            secrets_key=config.hooks.secrets_key,
            ca_file=config.hooks.fetch_ca_file,
        )
        # The change log's consumers in this process: the app's events where there is an app (`emit`); the
        # webhooks (and their non-blocking hooks) wherever jobs run.
        consumers: list[ChangeConsumer] = []
        if emit is not None:
            consumers.append(EventsConsumer(emit))
        if run_jobs:
            consumers.append(WebhookConsumer(webhooks, hooks))
        changes = ChangeService(db, config.changes, clock, consumers=consumers)
        tokens = TokenService(db, SigningKeyStore(db, clock), applications, hooks, config.tokens, clock)
        user_admin = UserAdminService(
            db, projects, passwords, clock, imports=config.imports, changes=changes, hooks=hooks
        )
        users = UserService(
            db,
            config.passwords,
            config.imports.max_bcrypt_cost,
            clock=clock,
            projects=projects,
            hash_bounds=config.imports.hash_bounds,
            applications=applications,
            passwords=passwords,
            credentials=credentials,
            migrator=PasswordMigrator(hooks, user_admin, credentials),
            refresh_tokens=tokens.refresh_tokens,
        )
        services = cls(
            config=config,
            db=db,
            queue=queue,
            storage=storage,
            projects=projects,
            users=users,
            imports=ImportService(
                db,
                queue,
                projects,
                config.imports,
                config.queue,
                clock,
                passwords=passwords,
                changes=changes,
                emit=emit,
            ),
            exports=ExportService(db, queue, projects, storage, config.exports, config.queue, clock, changes=changes),
            admin=AdminAuthenticator(config.auth, projects, clock),
            hooks=hooks,
            tokens=tokens,
            user_admin=user_admin,
            changes=changes,
            scim=ScimService(
                db,
                projects,
                user_admin,
                clock,
                config=config.scim or ScimConfig(),
                auth=config.auth,
                served=config.scim is not None,
            ),
            webhooks=webhooks,
        )
        telemetry.watch("pending_checks", services.users.passwords.pending)
        changes.start()
        if run_jobs:
            await queue.serve({CONTEXT_KEY: services})
        return services

    async def ready(self, *, hooks: bool = True) -> bool:
        """Readiness: the database answers, the queue takes jobs, the V8 pool runs a trivial hook.

        See docs/reference.md#operations.

        `hooks=False` leaves the pool out. All within a few seconds, whatever hangs.
        """
        try:
            async with asyncio.timeout(_READY_TIMEOUT):
                return await self.db.ready() and await self.queue.ready() and (not hooks or await self.hooks.ready())
        except TimeoutError:
            return False

    async def close(self) -> None:
        """Stop the queue and the hook workers, close the storage and the database."""
        await self.changes.close()
        await self.queue.close()
        await self.webhooks.close()
        await self.hooks.close()
        self.users.close()
        if self.storage is not None:
            await self.storage.close()
        await self.db.close()
