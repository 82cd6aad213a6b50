"""`userio password-migration`: where the re-hash of legacy passwords stands.

See docs/reference.md#passwords-re-hash-at-sign-in.

How many users still carry a legacy hash (re-hashed at their first good sign-in) and how many never signed in
since their import. The dry-run checks of known pairs are `password_checks.py`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import click
import msgspec

from userio_client.commands import _fail, _with_connection, connection_options

if TYPE_CHECKING:
    from userio_client.client import Connection

__all__ = ["password_migration_command"]

MIGRATION_PATH = "/_api/admin/users/password-migration"


@click.command("password-migration")
@click.option("--json", "as_json", is_flag=True, help="Print the server's answer as JSON.")
@connection_options
@_with_connection
def password_migration_command(connection: Connection, quiet: bool, as_json: bool) -> None:
    """How many users per password format, how many wait for their re-hash and never signed in since import."""
    from userio_client.client import AdminClient, TransferError

    async def run() -> dict[str, Any]:
        async with AdminClient.open(connection) as client:
            body = await client.get_json(MIGRATION_PATH, action="read the password migration")
        result = body.get("result", body)
        return result if isinstance(result, dict) else {}

    try:
        state = asyncio.run(run())
    except TransferError as exc:
        _fail(exc.message, exc.exit_code)
    if as_json:
        click.echo(msgspec.json.format(msgspec.json.encode(state)).decode())
        return
    click.echo(f"target algorithm: {state.get('password_algorithm')}")
    click.echo(f"users: {state.get('users', 0):,} ({state.get('without_password', 0):,} without a password)")
    click.echo(
        f"awaiting re-hash at first sign-in: {state.get('awaiting_rehash', 0):,}"
        f" (never signed in since import: {state.get('awaiting_rehash_never_signed_in', 0):,})"
    )
    for kind, count in (state.get("formats") or {}).items():
        click.echo(f"  {kind}: {count['users']:,} users, {count['never_signed_in']:,} never signed in")
