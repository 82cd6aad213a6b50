"""The wheel ships the migrations: a clean venv migrates an empty database from the installed package alone."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

MIGRATE = """
import asyncio, sys
import litestar_userio
from litestar_userio.db.engine import Database
from litestar_userio.db.migrate import migrate
from litestar_userio.db.piccolo_app import migrations_folder

async def main(url):
    db = Database(url)
    await db.start()
    await migrate(db)
    async with db.reader() as tx:
        rows = await tx.fetch("SELECT COUNT(*) AS n FROM userio_user")
    await db.close()
    print(litestar_userio.__file__)
    print(migrations_folder())
    print(rows[0]["n"])

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("litestar_userio-*.whl")
    return wheel


@pytest.fixture(scope="module")
def clean_venv(wheel, tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--no-compile", str(wheel)],
        check=True,
        capture_output=True,
        timeout=900,
    )
    return venv


def test_wheel_contains_the_migrations(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n for n in names if n.startswith("litestar_userio/_migrations/") and n.endswith(".py"))
    source = sorted(p.name for p in (ROOT / "migrations").glob("*.py"))

    assert [Path(n).name for n in shipped] == source


def test_wheel_ships_the_hook_workers_javascript(wheel):
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("litestar_userio/hooks/worker_setup.js").decode()

    assert shipped == (ROOT / "litestar_userio" / "hooks" / "worker_setup.js").read_text()


def test_wheel_ships_the_built_console_and_the_hook_types(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    static = ROOT / "litestar_userio" / "console" / "static"
    built = {
        f"litestar_userio/console/static/{p.relative_to(static).as_posix()}" for p in static.rglob("*") if p.is_file()
    }

    assert built and built <= names
    assert "litestar_userio/console/hooks.d.ts" in names
    assert not any(n.startswith("console/") or "node_modules" in n for n in names)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_clean_venv_migrates_an_empty_database_from_the_wheel(clean_venv, engine, tmp_path, request):
    url = f"sqlite:///{tmp_path / 'empty.sqlite3'}" if engine == "sqlite" else _fresh_postgres(request)

    result = subprocess.run(
        [str(clean_venv / "bin" / "python"), "-c", MIGRATE, url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    package_file, folder, count = result.stdout.split()
    assert str(clean_venv) in package_file
    assert folder.startswith(str(clean_venv)) and folder.endswith("_migrations")
    assert count == "0"


def _fresh_postgres(request) -> str:
    import asyncio
    import uuid

    import asyncpg

    from tests.conftest import PG_SERVER

    request.getfixturevalue("postgres_url")  # skips or fails like every PostgreSQL test
    name = f"userio_wheel_{uuid.uuid4().hex[:8]}"

    async def create() -> None:
        conn = await asyncpg.connect(f"{PG_SERVER}/postgres")
        await conn.execute(f"CREATE DATABASE {name}")
        await conn.close()

    async def drop() -> None:
        conn = await asyncpg.connect(f"{PG_SERVER}/postgres")
        await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await conn.close()

    asyncio.run(create())
    request.addfinalizer(lambda: asyncio.run(drop()))
    return f"{PG_SERVER}/{name}"
