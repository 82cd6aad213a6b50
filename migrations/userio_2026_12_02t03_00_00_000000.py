"""A bulk append (an import chunk) as one row of the change log (issue 42: the import's cost of the log).

Until now a bulk append wrote one `userio_change` row per entry (its document a line of one
`userio_change_documents` row): on `bench/import.py`, about 250 bytes of WAL and a B-tree insert per imported user.
Now it writes one row holding them all: `entries` (how many), `user_ids` and `kinds` (JSON arrays, in order) and
`batch` (the documents' row, line i the document of entry i); `seq` is the LAST entry's position and entry i is at
`seq - entries + 1 + i`. Rows of one entry (`entries` NULL) are as before.

So that a row's entries own those positions: on PostgreSQL the `seq` identity steps by 4096 (a row has at most
4096 entries; each row's `seq` is the top of a block of its own, and the blocks of one transaction rise with it; the
identity first moves to a multiple of the block, so that the first block too lies above every position and above 0);
on SQLite, whose writers are serialized, a bulk row takes `seq` = the last one drawn + its entries. Entries keep
their ids (`change_<seq>`) and cursors; the feed expands a row into its entries (docs/changes.md#cost).

Backwards: each bulk row becomes its entries again, a row each (the earlier bulk form: `batch`, `batch_index`), the
columns go and the identity steps by 1.
"""

import json

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-12-02T03:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "a bulk append of the change log as one row"

BLOCK = 4096
"""Positions per `seq` on PostgreSQL: a row's entries at most (`changes/change_repository.py` `_BLOCK`)."""

COLUMNS = ("entries integer", "user_ids text", "kinds text")


async def _run(statement: str, *args: object) -> list[dict[str, object]]:
    return await engine_finder().run_querystring(QueryString(statement, *args))


async def forwards_sql() -> None:
    engine = engine_finder()
    for column in COLUMNS:
        await _run(f"ALTER TABLE userio_change ADD COLUMN {column}")
    if engine.engine_type == "postgres":
        await _run(f"ALTER TABLE userio_change ALTER COLUMN seq SET INCREMENT BY {BLOCK}")
        # Every value drawn from now on tops a block above every position so far, and positive: the last value (or
        # 1, never drawn) rounded up to a multiple of the block, as drawn; the next is one block above it.
        sequence = (await _run("SELECT pg_get_serial_sequence('userio_change', 'seq') AS name"))[0]["name"]
        last = int((await _run(f"SELECT last_value FROM {sequence}"))[0]["last_value"])
        await _run("SELECT setval({}, {}, true)", sequence, -(-max(last, 1) // BLOCK) * BLOCK)


async def backwards_sql() -> None:
    engine = engine_finder()
    rows = await _run(
        "SELECT seq, xact, project_id, occurred_at, origin_kind, task_id, batch, entries, user_ids, kinds"
        " FROM userio_change WHERE entries IS NOT NULL"
    )
    for row in rows:
        count = int(row["entries"])
        user_ids, kinds = json.loads(str(row["user_ids"])), json.loads(str(row["kinds"]))
        first = int(row["seq"]) - count + 1
        await _run("DELETE FROM userio_change WHERE seq = {} AND entries IS NOT NULL", row["seq"])
        for index in range(count):
            await _run(
                "INSERT INTO userio_change (seq, xact, project_id, user_id, kind, occurred_at, origin_kind, task_id,"
                " batch, batch_index) VALUES ({}, {}, {}, {}, {}, {}, {}, {}, {}, {})",
                first + index,
                row["xact"],
                row["project_id"],
                user_ids[index],
                kinds[index],
                row["occurred_at"],
                row["origin_kind"],
                row["task_id"],
                row["batch"],
                index,
            )
    for column in COLUMNS:
        await _run(f"ALTER TABLE userio_change DROP COLUMN {column.split()[0]}")
    if engine.engine_type == "postgres":
        await _run("ALTER TABLE userio_change ALTER COLUMN seq SET INCREMENT BY 1")


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)
    manager.add_raw(forwards_sql)
    manager.add_raw_backwards(backwards_sql)
    return manager
