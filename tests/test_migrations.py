"""Hosts with their own piccolo_conf.py run the plugin's migrations through Piccolo's CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from piccolo.apps.migrations.tables import Migration

from litestar_userio.db.engine import Database
from litestar_userio.db.migrate import migrate
from litestar_userio.db.migrations import migration_ids

pytestmark = pytest.mark.engine

ROOT = Path(__file__).resolve().parents[1]


async def test_host_app_registry_runs_the_plugin_migrations(tmp_path):
    database = tmp_path / "host.sqlite3"
    (tmp_path / "host_conf.py").write_text(
        "from piccolo.conf.apps import AppRegistry\n"
        "from piccolo.engine.sqlite import SQLiteEngine\n"
        f"DB = SQLiteEngine(path={str(database)!r})\n"
        'APP_REGISTRY = AppRegistry(apps=["litestar_userio.db.piccolo_app"])\n'
    )
    env = {**os.environ, "PICCOLO_CONF": "host_conf", "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}

    result = subprocess.run(
        [str(Path(sys.executable).parent / "piccolo"), "migrations", "forwards", "userio"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    db = Database(f"sqlite:///{database}")
    await db.start()
    try:
        report = await migrate(db)
        async with db.reader() as tx:
            tables = {r["name"] for r in await tx.fetch("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        await db.close()
    assert "No migrations need to be run" in report
    assert {"userio_user", "userio_identity", "userio_import_task", "userio_import_chunk"} <= tables


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_a_current_schema_is_told_without_loading_piccolos_migration_runner(request, engine):
    url = request.getfixturevalue(f"{engine}_url")
    script = (
        "import asyncio, sys\n"
        "from litestar_userio.db.engine import Database\n"
        "from litestar_userio.db.migrate import migrate\n"
        "async def main():\n"
        f"    db = Database({url!r})\n"
        "    await db.start()\n"
        "    print(await migrate(db), end='')\n"
        "    await db.close()\n"
        "asyncio.run(main())\n"
        "print('runner loaded' if 'piccolo.apps.migrations.commands.forwards' in sys.modules else 'runner not loaded')\n"
    )

    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-2:] == ["🏁 No migrations need to be run", "runner not loaded"]
    assert f"👍 {len(migration_ids())} migrations already complete" in result.stdout


async def test_a_database_whose_migration_table_lacks_ours_is_migrated(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'half.sqlite3'}")
    await db.start()
    try:
        db.bind()
        await Migration.create_table().run()  # as a host's own Piccolo apps leave it, before ours ran

        report = await migrate(db)
        again = await migrate(db)
        async with db.reader() as tx:
            tables = {r["name"] for r in await tx.fetch("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        await db.close()
    assert "No migrations need to be run" not in report
    assert {"userio_user", "userio_identity", "userio_import_task"} <= tables
    assert again == f"👍 {len(migration_ids())} migrations already complete\n🏁 No migrations need to be run\n"
