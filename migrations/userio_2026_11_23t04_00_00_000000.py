"""The account valid period of a user and the expiry of a password (the reference's `account_valid_from`,
`account_valid_until`, `password.expire_after`); refresh tokens, stored as their SHA-256, rotated on use.

Columns as `litestar_userio/db/tables.py` declares them (frozen here, as a migration must be).
"""

from typing import Any

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import ForeignKey, Text, Timestamptz, Varchar
from piccolo.table import Table

ID = "2026-11-23T04:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "account valid period, password expiry, refresh tokens"


class Project(Table, tablename="userio_project"):
    id = Varchar(length=64, primary_key=True)


class User(Table, tablename="userio_user"):
    id = Varchar(length=36, primary_key=True)


NULL_TIMESTAMP: tuple[type, dict[str, Any]] = (Timestamptz, {"default": None, "null": True})

NEW_COLUMNS: list[tuple[str, str, str, tuple[type, dict[str, Any]]]] = [
    ("User", "userio_user", "account_valid_from", NULL_TIMESTAMP),
    ("User", "userio_user", "account_valid_until", NULL_TIMESTAMP),
    ("Authenticator", "userio_authenticator", "expire_after", NULL_TIMESTAMP),
]

REFRESH_TOKEN: dict[str, tuple[type, dict[str, Any]]] = {
    "id": (Varchar, {"length": 36, "primary_key": True}),
    "project": (ForeignKey, {"references": Project, "null": False, "db_column_name": "project_id"}),
    "user": (ForeignKey, {"references": User, "null": False, "index": True, "db_column_name": "user_id"}),
    "client_id": (Text, {}),
    "family_id": (Varchar, {"length": 36, "index": True}),
    "token_hash": (Text, {"unique": True}),
    "scope": (Text, {}),
    "created_at": (Timestamptz, {}),
    "expires_at": (Timestamptz, {}),
    "used_at": (Timestamptz, {"default": None, "null": True}),
    "revoked_at": (Timestamptz, {"default": None, "null": True}),
}


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)
    for class_name, tablename, name, (column_class, params) in NEW_COLUMNS:
        manager.add_column(
            table_class_name=class_name,
            tablename=tablename,
            column_name=name,
            db_column_name=name,
            column_class_name=column_class.__name__,
            column_class=column_class,
            params=params,
        )
    manager.add_table(class_name="RefreshToken", tablename="userio_refresh_token")
    for name, (column_class, params) in REFRESH_TOKEN.items():
        manager.add_column(
            table_class_name="RefreshToken",
            tablename="userio_refresh_token",
            column_name=name,
            db_column_name=params.get("db_column_name") or name,
            column_class_name=column_class.__name__,
            column_class=column_class,
            params=params,
        )
    return manager
