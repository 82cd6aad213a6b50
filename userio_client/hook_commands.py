"""`userio hooks ...`: push TypeScript hooks, test them against a user, manage secrets and versions.

`push` keeps everything else the hooks document holds (per-hook options, and the fetch allowlist unless
`--allow` replaces it), so a push changes only what it was given.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import click
import msgspec

from userio_client.commands import _fail, _with_connection, connection_options

if TYPE_CHECKING:
    from userio_client.client import AdminClient, Connection

__all__ = ["hooks_group"]

HOOKS_PATH: Final = "/_api/admin/hooks"
EVENTS: Final = ("oidc.jwt.pre_create", "oidc.id_token.pre_create")
MIGRATION_EVENT: Final = "user.password_migration"
PUSHED_EVENTS: Final = (
    *EVENTS,
    MIGRATION_EVENT,
    "user.pre_create",
    "user.profile.pre_update",
    "user.created",
    "user.profile.updated",
    "user.disabled",
    "user.reenabled",
    "user.deleted",
)
"""`push` also takes the lazy-migration event (docs/reference.md#hooks-lazy-migration) and the user events
(docs/hooks.md#user-hooks); `test` previews the token events and the lazy-migration event."""


def _run(connection: Connection, action: Callable[[AdminClient], Awaitable[None]]) -> None:
    from userio_client.client import AdminClient, TransferError

    async def run() -> None:
        async with AdminClient.open(connection) as client:
            await action(client)

    try:
        asyncio.run(run())
    except TransferError as exc:
        _fail(exc.message, exc.exit_code)


def _print_json(value: Any) -> None:
    click.echo(msgspec.json.format(msgspec.json.encode(value)).decode())


def _result(body: dict[str, Any]) -> Any:
    return body.get("result", body)


@click.group("hooks")
def hooks_group() -> None:
    """Token hooks of a project: push, test, secrets, versions."""


@hooks_group.command("push")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--event", type=click.Choice(PUSHED_EVENTS), default=EVENTS[0], show_default=True, help="The event they run on."
)
@click.option(
    "--allow",
    "allow",
    multiple=True,
    metavar="ORIGIN",
    help="Replace the fetch allowlist by these origins (repeat: --allow https://old.example.com); "
    "--allow '' empties it [default: keep the saved allowlist].",
)
@connection_options
@_with_connection
def push(connection: Connection, quiet: bool, files: tuple[Path, ...], event: str, allow: tuple[str, ...]) -> None:
    """Replace the project's hooks of EVENT by FILES (.ts), in order; hooks of the other events stay."""
    sources = [path.read_text(encoding="utf-8") for path in files]

    async def action(client: AdminClient) -> None:
        current = _result(await client.get_json(HOOKS_PATH, action="read the hooks"))
        document = dict(current) if isinstance(current, dict) else {}
        kept = [h for h in document.get("hooks", []) if isinstance(h, dict) and h.get("event") != event]
        document["hooks"] = kept + [{"event": event, "source": source} for source in sources]
        if allow:
            document["fetch_allowlist"] = [origin for origin in allow if origin]
        answer = await client.put_json(HOOKS_PATH, msgspec.json.encode(document), action="save the hooks")
        names = ", ".join(str(path) for path in files)
        click.echo(f"saved {len(sources)} {event} hook{'s' if len(sources) != 1 else ''} ({names})", err=True)
        saved = _result(answer) if isinstance(answer, dict) else None
        allowlist = saved.get("fetch_allowlist") if isinstance(saved, dict) else document.get("fetch_allowlist")
        if allow or allowlist:
            click.echo(f"fetch allowlist: {', '.join(allowlist or []) or '(empty)'}", err=True)

    _run(connection, action)


@hooks_group.command("test")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--user", "user_id", help="The user id (`sub`) to run the hooks for (a migration: the waiting user).")
@click.option("--client-id", help="The OAuth client the token would be for (token events).")
@click.option("--event", type=click.Choice(PUSHED_EVENTS), default=EVENTS[0], show_default=True)
@click.option(
    "--login-id", help=f"{MIGRATION_EVENT}: the login id of the sample sign-in [default: sample@example.com]."
)
@click.option(
    "--password",
    help=f"{MIGRATION_EVENT}: the password of the sample sign-in, sent to the old system [default: sample-password].",
)
@connection_options
@_with_connection
def test(
    connection: Connection,
    quiet: bool,
    file: Path | None,
    user_id: str | None,
    client_id: str | None,
    event: str,
    login_id: str | None,
    password: str | None,
) -> None:
    """Run the saved hooks (or FILE instead); nothing is issued or created.

    A token event runs against --user and --client-id and prints the claims the hooks add; user.password_migration
    runs on a sample sign-in (--login-id, --password, --user for a waiting user) and prints the record they answer.
    """
    body: dict[str, Any] = {"event": event}
    if event == MIGRATION_EVENT:
        if client_id is not None:
            _fail(f"--client-id goes with a token event, not {MIGRATION_EVENT}")
        body.update({k: v for k, v in (("login_id", login_id), ("password", password)) if v is not None})
    else:
        if user_id is None or client_id is None:
            _fail(f"{event} runs against a user and a client: give --user and --client-id")
        if login_id is not None or password is not None:
            _fail(f"--login-id and --password go with --event {MIGRATION_EVENT}")
        body["client_id"] = client_id
    if user_id is not None:
        body["user_id"] = user_id
    if file is not None:
        body["hooks"] = [{"event": event, "source": file.read_text(encoding="utf-8")}]

    async def action(client: AdminClient) -> None:
        answer, _ = await client.post_json(f"{HOOKS_PATH}/test", msgspec.json.encode(body), action="test the hooks")
        preview = _result(answer)
        for warning in preview.get("warnings", []) if isinstance(preview, dict) else []:
            click.echo(
                f"warning: {warning.get('message', warning) if isinstance(warning, dict) else warning}", err=True
            )
        for run in preview.get("hooks", []) if isinstance(preview, dict) else []:
            for entry in run.get("console") or [] if isinstance(run, dict) else []:
                if isinstance(entry, dict):
                    click.echo(f"console.{entry.get('level', 'log')}: {entry.get('message', '')}", err=True)
        if not isinstance(preview, dict):
            _print_json(preview)
        elif event == MIGRATION_EVENT:
            _print_json(preview.get("payload", {}).get("user"))  # the record answered (null: the bare user)
        else:
            _print_json(preview.get("added_claims", {}))
        error = preview.get("error") if isinstance(preview, dict) else None
        if error:
            _fail(
                f"the hooks refused or failed: {error.get('message', error) if isinstance(error, dict) else error}", 1
            )

    _run(connection, action)


@hooks_group.group("secrets")
def secrets_group() -> None:
    """Secrets the hooks read as `ctx.secrets.NAME` (values are never shown again)."""


@secrets_group.command("set")
@click.argument("name")
@click.option(
    "--value",
    help="The value (default: standard input, asked for without echo on a terminal, so it stays out of shell history).",
)
@connection_options
@_with_connection
def secret_set(connection: Connection, quiet: bool, name: str, value: str | None) -> None:
    """Set secret NAME."""
    if value is not None:
        secret = value
    elif sys.stdin.isatty():  # a bare read would wait for Ctrl-D without a word
        secret = click.prompt(f"value of {name} (not shown)", hide_input=True, err=True)
    else:
        secret = sys.stdin.read().rstrip("\n")
    if not secret:
        _fail(f"the value of {name} is empty: pipe it on standard input or pass --value")

    async def action(client: AdminClient) -> None:
        path = f"{HOOKS_PATH}/secrets/{quote(name, safe='')}"
        await client.put_json(path, msgspec.json.encode({"value": secret}), action=f"set secret {name}")
        click.echo(f"secret {name} set", err=True)

    _run(connection, action)


@secrets_group.command("delete")
@click.argument("name")
@connection_options
@_with_connection
def secret_delete(connection: Connection, quiet: bool, name: str) -> None:
    """Delete secret NAME."""

    async def action(client: AdminClient) -> None:
        await client.delete(f"{HOOKS_PATH}/secrets/{quote(name, safe='')}", action=f"delete secret {name}")
        click.echo(f"secret {name} deleted", err=True)

    _run(connection, action)


@secrets_group.command("list")
@connection_options
@_with_connection
def secret_list(connection: Connection, quiet: bool) -> None:
    """Print the secrets' names and update times, one a line."""

    async def action(client: AdminClient) -> None:
        answer = _result(await client.get_json(f"{HOOKS_PATH}/secrets", action="list the secrets"))
        items = answer.get("secrets", answer.get("items", [])) if isinstance(answer, dict) else answer
        for item in items or []:
            click.echo(f"{item.get('name')}\t{item.get('updated_at', '')}")

    _run(connection, action)


@hooks_group.command("versions")
@connection_options
@_with_connection
def versions(connection: Connection, quiet: bool) -> None:
    """Print the saved versions of the hooks, newest first: version, time, who."""

    async def action(client: AdminClient) -> None:
        answer = _result(await client.get_json(f"{HOOKS_PATH}/versions", action="list the hook versions"))
        items = answer.get("versions", answer.get("items", [])) if isinstance(answer, dict) else answer
        for item in items or []:
            actor = item.get("actor")
            if isinstance(actor, dict):
                who = " ".join(f"{k}={v}" for k, v in actor.items() if v is not None) or "-"
            else:
                who = str(actor or "-")
            click.echo(f"{item.get('version')}\t{item.get('created_at')}\t{who}")

    _run(connection, action)


@hooks_group.command("rollback")
@click.argument("version", type=int)
@connection_options
@_with_connection
def rollback(connection: Connection, quiet: bool, version: int) -> None:
    """Save version VERSION of the hooks again, as a new version."""

    async def action(client: AdminClient) -> None:
        answer, _ = await client.post_json(
            f"{HOOKS_PATH}/versions/{version}/rollback", b"{}", action=f"roll back to version {version}"
        )
        result = _result(answer)
        new = result.get("version") if isinstance(result, dict) else None
        click.echo(f"rolled back to version {version}" + (f" (saved as version {new})" if new else ""), err=True)

    _run(connection, action)


def _render(body: Any) -> list[str]:
    """A saved hooks body as lines a person can diff: each hook's header then its source, then the allowlist."""
    document = body if isinstance(body, dict) else {}
    lines: list[str] = []
    for index, hook in enumerate(document.get("hooks") or []):
        if not isinstance(hook, dict):
            continue
        options = {k: v for k, v in hook.items() if k not in ("event", "source")}
        extra = "".join(f" {k}={msgspec.json.encode(v).decode()}" for k, v in sorted(options.items()))
        lines.append(f"### hook {index + 1}: {hook.get('event')}{extra}\n")
        source = str(hook.get("source", ""))
        lines.extend(line + "\n" for line in source.splitlines())
    for key, value in sorted(document.items()):
        if key != "hooks":
            lines.append(f"### {key}: {msgspec.json.encode(value).decode()}\n")
    return lines


@hooks_group.command("diff")
@click.argument("old", type=int)
@click.argument("new", type=int, required=False)
@connection_options
@_with_connection
def diff(connection: Connection, quiet: bool, old: int, new: int | None) -> None:
    """Print a unified diff from version OLD to version NEW (default: the hooks saved now).

    Exits 1 when they differ, like diff(1), so a script can tell.
    """
    import difflib

    differs = False

    async def action(client: AdminClient) -> None:
        nonlocal differs
        before = _result(await client.get_json(f"{HOOKS_PATH}/versions/{old}", action=f"read version {old}"))
        if new is None:
            after = _result(await client.get_json(HOOKS_PATH, action="read the hooks"))
            label = "current"
        else:
            after = _result(await client.get_json(f"{HOOKS_PATH}/versions/{new}", action=f"read version {new}"))
            after = after.get("body", {}) if isinstance(after, dict) else {}
            label = f"version {new}"
        before = before.get("body", {}) if isinstance(before, dict) else {}
        lines = list(difflib.unified_diff(_render(before), _render(after), f"version {old}", label))
        differs = bool(lines)
        click.echo("".join(lines), nl=False)

    _run(connection, action)
    if differs:
        sys.exit(1)
