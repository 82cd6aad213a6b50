"""Passwords in a migration (DECISIONS 12): prove the hashes before moving millions, and follow the re-hash.

`userio import FILE --check-passwords PAIRS` sends only the records PAIRS names, as dry runs with their known
plaintexts, and prints per record and per format whether the hash verified: a wrong Firebase key or a salt on the
wrong side shows here, not on the morning after. `userio password-migration` prints how many users still carry a
legacy hash (re-hashed at their first good sign-in) and how many never signed in since their import.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import msgspec

from litestar_userio.transfer.commands import _fail, _with_connection, connection_options

if TYPE_CHECKING:
    from litestar_userio.transfer.client import AdminClient, Connection

__all__ = ["check_passwords", "password_migration_command"]

MIGRATION_PATH = "/_api/admin/users/password-migration"
_CHECKS_PER_REQUEST = 100
"""The server's limit of `password_checks` in one request."""


class _Pair(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    password: str


def _read_pairs(path: Path) -> list[_Pair]:
    """PAIRS: a JSON array or one object a line, `{"index": <record's position in FILE>, "password": "..."}`."""
    data = path.read_bytes()
    try:
        if data.lstrip()[:1] == b"[":
            return msgspec.json.decode(data, type=list[_Pair])
        return [msgspec.json.decode(line, type=_Pair) for line in data.splitlines() if line.strip()]
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        _fail(f'{path}: {exc} (expected {{"index": N, "password": "..."}} objects)')


def check_passwords(
    connection: Connection, file: Path | None, source: str | None, identifier: str | None, pairs_path: Path
) -> int:
    """Run the dry-run checks of PAIRS against FILE's records; 0 when every pair verified, else 1."""
    from litestar_userio.transfer.client import IMPORT_PATH, AdminClient, TransferError
    from litestar_userio.transfer.converters import SOURCES
    from litestar_userio.transfer.importer import _Input, _open

    if file is None:
        _fail("--check-passwords reads FILE twice: give a file, not stdin")
    pairs = _read_pairs(pairs_path)
    wanted = {pair.index for pair in pairs}
    records: dict[int, dict[str, Any]] = {}
    reader = _Input(_open(file), SOURCES[source] if source else None, lambda: False)
    with reader.stream:
        for index, record in enumerate(reader.records()):
            if index in wanted:
                records[index] = msgspec.json.decode(record.body)
    if missing := sorted(wanted - set(records)):
        _fail(f"--check-passwords: {pairs_path} names records {missing[:5]} that {file} does not have")

    async def run() -> list[tuple[int, str, str]]:
        outcomes: list[tuple[int, str, str]] = []
        async with AdminClient.open(connection) as client:
            for start in range(0, len(pairs), _CHECKS_PER_REQUEST):
                batch = pairs[start : start + _CHECKS_PER_REQUEST]
                order = sorted({pair.index for pair in batch})
                position = {index: i for i, index in enumerate(order)}
                body = {
                    "identifier": identifier or "email",
                    "dry_run": True,
                    "records": [records[i] for i in order],
                    "password_checks": [{"index": position[p.index], "password": p.password} for p in batch],
                }
                answer, _ = await client.post_json(IMPORT_PATH, msgspec.json.encode(body), action="check passwords")
                details = await _details(client, str(answer["id"]))
                for detail in details:
                    index = order[detail["index"]]
                    password = records[index].get("password")
                    kind = str(password.get("type")) if isinstance(password, dict) else "none"
                    outcomes.append((index, kind, str(detail.get("password_check", "unsupported"))))
        return outcomes

    try:
        outcomes = asyncio.run(run())
    except TransferError as exc:
        _fail(exc.message, exc.exit_code)
    by_format: dict[str, Counter[str]] = {}
    for index, kind, outcome in sorted(outcomes):
        click.echo(f"record {index}: {kind} {outcome}")
        by_format.setdefault(kind, Counter())[outcome] += 1
    for kind, counts in sorted(by_format.items()):
        summary = ", ".join(f"{counts[o]} {o}" for o in ("verified", "mismatch", "unsupported") if counts[o])
        click.echo(f"{kind}: {summary}", err=True)
    return 0 if all(outcome == "verified" for _, _, outcome in outcomes) else 1


async def _details(client: AdminClient, task_id: str) -> list[dict[str, Any]]:
    """The completed dry run's details (it is small: polled every half second)."""
    while True:
        status = await client.import_status(task_id)
        if status.status == "completed":
            return list(msgspec.json.decode(status.details) or [])
        await asyncio.sleep(0.5)


@click.command("password-migration")
@click.option("--json", "as_json", is_flag=True, help="Print the server's answer as JSON.")
@connection_options
@_with_connection
def password_migration_command(connection: Connection, quiet: bool, as_json: bool) -> None:
    """How many users per password format, how many wait for their re-hash and never signed in since import."""
    from litestar_userio.transfer.client import AdminClient, TransferError

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
