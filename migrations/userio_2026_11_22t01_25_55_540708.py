from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Varchar
from piccolo.columns.indexes import IndexMethod

ID = "2026-11-22T01:25:55:540708"
VERSION = "1.38.0"
DESCRIPTION = "import idempotency keys"


async def forwards():
    manager = MigrationManager(
        migration_id=ID, app_name="userio", description=DESCRIPTION
    )

    manager.add_column(
        table_class_name="ImportTask",
        tablename="userio_import_task",
        column_name="idempotency_key",
        db_column_name="idempotency_key",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 255,
            "default": None,
            "null": True,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="ImportTask",
        tablename="userio_import_task",
        column_name="request_sha256",
        db_column_name="request_sha256",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 64,
            "default": None,
            "null": True,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    return manager
