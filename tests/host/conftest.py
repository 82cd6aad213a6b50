"""Fixtures of the host-side tests."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from tests.conftest import PG_SERVER


@pytest.fixture
async def database_url(postgres_url) -> AsyncIterator[str]:
    """An empty database of its own (the session's one is migrated already)."""
    name = f"userio_schema_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(f"{PG_SERVER}/postgres")
    await admin.execute(f"CREATE DATABASE {name}")
    try:
        yield f"{PG_SERVER}/{name}"
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()
