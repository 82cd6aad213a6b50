"""Prove the hashes before moving millions: `userio import FILE --check-passwords PAIRS`.

See docs/reference.md#import-dry-run.

Only the records PAIRS names are sent, as dry runs with their known plaintexts; each record's outcome and a count
per format are printed: a wrong Firebase key or a salt on the wrong side shows here, not on the morning after.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import msgspec

from userio_client.client import TransferError

if TYPE_CHECKING:
    from userio_client.client import AdminClient, Connection
    from userio_client.plan import ImportSettings

__all__ = ["check_passwords"]

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
        raise TransferError(f'{path}: {exc} (expected {{"index": N, "password": "..."}} objects)') from exc


def check_passwords(connection: Connection, settings: ImportSettings, pairs_path: Path) -> int:
    """Run the dry-run checks of PAIRS against FILE's records; 0 when every pair verified, else 1.

    The records are read as the import would send them (`plan.source_for` and `plan.input_pass`: the same
    converter with `--firebase-hash-config`, the same `--phone-region` and `--upsert`), so what verifies here is
    what the import stores. TransferError (one line for stderr) when PAIRS or FILE cannot be used, or the server
    refuses.
    """
    from userio_client.client import IMPORT_PATH, AdminClient
    from userio_client.phones import check_region
    from userio_client.plan import input_pass, source_for

    file = settings.path
    if file is None:
        raise TransferError("--check-passwords reads the records from FILE: give a file, not stdin")
    converter = source_for(
        settings.source,
        str(settings.firebase_hash_config) if settings.firebase_hash_config else None,
        bool(settings.new_ids),
    )
    phone_region = check_region(settings.phone_region) if settings.phone_region is not None else None
    pairs = _read_pairs(pairs_path)
    wanted = {pair.index for pair in pairs}
    records: dict[int, dict[str, Any]] = {}
    # A converter reads no request object, so only the flag's upsert can shape a converted record.
    reader = input_pass(file, converter, lambda: bool(settings.upsert), phone_region)
    with reader.stream:
        for index, record in enumerate(reader.records()):
            if index in wanted:
                records[index] = msgspec.json.decode(record.body)
    identifier = settings.identifier or reader.options.identifier or "email"
    upsert = settings.upsert if settings.upsert is not None else bool(reader.options.upsert)
    if missing := sorted(wanted - set(records)):
        raise TransferError(f"--check-passwords: {pairs_path} names records {missing[:5]} that {file} does not have")

    async def run() -> list[tuple[int, str, str]]:
        outcomes: list[tuple[int, str, str]] = []
        async with AdminClient.open(connection) as client:
            for start in range(0, len(pairs), _CHECKS_PER_REQUEST):
                batch = pairs[start : start + _CHECKS_PER_REQUEST]
                order = sorted({pair.index for pair in batch})
                position = {index: i for i, index in enumerate(order)}
                body = {
                    "identifier": identifier,
                    "upsert": upsert,
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

    outcomes = asyncio.run(run())
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
