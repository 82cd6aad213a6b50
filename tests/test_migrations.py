"""Hosts with their own piccolo_conf.py run the plugin's migrations through Piccolo's CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from litestar_userio.db.engine import Database
from litestar_userio.db.migrate import migrate

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
