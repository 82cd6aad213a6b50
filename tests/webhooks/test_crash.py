"""At least once through a crash: a process killed right after a user change committed, before anything was
delivered, delivers it after the restart (real processes on one SQLite file, a real receiver on loopback)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import until
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.slow


PRELUDE = """
import asyncio, os, signal, sys
from litestar_userio import UserIOConfig, WebhookConfig
from litestar_userio.services import Services
from litestar_userio.webhooks.webhook_schemas import WebhookSpec

database, origin = sys.argv[1], sys.argv[2]
config = UserIOConfig(
    database_url=f"sqlite:///{database}",
    migrate_on_startup=True,
    webhooks=WebhookConfig(allowed_private_origins=(origin,)),
)
"""

COMMIT_THEN_DIE = (
    PRELUDE
    + """
async def main():
    services = await Services.start(config)
    await services.projects.create("crash", ["crash.example.test"], None)
    await services.webhooks.replace("crash", [WebhookSpec(f"{origin}/hook", ["user.created"])])
    project = await services.projects.get("crash")
    await services.user_admin.create(project, b'{"sub": "survivor", "email": "survivor@example.com"}')
    print("committed", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # before the loop runs the consumer or the delivery job

asyncio.run(main())
"""
)

RESTART = (
    PRELUDE
    + """
async def main():
    services = await Services.start(config)
    print("started", flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""
)


async def run(script: str, database: str, *args: str) -> asyncio.subprocess.Process:
    """`script` in the database's folder: the default export directory (`userio-exports/`) goes there too."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        textwrap.dedent(script),
        database,
        *args,
        cwd=Path(database).parent,
        stdout=subprocess.PIPE,
    )


async def test_a_change_committed_before_a_crash_is_delivered_after_the_restart(tmp_path):
    receiver = Receiver()
    await receiver.start()
    database = str(tmp_path / "crash.sqlite3")
    try:
        dying = await run(COMMIT_THEN_DIE, database, receiver.origin)
        out, _ = await asyncio.wait_for(dying.communicate(), 120)
        delivered_before = len(receiver.received)

        restarted = await run(RESTART, database, receiver.origin)
        try:
            await until(lambda: len(receiver.received) == 1, "the delivery after the restart", timeout=60)
        finally:
            restarted.kill()
            await restarted.wait()
    finally:
        await receiver.close()

    assert b"committed" in out and dying.returncode == -9
    assert delivered_before == 0
    event = receiver.received[0].json()
    assert (event["type"], event["context"]["user_id"]) == ("user.created", "survivor")
