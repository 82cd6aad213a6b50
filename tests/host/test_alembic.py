"""A host's Alembic autogenerate, run for real against its own model beside the plugin's tables on PostgreSQL,
proposes no operation on ours (`litestar_userio.alembic.include_object`)."""

from __future__ import annotations

from typing import Any

import pytest
from alembic.autogenerate import produce_migrations
from alembic.migration import MigrationContext
from sqlalchemy import Column, Integer, MetaData, String, Table, Uuid
from sqlalchemy.ext.asyncio import create_async_engine

from litestar_userio import include_object
from litestar_userio.alembic import userio_objects_excluded
from litestar_userio.db.engine import Database
from litestar_userio.db.migrate import migrate


def host_metadata(own_migration_table: bool = True) -> MetaData:
    """The host's model: litestar-fullstack's `user_account`, and a `migration` table of its own."""
    metadata = MetaData()
    Table("user_account", metadata, Column("id", Uuid, primary_key=True), Column("email", String(320)))
    if own_migration_table:
        Table("migration", metadata, Column("id", Integer, primary_key=True), Column("version", String(64)))
    return metadata


async def autogenerate(url: str, own_migration_table: bool = True, **options: Any) -> list[str]:
    """What `alembic revision --autogenerate` would write: one line per proposed operation."""
    engine = create_async_engine(url.replace("postgresql://", "postgresql+asyncpg://"))
    metadata = host_metadata(own_migration_table)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(metadata.create_all)  # the host's tables are current: only a diff on ours shows

            def diff(sync_conn: Any) -> list[str]:
                context = MigrationContext.configure(sync_conn, opts={"target_metadata": metadata, **options})
                return [repr(op) for op in produce_migrations(context, metadata).upgrade_ops.as_diffs()]

            return await conn.run_sync(diff)
    finally:
        await engine.dispose()


async def migrated(url: str, schema: str = "userio") -> None:
    db = Database(url, schema=schema)
    await db.start()
    try:
        await migrate(db)
    finally:
        await db.close()


async def test_autogenerate_of_the_default_schema_never_sees_the_plugin(database_url):
    await migrated(database_url)

    assert await autogenerate(database_url) == []


async def test_autogenerate_over_every_schema_proposes_nothing_on_ours_with_include_object(database_url):
    await migrated(database_url)

    without = await autogenerate(database_url, include_schemas=True)
    with_helper = await autogenerate(database_url, include_schemas=True, include_object=include_object)

    assert any("userio_user" in op for op in without), "without the helper Alembic would drop our tables"
    assert with_helper == []


async def test_a_schema_of_another_name_is_left_out_by_its_own_helper(database_url):
    await migrated(database_url, schema="auth_users")

    proposed = await autogenerate(
        database_url, include_schemas=True, include_object=userio_objects_excluded("auth_users")
    )

    assert proposed == []


@pytest.mark.parametrize("include_schemas", [False, True])
async def test_a_deployment_not_yet_moved_out_of_public_is_left_alone(database_url, include_schemas):
    await migrated(database_url, schema="public")  # before `database_schema`: our tables beside the host's

    proposed = await autogenerate(
        database_url, own_migration_table=False, include_schemas=include_schemas, include_object=include_object
    )

    assert proposed == []
