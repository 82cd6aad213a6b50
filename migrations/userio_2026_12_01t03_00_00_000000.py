"""The deployment's own id (issue 46): one row (`singleton` = `this`), random, written once by the first process.

Jobs carry it, so a worker that shares a Redis queue with another deployment tells their jobs apart and leaves
the other's for its owner. Columns as `litestar_userio/db/tables.py` declares them (frozen here).
"""

from typing import Any

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Varchar

ID = "2026-12-01T03:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "the deployment's id"

COLUMNS: dict[str, tuple[type, dict[str, Any]]] = {
    "singleton": (Varchar, {"length": 8, "primary_key": True}),
    "id": (Varchar, {"length": 36}),
}


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="userio", description=DESCRIPTION)
    manager.add_table(class_name="Deployment", tablename="userio_deployment")
    for name, (column_class, params) in COLUMNS.items():
        manager.add_column(
            table_class_name="Deployment",
            tablename="userio_deployment",
            column_name=name,
            db_column_name=name,
            column_class_name=column_class.__name__,
            column_class=column_class,
            params=params,
        )
    return manager
