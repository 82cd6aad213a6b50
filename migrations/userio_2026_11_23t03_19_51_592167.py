"""Token hooks: on_error per hook, the fetch allowlist and version number, versions, encrypted secrets, the run log."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.base import OnDelete
from piccolo.columns.base import OnUpdate
from piccolo.columns.column_types import DoublePrecision
from piccolo.columns.column_types import ForeignKey
from piccolo.columns.column_types import Integer
from piccolo.columns.column_types import Serial
from piccolo.columns.column_types import Text
from piccolo.columns.column_types import Timestamptz
from piccolo.columns.column_types import Varchar
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.columns.indexes import IndexMethod
from piccolo.table import Table


class Project(Table, tablename="userio_project", schema=None):
    id = Varchar(
        length=64,
        default="",
        null=False,
        primary_key=True,
        unique=False,
        index=False,
        index_method=IndexMethod.btree,
        choices=None,
        db_column_name=None,
        secret=False,
    )


ID = "2026-11-23T03:19:51:592167"
VERSION = "1.38.0"
DESCRIPTION = "hook settings, versions, secrets, run log, on_error"


async def forwards():
    manager = MigrationManager(
        migration_id=ID, app_name="userio", description=DESCRIPTION
    )

    manager.add_table(
        class_name="HookVersion",
        tablename="userio_hook_version",
        schema=None,
        columns=None,
    )

    manager.add_table(
        class_name="HookRunRecord",
        tablename="userio_hook_run",
        schema=None,
        columns=None,
    )

    manager.add_table(
        class_name="HookSecret",
        tablename="userio_hook_secret",
        schema=None,
        columns=None,
    )

    manager.add_table(
        class_name="HookSettings",
        tablename="userio_hook_settings",
        schema=None,
        columns=None,
    )

    manager.add_column(
        table_class_name="HookVersion",
        tablename="userio_hook_version",
        column_name="id",
        db_column_name="id",
        column_class_name="Serial",
        column_class=Serial,
        params={
            "null": False,
            "primary_key": True,
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
        table_class_name="HookVersion",
        tablename="userio_hook_version",
        column_name="project",
        db_column_name="project_id",
        column_class_name="ForeignKey",
        column_class=ForeignKey,
        params={
            "references": Project,
            "on_delete": OnDelete.cascade,
            "on_update": OnUpdate.cascade,
            "target_column": None,
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": "project_id",
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="HookVersion",
        tablename="userio_hook_version",
        column_name="version",
        db_column_name="version",
        column_class_name="Integer",
        column_class=Integer,
        params={
            "default": 0,
            "null": False,
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
        table_class_name="HookVersion",
        tablename="userio_hook_version",
        column_name="created_at",
        db_column_name="created_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": TimestamptzNow(),
            "null": False,
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
        table_class_name="HookVersion",
        tablename="userio_hook_version",
        column_name="actor_kid",
        db_column_name="actor_kid",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 255,
            "default": "",
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
        table_class_name="HookVersion",
        tablename="userio_hook_version",
        column_name="actor_sub",
        db_column_name="actor_sub",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 255,
            "default": "",
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
        table_class_name="HookVersion",
        tablename="userio_hook_version",
        column_name="body",
        db_column_name="body",
        column_class_name="Text",
        column_class=Text,
        params={
            "default": "",
            "null": False,
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
        table_class_name="HookRunRecord",
        tablename="userio_hook_run",
        column_name="id",
        db_column_name="id",
        column_class_name="Serial",
        column_class=Serial,
        params={
            "null": False,
            "primary_key": True,
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
        table_class_name="HookRunRecord",
        tablename="userio_hook_run",
        column_name="project",
        db_column_name="project_id",
        column_class_name="ForeignKey",
        column_class=ForeignKey,
        params={
            "references": Project,
            "on_delete": OnDelete.cascade,
            "on_update": OnUpdate.cascade,
            "target_column": None,
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": "project_id",
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="HookRunRecord",
        tablename="userio_hook_run",
        column_name="event",
        db_column_name="event",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 64,
            "default": "",
            "null": False,
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
        table_class_name="HookRunRecord",
        tablename="userio_hook_run",
        column_name="hook_index",
        db_column_name="hook_index",
        column_class_name="Integer",
        column_class=Integer,
        params={
            "default": 0,
            "null": False,
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
        table_class_name="HookRunRecord",
        tablename="userio_hook_run",
        column_name="started_at",
        db_column_name="started_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": TimestamptzNow(),
            "null": False,
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
        table_class_name="HookRunRecord",
        tablename="userio_hook_run",
        column_name="duration_ms",
        db_column_name="duration_ms",
        column_class_name="DoublePrecision",
        column_class=DoublePrecision,
        params={
            "default": 0.0,
            "null": False,
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
        table_class_name="HookRunRecord",
        tablename="userio_hook_run",
        column_name="outcome",
        db_column_name="outcome",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 16,
            "default": "",
            "null": False,
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
        table_class_name="HookRunRecord",
        tablename="userio_hook_run",
        column_name="error_kind",
        db_column_name="error_kind",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 32,
            "default": "",
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
        table_class_name="HookRunRecord",
        tablename="userio_hook_run",
        column_name="console",
        db_column_name="console",
        column_class_name="Text",
        column_class=Text,
        params={
            "default": "[]",
            "null": False,
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
        table_class_name="HookRunRecord",
        tablename="userio_hook_run",
        column_name="claims_added",
        db_column_name="claims_added",
        column_class_name="Text",
        column_class=Text,
        params={
            "default": "[]",
            "null": False,
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
        table_class_name="HookRunRecord",
        tablename="userio_hook_run",
        column_name="sampled_rate",
        db_column_name="sampled_rate",
        column_class_name="DoublePrecision",
        column_class=DoublePrecision,
        params={
            "default": 1.0,
            "null": False,
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
        table_class_name="HookSecret",
        tablename="userio_hook_secret",
        column_name="id",
        db_column_name="id",
        column_class_name="Serial",
        column_class=Serial,
        params={
            "null": False,
            "primary_key": True,
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
        table_class_name="HookSecret",
        tablename="userio_hook_secret",
        column_name="project",
        db_column_name="project_id",
        column_class_name="ForeignKey",
        column_class=ForeignKey,
        params={
            "references": Project,
            "on_delete": OnDelete.cascade,
            "on_update": OnUpdate.cascade,
            "target_column": None,
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": "project_id",
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="HookSecret",
        tablename="userio_hook_secret",
        column_name="name",
        db_column_name="name",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 128,
            "default": "",
            "null": False,
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
        table_class_name="HookSecret",
        tablename="userio_hook_secret",
        column_name="ciphertext",
        db_column_name="ciphertext",
        column_class_name="Text",
        column_class=Text,
        params={
            "default": "",
            "null": False,
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
        table_class_name="HookSecret",
        tablename="userio_hook_secret",
        column_name="updated_at",
        db_column_name="updated_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": TimestamptzNow(),
            "null": False,
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
        table_class_name="HookSettings",
        tablename="userio_hook_settings",
        column_name="id",
        db_column_name="id",
        column_class_name="Serial",
        column_class=Serial,
        params={
            "null": False,
            "primary_key": True,
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
        table_class_name="HookSettings",
        tablename="userio_hook_settings",
        column_name="project",
        db_column_name="project_id",
        column_class_name="ForeignKey",
        column_class=ForeignKey,
        params={
            "references": Project,
            "on_delete": OnDelete.cascade,
            "on_update": OnUpdate.cascade,
            "target_column": None,
            "null": False,
            "primary_key": False,
            "unique": True,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": "project_id",
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="HookSettings",
        tablename="userio_hook_settings",
        column_name="fetch_allowlist",
        db_column_name="fetch_allowlist",
        column_class_name="Text",
        column_class=Text,
        params={
            "default": "[]",
            "null": False,
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
        table_class_name="HookSettings",
        tablename="userio_hook_settings",
        column_name="version",
        db_column_name="version",
        column_class_name="Integer",
        column_class=Integer,
        params={
            "default": 0,
            "null": False,
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
        table_class_name="HookSettings",
        tablename="userio_hook_settings",
        column_name="updated_at",
        db_column_name="updated_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": TimestamptzNow(),
            "null": False,
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
        table_class_name="Hook",
        tablename="userio_hook",
        column_name="on_error",
        db_column_name="on_error",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 16,
            "default": "deny",
            "null": False,
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
