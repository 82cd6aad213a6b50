"""One login id names one user per project across login-id kinds (issue 46): `userio_identity.unique_key`.

The reference keeps one unique key per project across kinds (`UNIQUE (app_id, unique_key)`): a username spelled
like another user's email (or phone number) is refused. `unique_key` is `users.login_ids.login_key` of the
normalized value (what the normalizations of every kind agree on for one typed login id); it is NULL on a second
identity of the same user with the same key (a Keycloak or Django user whose username is its email keeps both).

Existing rows: the key is computed here for every identity, project by project in creation order. Where two users
of a project already hold one key (imported before this rule), the earlier identity keeps it and the later one is
left NULL: nothing is deleted and the migration never fails on such a clash. The later user keeps signing in where
the login id names it alone; where it names both, sign-in picks the key's holder; the count is logged (rename one
of them with the admin API's PATCH). Columns and index as `litestar_userio/db/tables.py` declares them.

Cost, `bench/import.py --users 20000` on a busy 2-core machine, one run before and two after: PostgreSQL WAL per
record 2 717 -> 2 974 and 2 975 bytes (the second unique index on identities), its CPU 44 -> 54 and 49 us, ratio to
COPY 0.22 -> 0.18 and 0.16. The per-kind index `(project_id, login_id_key, normalized_value)` could give way to this
one if the owner lookups went by key: not done yet.
"""

import json
import logging
from typing import Any

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Text
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

from userio_core.login_ids import login_key

ID = "2026-12-01T02:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "one unique login-id key per project across login-id kinds"

logger = logging.getLogger("litestar_userio.migrations")

UNIQUE = "CREATE UNIQUE INDEX userio_identity_unique_key ON userio_identity (project_id, unique_key)"
_BATCH = 5000


async def _set_keys(ids: list[str], keys: list[str]) -> None:
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


async def backfill_keys() -> int:
    """Give every identity its key (the first of a project and key, in creation order, holds it); the clashes."""
    rows: list[dict[str, Any]] = await engine_finder().run_querystring(
        QueryString(
            "SELECT id, project_id, user_id, normalized_value FROM userio_identity ORDER BY project_id, created_at, id"
        )
    )
    holders: dict[tuple[str, str], str] = {}
    ids: list[str] = []
    keys: list[str] = []
    clashes = 0
    for row in rows:
        slot = (row["project_id"], login_key(row["normalized_value"]))
        holder = holders.get(slot)
        if holder is None:
            holders[slot] = row["user_id"]
            ids.append(row["id"])
            keys.append(slot[1])
            if len(ids) >= _BATCH:
                await _set_keys(ids, keys)
                ids, keys = [], []
        elif holder != row["user_id"]:
            clashes += 1
    if ids:
        await _set_keys(ids, keys)
    return clashes


class WithKeys(MigrationManager):
    """Piccolo runs a migration's raw SQL before it adds its columns; the keys and the index need the column."""

    async def run(self, backwards: bool = False) -> None:
        await super().run(backwards=backwards)
        if not backwards and not self.preview:
            clashes = await backfill_keys()
            if clashes:
                logger.warning(
                    "%d login ids name a second user of their project under another kind (a username spelled like"
                    " another user's email or phone number): they keep no unique key; sign-in picks the first user."
                    " Rename them (PATCH /_api/admin/users/{id}); see migration %s",
                    clashes,
                    ID,
                )
            await engine_finder().run_querystring(QueryString(UNIQUE))


async def forwards():
    manager = WithKeys(migration_id=ID, app_name="userio", description=DESCRIPTION)
    manager.add_column(
        table_class_name="Identity",
        tablename="userio_identity",
        column_name="unique_key",
        db_column_name="unique_key",
        column_class_name="Text",
        column_class=Text,
        params={"default": None, "null": True},
    )
    return manager
