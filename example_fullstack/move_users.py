"""The one-off move of the app's users into the plugin (`docs/adoption.md` step 3), run once the plugin's
schema is migrated: each user keeps its id (`sub`) and its Argon2 hash, so the app's other rows still point at
it. Upserting, so it runs again safely for the users who signed up meanwhile.

    DATABASE_URL=... python -m example_fullstack.move_users
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
from sqlalchemy import select
from sqlalchemy.ext.asyncio import create_async_engine

from example_fullstack import settings
from example_fullstack.app import userio_config
from example_fullstack.models import User
from litestar_userio.imports.import_schemas import ImportRequest
from litestar_userio.queue.inprocess import InProcessQueue
from litestar_userio.services import Services


async def export_records() -> list[dict[str, Any]]:
    """The app's users as import records: its id as `sub`, its PHC string as it is stored."""
    engine = create_async_engine(settings.DATABASE_URL)
    try:
        async with engine.connect() as connection:
            rows = (await connection.execute(select(User.id, User.email, User.hashed_password))).all()
    finally:
        await engine.dispose()
    return [
        {
            "sub": str(user_id),
            "email": email,
            "email_verified": True,
            "password": {"type": "argon2", "password_hash": hashed},
        }
        for user_id, email, hashed in rows
    ]


async def move() -> dict[str, Any]:
    """Import the app's users into the plugin's project (created with its client on the first run)."""
    records = await export_records()
    services = await Services.start(userio_config())  # the in-process runner applies the chunks here
    try:
        project = await services.projects.get(settings.USERIO_PROJECT)
        if project is None:
            project = await services.projects.create(settings.USERIO_PROJECT, ["fullstack.localhost"])
            await services.tokens.applications.create(project.id, settings.USERIO_CLIENT, issue_jwt_access_token=False)
        body = msgspec.json.encode({"identifier": "email", "records": records, "upsert": True})
        task = await services.imports.create_task(project, msgspec.json.decode(body, type=ImportRequest))
        if isinstance(services.queue, InProcessQueue):  # with Redis, the `userio worker` processes apply them
            await services.queue.join()
        status: dict[str, Any] = json.loads(await services.imports.status(project.id, task.id))
        return status
    finally:
        await services.close()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(move())["summary"]))
