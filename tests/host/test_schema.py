"""PostgreSQL: the plugin's tables and its migration bookkeeping live in their own schema (DECISIONS 11), beside a
host's own tables, a `migration` table of its own included; an older deployment's tables move there once.

PostgreSQL only: SQLite has no schemas (the plugin's database is its own file)."""

from __future__ import annotations

import asyncpg
import pytest

from litestar_userio.db.engine import Database
from litestar_userio.db.migrate import migrate
from litestar_userio.db.migrations import migration_ids
from litestar_userio.db.tables import TABLES
from litestar_userio.projects.project_service import ProjectService
from userio_core.clock import SystemClock

OURS = {table._meta.tablename for table in TABLES}


async def tables_by_schema(conn: asyncpg.Connection) -> dict[str, set[str]]:
    rows = await conn.fetch(
        "SELECT table_schema, table_name FROM information_schema.tables"
        " WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
    )
    found: dict[str, set[str]] = {}
    for row in rows:
        found.setdefault(row["table_schema"], set()).add(row["table_name"])
    return found


async def migrated(url: str, **options) -> str:
    db = Database(url, **options)
    await db.start()
    try:
        return await migrate(db)
    finally:
        await db.close()


async def test_migrate_beside_a_host_migration_table_touches_nothing_of_the_host(database_url):
    host = await asyncpg.connect(database_url)
    try:
        await host.execute("CREATE TABLE migration (version text PRIMARY KEY, applied boolean NOT NULL)")
        await host.execute("INSERT INTO migration VALUES ('0001_initial', true)")

        first = await migrated(database_url)
        again = await migrated(database_url)

        tables = await tables_by_schema(host)
        host_rows = [tuple(r) for r in await host.fetch("SELECT * FROM public.migration")]
        ours = await host.fetch("SELECT name, app_name FROM userio.migration")
    finally:
        await host.close()
    assert "No migrations need to be run" not in first
    assert again.endswith("No migrations need to be run\n")
    assert tables["public"] == {"migration"}
    assert tables["userio"] == OURS | {"migration"}
    assert host_rows == [("0001_initial", True)]
    assert {r["name"] for r in ours} == set(migration_ids())


async def test_an_existing_deployment_in_public_moves_into_its_schema_once_with_nothing_lost(database_url):
    await migrated(database_url, schema="public")  # a deployment made before `database_schema`
    old = Database(database_url, schema="public")
    await old.start()
    await ProjectService(old, SystemClock()).create("p1", ["p1.example.test"])
    await old.close()
    host = await asyncpg.connect(database_url)
    try:
        await host.execute("INSERT INTO public.migration (name, app_name) VALUES ('2024_host', 'host_app')")

        report = await migrated(database_url)
        again = await migrated(database_url)

        tables = await tables_by_schema(host)
        public_migrations = [r["app_name"] for r in await host.fetch("SELECT app_name FROM public.migration")]
        functions = await host.fetch(
            "SELECT n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE p.proname LIKE 'userio%cascade'"
        )
    finally:
        await host.close()
    new = Database(database_url)
    await new.start()
    try:
        project = await ProjectService(new, SystemClock()).by_host("p1.example.test")
    finally:
        await new.close()
    assert f"moved {len(OURS)} tables" in report
    assert again.endswith("No migrations need to be run\n")
    assert tables["public"] == {"migration"}
    assert tables["userio"] == OURS | {"migration"}
    assert public_migrations == ["host_app"]
    assert functions and {r["nspname"] for r in functions} == {"userio"}
    assert project is not None and project.id == "p1"


async def test_a_schema_of_another_name_is_used(database_url):
    await migrated(database_url, schema="auth_users")

    host = await asyncpg.connect(database_url)
    try:
        tables = await tables_by_schema(host)
    finally:
        await host.close()
    assert tables == {"auth_users": OURS | {"migration"}}


def test_a_schema_name_that_is_not_a_plain_sql_name_is_refused_in_one_line():
    with pytest.raises(ValueError, match="database_schema must be a lower-case SQL name"):
        Database("postgresql://localhost/x", schema='x"; DROP TABLE y')
