"""`litestar userio ...`: migrations, projects and keys, admin and SCIM tokens, workers, roles and groups.

Names and outputs are fixed: other tools script against them (`admin-token` and `scim-token` print only the token).
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from litestar import Litestar

from litestar_userio.config import UserIOConfig
from litestar_userio.db.migrate import migrate
from litestar_userio.projects.project_service import project_domain
from litestar_userio.services import Services
from litestar_userio.tokens.applications import ApplicationRecord
from litestar_userio.users.custom_attributes import CUSTOM_ATTRIBUTE_TYPES, CustomAttributeSpec
from userio_core.admin_keys import generate_key_pair, sign_admin_token
from userio_core.files import write_private
from userio_core.paths import default_key_path, userio_home

__all__ = ["default_key_path", "userio_group", "userio_home"]

T = TypeVar("T")

PROJECT_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
"""A project id is also a token audience and a file name: lower-case letters, digits and hyphens."""


def _config(ctx: click.Context) -> UserIOConfig:
    """The plugin's config, found without importing the plugin module (which imports this one)."""
    app: Litestar = ctx.obj.app
    for plugin in app.plugins:
        config = getattr(plugin, "config", None)
        if isinstance(config, UserIOConfig):
            return config
    raise click.ClickException("the app has no UserIOPlugin")


def _with_services(ctx: click.Context, action: Callable[[Services], Awaitable[T]]) -> T:
    config = _config(ctx)

    async def run() -> T:
        services = await Services.start(config, run_jobs=False)
        try:
            return await action(services)
        finally:
            await services.close()

    return asyncio.run(run())


async def _require_project(services: Services, project_id: str) -> None:
    """Stop the command when the project does not exist."""
    if await services.projects.get(project_id) is None:
        raise click.ClickException(f"no project {project_id!r}")


def _refusing_bad_values(ctx: click.Context, action: Callable[[Services], Awaitable[T]]) -> T:
    """`_with_services`, a value the services refuse (ValueError) reported in one line, exit 1."""
    try:
        return _with_services(ctx, action)
    except ValueError as exc:
        _refuse(str(exc))


def _refuse(message: str) -> NoReturn:
    """One line on stderr and exit 1: a refusal is not a crash, it needs no box or traceback."""
    click.echo(f"error: {message}", err=True)
    raise click.exceptions.Exit(1)


def _write_private_key(path: Path, pem: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, pem.encode(), exclusive=False)


@click.group(name="userio")
def userio_group() -> None:
    """Bulk user import/export and token hooks (litestar-userio)."""


@userio_group.command("migrate")
@click.pass_context
def migrate_command(ctx: click.Context) -> None:
    """Create or upgrade the plugin's tables."""

    async def action(services: Services) -> str:
        return await migrate(services.db)

    click.echo(_with_services(ctx, action), nl=False)


@userio_group.group("project")
def project_group() -> None:
    """Projects (tenants)."""


@project_group.command("create")
@click.option("--id", "project_id", required=True, help="Project id, also the `aud` of its admin tokens.")
@click.option("--domain", "domains", required=True, multiple=True, help="Host name that selects the project.")
@click.option(
    "--key-out", type=click.Path(dir_okay=False, path_type=Path), help="Where to write the admin private key."
)
@click.pass_context
def project_create(ctx: click.Context, project_id: str, domains: tuple[str, ...], key_out: Path | None) -> None:
    """Create a project and its admin API key pair; print the key id."""
    if not PROJECT_ID.fullmatch(project_id):
        _refuse(
            f"invalid project id {project_id!r}: use 1-63 lower-case letters, digits and '-', starting with a letter"
            " or digit (e.g. acme-prod)"
        )
    try:
        for domain in domains:
            project_domain(domain)
    except ValueError as exc:
        _refuse(str(exc))
    pair = generate_key_pair()
    path = key_out or default_key_path(project_id)

    async def action(services: Services) -> None:
        if await services.projects.get(project_id) is not None:
            raise click.ClickException(f"project {project_id!r} already exists")
        for domain in domains:
            owner = await services.projects.domain_owner(domain)
            if owner is not None:
                _refuse(f"domain {domain!r} already selects project {owner!r}")
        await services.projects.create(project_id, domains)
        await services.projects.add_admin_key(project_id, pair.kid, pair.public_pem)

    _with_services(ctx, action)
    _write_private_key(path, pair.private_pem)
    click.echo(pair.kid)
    click.echo(f"admin private key written to {path}", err=True)


@project_group.command("list")
@click.pass_context
def project_list(ctx: click.Context) -> None:
    """Print every project: its id, a tab, its domains separated by commas."""

    async def action(services: Services) -> list[tuple[str, list[str]]]:
        return await services.projects.list_projects()

    for project_id, domains in _with_services(ctx, action):
        click.echo(f"{project_id}\t{','.join(domains)}")


@userio_group.group("client")
def client_group() -> None:
    """OAuth clients (applications) of a project."""


@client_group.command("create")
@click.option("--project", "project_id", required=True)
@click.option("--client-id", required=True, help="The `client_id` the application signs in with.")
@click.option("--name", help="A display name (default: the client id).")
@click.option(
    "--opaque-access-token",
    is_flag=True,
    help="Issue opaque access tokens (no JWT, so no token hook runs) instead of JWT access tokens.",
)
@click.pass_context
def client_create(
    ctx: click.Context, project_id: str, client_id: str, name: str | None, opaque_access_token: bool
) -> None:
    """Register an OAuth client; prints its client id."""

    async def action(services: Services) -> None:
        await _require_project(services, project_id)
        if await services.tokens.applications.get(project_id, client_id) is not None:
            raise click.ClickException(f"client {client_id!r} already exists in project {project_id!r}")
        await services.tokens.applications.create(
            project_id, client_id, issue_jwt_access_token=not opaque_access_token, name=name or client_id
        )

    _refusing_bad_values(ctx, action)
    click.echo(client_id)


@client_group.command("list")
@click.option("--project", "project_id", required=True)
@click.pass_context
def client_list(ctx: click.Context, project_id: str) -> None:
    """Print the project's clients, one a line: client id, `jwt` or `opaque` access tokens, name (tab-separated)."""

    async def action(services: Services) -> list[ApplicationRecord]:
        await _require_project(services, project_id)
        return await services.tokens.applications.all(project_id)

    for client in _with_services(ctx, action):
        kind = "jwt" if client.issue_jwt_access_token else "opaque"
        click.echo(f"{client.client_id}\t{kind}\t{client.name or ''}")


@project_group.command("configure")
@click.option("--project", "project_id", required=True)
@click.option("--set", "changes", multiple=True, metavar="NAME=VALUE", help="e.g. create_unknown_roles_on_import=true")
@click.pass_context
def project_configure(ctx: click.Context, project_id: str, changes: tuple[str, ...]) -> None:
    """Change project settings."""
    import msgspec

    values: dict[str, Any] = {}
    for change in changes:
        name, equals, value = change.partition("=")
        if not equals or not name:
            _refuse(f"--set {change!r}: give NAME=VALUE, e.g. email_case_sensitive=true")
        try:
            values[name] = msgspec.json.decode(value)
        except msgspec.DecodeError:
            _refuse(f"--set {change!r}: the value is JSON: true, false, a number or null")

    async def action(services: Services) -> str:
        try:
            project = await services.projects.update_settings(project_id, **values)
        except LookupError as exc:
            raise click.ClickException(f"no project {project_id!r}") from exc
        return msgspec.json.encode(project.settings).decode()

    click.echo(_refusing_bad_values(ctx, action))


@userio_group.command("admin-token")
@click.option("--project", "project_id", required=True)
@click.option("--key", "key_path", type=click.Path(dir_okay=False, path_type=Path), help="Admin private key (PEM).")
@click.option("--ttl", type=click.IntRange(1, 86400), default=3600, show_default=True, help="Lifetime in seconds.")
def admin_token(project_id: str, key_path: Path | None, ttl: int) -> None:
    """Print a signed Admin API JWT (and nothing else)."""
    path = key_path or default_key_path(project_id)
    try:
        pem = path.read_text()
    except OSError as exc:
        raise click.ClickException(f"cannot read the admin key {path}: {exc.strerror}") from exc
    click.echo(sign_admin_token(pem, project_id, ttl=timedelta(seconds=ttl)))


@userio_group.command("scim-token")
@click.option("--project", "project_id", required=True)
@click.pass_context
def scim_token(ctx: click.Context, project_id: str) -> None:
    """Create a SCIM bearer token for the project and print it (and nothing else): it is shown this once.

    The identity provider sends it as `Authorization: Bearer <token>` to the SCIM base URL (docs/scim.md); revoke
    it with `DELETE /_api/admin/scim/tokens/{id}`.
    """

    async def action(services: Services) -> str:
        await _require_project(services, project_id)
        return (await services.scim.create_token(project_id)).token

    click.echo(_with_services(ctx, action))


@userio_group.command("worker")
@click.option("--burst", is_flag=True, help="Stop when the queue is empty.")
@click.option(
    "--metrics-port",
    type=click.IntRange(1, 65535),
    help="Serve this worker's metrics on this port (default: MetricsConfig.worker_port; needs metrics configured).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Run no worker: exit 0 when the database and Redis answer, 1 otherwise (a container's health probe).",
)
@click.pass_context
def worker(ctx: click.Context, burst: bool, metrics_port: int | None, check: bool) -> None:
    """Run an arq worker for the configured Redis."""
    from litestar_userio.errors import ExtraNotInstalled
    from litestar_userio.extras import require
    from litestar_userio.runtime import WORKER_GC_INTERVAL, collecting_every, tune_gc

    config = _config(ctx)
    if not config.queue.redis_url:
        raise click.ClickException("no Redis configured (QueueConfig.redis_url): jobs run in the web process")
    try:
        require("arq", "redis", "litestar userio worker")
    except ExtraNotInstalled as missing:
        raise click.ClickException(str(missing)) from None
    from litestar_userio.worker import check_worker, run_worker

    if check:
        ready = asyncio.run(check_worker(config))
        click.echo("ok" if ready else "unavailable")
        ctx.exit(0 if ready else 1)

    async def work() -> None:
        async with collecting_every(WORKER_GC_INTERVAL):
            await run_worker(config, burst=burst, metrics_port=metrics_port)

    tune_gc()
    asyncio.run(work())


def _add_keys_command(kind: str, table: str) -> click.Group:
    @click.group(kind)
    def group() -> None:
        pass

    group.help = f"{kind.capitalize()} defined in a project."

    @group.command("add")
    @click.option("--project", "project_id", required=True)
    @click.argument("keys", nargs=-1, required=True)
    @click.pass_context
    def add(ctx: click.Context, project_id: str, keys: tuple[str, ...]) -> None:
        async def action(services: Services) -> list[str]:
            await _require_project(services, project_id)
            return await services.projects.add_keys(project_id, table, keys)

        for key in _refusing_bad_values(ctx, action):
            click.echo(key)

    add.help = f"Define {kind} keys; prints the ones that were new."

    @group.command("list")
    @click.option("--project", "project_id", required=True)
    @click.pass_context
    def list_(ctx: click.Context, project_id: str) -> None:
        async def action(services: Services) -> list[str]:
            await _require_project(services, project_id)
            return await services.projects.list_keys(project_id, table)

        for key in _with_services(ctx, action):
            click.echo(key)

    list_.help = f"Print the project's {kind} keys, one a line."
    return group


userio_group.add_command(_add_keys_command("roles", "userio_role"))
userio_group.add_command(_add_keys_command("groups", "userio_group"))


@userio_group.group("custom-attributes")
def custom_attributes_group() -> None:
    """Declared custom attributes (values are then checked on import)."""


@custom_attributes_group.command("declare")
@click.option("--project", "project_id", required=True)
@click.option("--name", required=True)
@click.option("--type", "type_", type=click.Choice(CUSTOM_ATTRIBUTE_TYPES), required=True)
@click.option("--minimum", type=float)
@click.option("--maximum", type=float)
@click.option("--enum", "enum", multiple=True)
@click.pass_context
def declare(
    ctx: click.Context,
    project_id: str,
    name: str,
    type_: Any,
    minimum: float | None,
    maximum: float | None,
    enum: tuple[str, ...],
) -> None:
    """Declare a custom attribute."""
    spec = CustomAttributeSpec(name=name, type=type_, minimum=minimum, maximum=maximum, enum=enum or None)

    async def action(services: Services) -> None:
        await _require_project(services, project_id)
        await services.projects.declare_custom_attribute(project_id, spec)

    _refusing_bad_values(ctx, action)
    print(name, file=sys.stdout)


@custom_attributes_group.command("list")
@click.option("--project", "project_id", required=True)
@click.pass_context
def custom_attributes_list(ctx: click.Context, project_id: str) -> None:
    """Print the declared custom attributes in declaration order: name, type, constraints (tab-separated)."""

    async def action(services: Services) -> list[CustomAttributeSpec]:
        await _require_project(services, project_id)
        return list((await services.projects.custom_schema(project_id)).values())

    for spec in _with_services(ctx, action):
        limits = [f"{name} {value:g}" for name, value in (("minimum", spec.minimum), ("maximum", spec.maximum))
                  if value is not None]  # fmt: skip
        constraints = ", ".join(spec.enum) if spec.enum else ", ".join(limits)
        click.echo(f"{spec.name}\t{spec.type}\t{constraints}")


@userio_group.command("console-url")
@click.option("--project", "project_id", required=True)
@click.option("--key", "key_path", type=click.Path(dir_okay=False, path_type=Path), help="Admin private key (PEM).")
@click.option(
    "--base-url", help="The server's origin; default: ConsoleConfig.public_url, else https://localhost:$PORT."
)
@click.option("--ttl", type=click.IntRange(60, 86400), help="Session lifetime in seconds; default: ConsoleConfig.")
@click.pass_context
def console_url(
    ctx: click.Context, project_id: str, key_path: Path | None, base_url: str | None, ttl: int | None
) -> None:
    """Print a sign-in link to the admin console (last line) carrying a short-lived admin token in its fragment.

    The fragment never leaves the browser: no request, log or referrer carries it.
    """
    console = _config(ctx).console
    if console is None:
        raise click.ClickException("the console is off: set UserIOConfig(console=ConsoleConfig())")
    path = key_path or default_key_path(project_id)
    try:
        pem = path.read_text()
    except OSError as exc:
        raise click.ClickException(f"cannot read the admin key {path}: {exc.strerror}") from exc
    lifetime = timedelta(seconds=ttl) if ttl is not None else console.token_ttl
    token = sign_admin_token(pem, project_id, ttl=lifetime, origin="console")  # its changes: origin `console`
    origin = (base_url or console.public_url or f"https://localhost:{os.environ.get('PORT', '8443')}").rstrip("/")
    click.echo(
        f"Admin console for project {project_id!r}; the link signs you in for {int(lifetime.total_seconds())} s:"
    )
    click.echo(f"{origin}{console.path.rstrip('/')}/#token={token}")
