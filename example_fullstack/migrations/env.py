"""The app's Alembic environment; after the adoption it compares every schema and leaves the plugin's out."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import context
from sqlalchemy.ext.asyncio import create_async_engine

from example_fullstack import settings
from example_fullstack.models import metadata
from litestar_userio.alembic import include_object


def run(connection: Any) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        include_schemas=True,
        include_object=include_object,  # docs/adoption.md step 2: nothing in the `userio` schema
    )
    with context.begin_transaction():
        context.run_migrations()


async def main() -> None:
    engine = create_async_engine(settings.DATABASE_URL)
    async with engine.connect() as connection:
        await connection.run_sync(run)
        await connection.commit()
    await engine.dispose()


asyncio.run(main())
