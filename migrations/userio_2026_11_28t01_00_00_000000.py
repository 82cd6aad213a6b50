"""A user's id may be the id it had in the old system (DECISIONS 11: any UUID, or up to 128 characters), and a
user may be disabled for a window only (the reference's `temporarily_disabled_from/until`).

PostgreSQL: every column holding a user id takes 128 characters (`varchar(36)` before). SQLite does not enforce a
varchar's length, so only the new columns are added there. Columns as `litestar_userio/db/tables.py` declares them
(frozen here, as a migration must be).
"""

from typing import Any

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Text, Timestamptz
from piccolo.engine import engine_finder
from piccolo.querystring import QueryString

ID = "2026-11-28T01:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "user ids of up to 128 characters; temporary disable window and disable reason"

USER_ID_COLUMNS = [
    ("userio_user", "id"),
    ("userio_identity", "user_id"),
    ("userio_authenticator", "user_id"),
    ("userio_user_role", "user_id"),
    ("userio_user_group", "user_id"),
    ("userio_refresh_token", "user_id"),
]

NEW_COLUMNS: list[tuple[str, tuple[type, dict[str, Any]]]] = [
    ("temporarily_disabled_from", (Timestamptz, {"default": None, "null": True})),
    ("temporarily_disabled_until", (Timestamptz, {"default": None, "null": True})),
    ("disable_reason", (Text, {"default": None, "null": True})),
]


async def widen_user_ids() -> None:
    engine = engine_finder()
    if engine.engine_type != "postgres":
        return
    for table, column in USER_ID_COLUMNS:
        await engine.run_querystring(QueryString(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE varchar(128)"))


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)
    manager.add_raw(widen_user_ids)
    for name, (column_class, params) in NEW_COLUMNS:
        manager.add_column(
            table_class_name="User",
            tablename="userio_user",
            column_name=name,
            db_column_name=name,
            column_class_name=column_class.__name__,
            column_class=column_class,
            params=params,
        )
    return manager
