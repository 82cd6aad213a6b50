"""Hosts with their own piccolo_conf.py run the plugin's migrations through Piccolo's CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from piccolo.apps.migrations.tables import Migration

from litestar_userio.accounts.sign_in_service import UserService
from litestar_userio.db.engine import Database
from litestar_userio.db.migrate import migrate
from litestar_userio.db.migrations import migration_ids
from litestar_userio.errors import WriteConflict
from tests.conftest import own_postgres_database

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


UNIQUE_KEY_MIGRATION = "2026-12-01T02:00:00:000000"
ONE_INDEX_MIGRATION = "2026-12-02T01:00:00:000000"


@asynccontextmanager
async def _fresh_database(engine: str, tmp_path: Path) -> AsyncIterator[Database]:
    if engine == "sqlite":
        db = Database(f"sqlite:///{tmp_path / 'clash.sqlite3'}")
        await db.start()
        try:
            await migrate(db)
            yield db
        finally:
            await db.close()
        return
    async with own_postgres_database("userio_clash") as url:
        db = Database(url)
        await db.start()
        try:
            yield db
        finally:
            await db.close()


async def _back_and_forth(db: Database, migration_id: str, state: Any) -> tuple[Any, Any, Any]:
    """`state()` as migrated, after Piccolo's `migrations backwards` to `migration_id` (a host's rollback), and
    after migrating forwards again."""
    from piccolo.apps.migrations.commands.backwards import run_backwards

    from litestar_userio.db.migrate import _piccolo_conf

    forward = await state()
    with _piccolo_conf(db):
        result = await run_backwards("userio", migration_id=migration_id, auto_agree=True)
    assert result.success, result.message
    back = await state()
    await migrate(db)
    return forward, back, await state()


async def _identity_indexes(tx: Any) -> set[str]:
    postgres = tx.dialect == "postgres"
    return {
        r["name"]
        for r in await tx.fetch(
            "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'userio_identity'"
            if postgres
            else "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'userio_identity'"
        )
    }


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
async def test_the_login_key_migration_keeps_a_clash_it_finds_and_never_fails(tmp_path, engine):
    """Two users holding one login id as email and username (imported before the rule) survive the migrations:
    the earlier keeps the key, the later's is joined with its kind; sign-in picks the earlier; the one index holds
    from then on, for a second user of a key and for a second value of one kind."""
    now = datetime.now(UTC)
    async with _fresh_database(engine, tmp_path) as db:
        async with db.transaction() as tx:  # back to the schema before both migrations, with a clash in it
            await tx.execute("DROP INDEX userio_identity_unique_key")
            await tx.execute("ALTER TABLE userio_identity DROP COLUMN unique_key")
            await tx.execute(
                "CREATE UNIQUE INDEX userio_identity_login_id"
                " ON userio_identity (project_id, login_id_key, normalized_value)"
            )
            for name in (UNIQUE_KEY_MIGRATION, ONE_INDEX_MIGRATION):
                await tx.execute("DELETE FROM migration WHERE name = $1", name)
            await tx.execute("INSERT INTO userio_project (id, created_at, settings) VALUES ('p1', $1, '{}')", now)
            for user_id, created in (("first", now - timedelta(days=2)), ("second", now - timedelta(days=1))):
                await tx.execute(
                    "INSERT INTO userio_user (id, project_id, created_at, updated_at, is_disabled,"
                    " standard_attributes, custom_attributes) VALUES ($1, 'p1', $2, $2, FALSE, '{}', '{}')",
                    user_id,
                    created,
                )
            for identity, user_id, key, value, created in (
                ("i1", "first", "email", "ada@example.com", now - timedelta(days=2)),
                ("i2", "second", "username", "ada@example.com", now - timedelta(days=1)),
                ("i3", "second", "email", "bob@example.com", now - timedelta(days=1)),
                ("i4", "second", "phone", "+14155550100", now - timedelta(days=1)),
            ):
                await tx.execute(
                    "INSERT INTO userio_identity (id, project_id, user_id, login_id_key, login_id_type,"
                    " original_value, normalized_value, created_at) VALUES ($1, 'p1', $2, $3, $3, $4, $4, $5)",
                    identity,
                    user_id,
                    key,
                    value,
                    created,
                )

        report = await migrate(db)

        async with db.reader() as tx:
            keys = {r["id"]: r["unique_key"] for r in await tx.fetch("SELECT id, unique_key FROM userio_identity")}
        assert "No migrations need to be run" not in report
        assert keys == {
            "i1": "ada@example.com",
            "i2": "ada@example.com\x1fusername",
            "i3": "bob@example.com",
            "i4": "+14155550100",
        }
        async with db.reader() as tx:
            indexes = {
                r["name"]
                for r in await tx.fetch(
                    "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'userio_identity'"
                    if engine == "postgres"
                    else "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'userio_identity'"
                )
            }
        assert "userio_identity_unique_key" in indexes and "userio_identity_login_id" not in indexes
        for identity, key, value, unique_key in (
            ("i5", "username", "bob", "+14155550100"),  # a second user of a key
            ("i6", "username", "ada@example.com", "ada@example.com\x1fusername"),  # one value of one kind twice
        ):
            with pytest.raises(WriteConflict):
                async with db.transaction() as tx:
                    await tx.execute(
                        "INSERT INTO userio_identity (id, project_id, user_id, login_id_key, login_id_type,"
                        " original_value, normalized_value, created_at, unique_key)"
                        " VALUES ($1, 'p1', 'first', $2, $2, $3, $3, $4, $5)",
                        identity,
                        key,
                        value,
                        now,
                        unique_key,
                    )
        users = UserService(db)
        try:
            found = await users.find_password("p1", "ada@example.com")
        finally:
            users.close()
        assert found == ("first", None)


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
async def test_the_one_index_migration_goes_backwards_and_forwards_again(tmp_path, engine):
    """Piccolo's `migrations backwards` (a host's rollback) undoes 2026-12-02T01: the joined keys are NULL again
    and the per-kind index is back; forwards once more, the keys are joined again and sign-in still finds the user."""
    now = datetime.now(UTC)
    async with _fresh_database(engine, tmp_path) as db:
        if engine == "postgres":
            await migrate(db)

        async def state() -> tuple[dict[str, str | None], set[str]]:
            async with db.reader() as tx:
                keys = {r["id"]: r["unique_key"] for r in await tx.fetch("SELECT id, unique_key FROM userio_identity")}
                indexes = await _identity_indexes(tx)
            return keys, indexes & {"userio_identity_unique_key", "userio_identity_login_id"}

        async with db.transaction() as tx:
            await tx.execute("INSERT INTO userio_project (id, created_at, settings) VALUES ('p1', $1, '{}')", now)
            await tx.execute(
                "INSERT INTO userio_user (id, project_id, created_at, updated_at, is_disabled,"
                " standard_attributes, custom_attributes) VALUES ('u1', 'p1', $1, $1, FALSE, '{}', '{}')",
                now,
            )
            for identity, key, unique_key in (
                ("i1", "email", "ada@example.com"),
                ("i2", "username", "ada@example.com\x1fusername"),
            ):
                await tx.execute(
                    "INSERT INTO userio_identity (id, project_id, user_id, login_id_key, login_id_type,"
                    " original_value, normalized_value, created_at, unique_key)"
                    " VALUES ($1, 'p1', 'u1', $2, $2, 'ada@example.com', 'ada@example.com', $3, $4)",
                    identity,
                    key,
                    now,
                    unique_key,
                )
        forward, back, again = await _back_and_forth(db, ONE_INDEX_MIGRATION, state)
        users = UserService(db)
        try:
            found = await users.find_password("p1", "ada@example.com")
        finally:
            users.close()

    assert forward == ({"i1": "ada@example.com", "i2": "ada@example.com\x1fusername"}, {"userio_identity_unique_key"})
    assert back == (
        {"i1": "ada@example.com", "i2": None},
        {"userio_identity_unique_key", "userio_identity_login_id"},
    )
    assert again == forward
    assert found == ("u1", None)


LOGIN_ID_INDEXES_MIGRATION = "2026-12-02T02:00:00:000000"


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
async def test_the_login_id_search_index_goes_backwards_and_comes_back(tmp_path, engine):
    """Backwards, 2026-12-02T02 drops the `sw` B-tree; forwards again, it is back. It makes no trigram index."""
    async with _fresh_database(engine, tmp_path) as db:
        if engine == "postgres":
            await migrate(db)

        async def state() -> set[str]:
            async with db.reader() as tx:
                return await _identity_indexes(tx) & {"userio_identity_folded", "userio_identity_trigrams"}

        forward, back, again = await _back_and_forth(db, LOGIN_ID_INDEXES_MIGRATION, state)

    assert forward == {"userio_identity_folded"}
    assert back == set()
    assert again == forward


async def test_without_a_trigram_index_co_and_ew_answer_by_reading_the_identities():
    """The migrations make no trigram index (docs/scim.md: an operator's choice): the `sw` index is there, and
    `co`/`ew` answer by reading the identities, their wildcards plain characters."""
    import asyncpg

    from litestar_userio.scim.filters import USER_ATTRIBUTES, USER_SCHEMA, FilterLimits, parse_filter
    from litestar_userio.users.user_repository import UserRepository
    from tests.conftest import PG_SERVER

    suffix = uuid.uuid4().hex[:10]
    name = f"userio_no_trgm_{suffix}"
    admin = await asyncpg.connect(f"{PG_SERVER}/postgres", timeout=5)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
        db = Database(f"{PG_SERVER}/{name}")
        await db.start()
        try:
            await migrate(db)
            now = datetime.now(UTC)
            async with db.transaction() as tx:
                await tx.execute("INSERT INTO userio_project (id, created_at, settings) VALUES ('p1', $1, '{}')", now)
                for user, value in (("u1", "ada_x@example.com"), ("u2", "adaxx@example.com")):
                    await tx.execute(
                        "INSERT INTO userio_user (id, project_id, created_at, updated_at, is_disabled,"
                        " standard_attributes, custom_attributes) VALUES ($1, 'p1', $2, $2, FALSE, '{}', '{}')",
                        user,
                        now,
                    )
                    await tx.execute(
                        "INSERT INTO userio_identity (id, project_id, user_id, login_id_key, login_id_type,"
                        " original_value, normalized_value, created_at, unique_key)"
                        " VALUES ($1, 'p1', $1, 'username', 'username', $2, $2, $3, $2)",
                        user,
                        value,
                        now,
                    )
            counts = {}
            async with db.reader() as tx:
                indexes = await _identity_indexes(tx)
                for text in ('userName co "A_X"', 'userName ew "X@EXAMPLE.COM"', 'userName sw "ada"'):
                    condition = parse_filter(text, USER_ATTRIBUTES, USER_SCHEMA, FilterLimits())
                    counts[text] = await UserRepository().count(tx, "p1", condition)
        finally:
            await db.close()
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()
    assert "userio_identity_folded" in indexes and "userio_identity_trigrams" not in indexes
    assert counts == {'userName co "A_X"': 1, 'userName ew "X@EXAMPLE.COM"': 2, 'userName sw "ada"': 2}


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
async def test_the_bulk_row_migration_goes_back_to_a_row_per_entry(tmp_path, engine):
    """Backwards, an import chunk's one row of the log becomes a row per entry again (the earlier bulk form), each
    at the position it had; forwards again, new appends are one row."""
    import importlib.util

    from litestar_userio.changes.change_repository import ChangeRepository
    from litestar_userio.changes.entries import ChangeOrigin, Position, UserChange
    from litestar_userio.db.migrate import _piccolo_conf

    path = ROOT / "migrations" / "userio_2026_12_02t03_00_00_000000.py"
    spec = importlib.util.spec_from_file_location("bulk_row_migration", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    now = datetime.now(UTC)
    changes = [UserChange(f"u{i}", "created", b'{"sub":"u%d"}' % i) for i in range(40)]
    repository = ChangeRepository()
    async with _fresh_database(engine, tmp_path) as db:
        await migrate(db)
        async with db.transaction() as tx:
            await repository.append(tx, "p1", changes, ChangeOrigin("import", "task_1"), now)
        async with db.reader() as tx:
            before = await repository.page(tx, "p1", Position(0, 0), 100)
        with _piccolo_conf(db):
            await module.backwards_sql()
        async with db.reader() as tx:
            rows = await tx.fetch("SELECT seq, user_id, batch_index FROM userio_change ORDER BY xact, seq")
        assert [(r["user_id"], r["batch_index"]) for r in rows] == [(f"u{i}", i) for i in range(40)]
        assert [int(r["seq"]) for r in rows] == [e.seq for e in before]
        assert len({e.seq for e in before}) == 40 and min(e.seq for e in before) > 0  # a fresh log's first positions
        with _piccolo_conf(db):
            await module.forwards_sql()
        async with db.transaction() as tx:
            await repository.append(tx, "p1", changes, ChangeOrigin("import", "task_2"), now)
        async with db.reader() as tx:
            after = await repository.page(tx, "p1", Position(0, 0), 100)
            count = await tx.fetchrow("SELECT count(*) AS n FROM userio_change")
        assert [e.document for e in after] == [e.document for e in before] * 2
        assert count is not None and count["n"] == 41
