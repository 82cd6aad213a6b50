"""One unique index on login ids instead of two (issue 42: the import's cost of the change log and of issue 46's key).

Since migration 2026-12-01T02 each identity had two unique indexes: `(project_id, login_id_key, normalized_value)`
(one value per kind) and `(project_id, unique_key)` (one login id, one user, across kinds). Every imported record
paid both (about 260 bytes of WAL and a B-tree insert each). Now `unique_key` is never NULL: a user's second login
id with the same key (its email that is its username too), and a login id of a user who shared a key with another
before 2026-12-01T02, store the key and their kind joined by U+001F, which no login id holds (the validation refuses
control characters). The one index on `(project_id, unique_key)` then refuses both a second user of a key and a
second login id of one kind with one value; lookups by kind and value probe it with the two keys the value may
have (`users/user_repository.py`). The per-kind index goes.

Backwards: the joined keys are NULL again and the per-kind index comes back.
"""

import json
import logging
from typing import Any

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

from userio_core.login_ids import login_key

ID = "2026-12-02T01:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "one unique index on login ids: a second login id with a key stores it joined with its kind"

logger = logging.getLogger("litestar_userio.migrations")

SECOND = "\x1f"
PER_KIND = (
    "CREATE UNIQUE INDEX userio_identity_login_id ON userio_identity (project_id, login_id_key, normalized_value)"
)
_BATCH = 5000


async def _set_keys(ids: list[str], keys: list[str | None]) -> None:
    engine = engine_finder()
    if engine.engine_type == "postgres":
        query = QueryString(
            "UPDATE userio_identity AS i SET unique_key = v.k FROM unnest({}::text[], {}::text[]) AS v(id, k)"
            " WHERE i.id = v.id",
            ids,
            keys,
        )
    else:
        query = QueryString(
            "UPDATE userio_identity SET unique_key = v.k FROM (SELECT json_extract(value, '$[0]') AS id,"
            " json_extract(value, '$[1]') AS k FROM json_each({})) AS v WHERE userio_identity.id = v.id",
            json.dumps([[i, k] for i, k in zip(ids, keys, strict=True)]),
        )
    await engine.run_querystring(query)


async def _rekey(where: str, wanted: Any, key_of: Any) -> int:
    """Set `key_of(row)` as the key of the identities `where` (SQL) selects and `wanted(row)` keeps; how many."""
    rows: list[dict[str, Any]] = await engine_finder().run_querystring(
        QueryString(f"SELECT id, login_id_key, normalized_value, unique_key FROM userio_identity WHERE {where}")
    )
    rows = [row for row in rows if wanted(row)]
    for start in range(0, len(rows), _BATCH):
        batch = rows[start : start + _BATCH]
        await _set_keys([row["id"] for row in batch], [key_of(row) for row in batch])
    return len(rows)


class OneIndex(MigrationManager):
    """The keys are rewritten in Python (`login_key` is not SQL), then the index changes."""

    async def run(self, backwards: bool = False) -> None:
        await super().run(backwards=backwards)
        if self.preview:
            return
        engine = engine_finder()
        if backwards:
            await _rekey("unique_key IS NOT NULL", lambda row: SECOND in row["unique_key"], lambda row: None)
            await engine.run_querystring(QueryString(PER_KIND))
            return
        count = await _rekey(
            "unique_key IS NULL",
            lambda row: True,
            lambda row: f"{login_key(row['normalized_value'])}{SECOND}{row['login_id_key']}",
        )
        await engine.run_querystring(QueryString("DROP INDEX userio_identity_login_id"))
        logger.info("%d second login ids keyed by kind; one unique index on login ids", count)


async def forwards():
    return OneIndex(migration_id=ID, app_name="userio", description=DESCRIPTION)
