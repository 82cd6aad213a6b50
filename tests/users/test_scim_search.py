"""SCIM's `sw`, `co` and `ew` on login ids go through indexes (migration 2026-12-02T02) and answer as the scan did."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from litestar_userio import PasswordConfig
from litestar_userio.db.engine import Database
from litestar_userio.db.migrate import migrate
from litestar_userio.scim.filters import USER_ATTRIBUTES, USER_SCHEMA, FilterLimits, parse_filter
from litestar_userio.users.search import Compare
from litestar_userio.users.user_repository import _successor, _Where
from tests.conftest import own_postgres_database
from tests.users.test_scim import new_token

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.engine

USERS = [
    # (userName, email): `_` and `%` must stay plain characters; a username that is its email is a second login id
    # stored as `key\x1fkind`; unicode folds as the normalization and lower() fold it.
    ("Ada_Lovelace@example.com", "Ada_Lovelace@example.com"),
    ("adaxlovelace", "adax%lovelace@example.com"),
    ("ada%lovelace", "ada.lovelace@example.net"),
    ("Łukasz.Ünal", "lukasz@example.org"),
    ("grace", "GRACE.hopper@Example.com"),
]

FILTERS = {
    'userName sw "ADA"': {"Ada_Lovelace@example.com", "adaxlovelace", "ada%lovelace"},
    'userName sw "ada_"': {"Ada_Lovelace@example.com"},
    'userName sw "ada%"': {"ada%lovelace"},
    'userName sw "ada_lovelace@example.com"': {"Ada_Lovelace@example.com"},
    'userName sw "łuk"': {"Łukasz.Ünal"},
    'userName sw "ŁUKASZ.ü"': {"Łukasz.Ünal"},
    'userName co "_"': {"Ada_Lovelace@example.com"},
    'userName co "%"': {"ada%lovelace"},
    'userName co "\\\\"': set(),
    'userName co "OV"': {"Ada_Lovelace@example.com", "adaxlovelace", "ada%lovelace"},
    'userName co "ünal"': {"Łukasz.Ünal"},
    'userName co "a_l"': {"Ada_Lovelace@example.com"},
    'userName ew "LOVELACE"': {"adaxlovelace", "ada%lovelace"},
    'userName ew "@example.com"': {"Ada_Lovelace@example.com"},
    'userName ew "e"': {"adaxlovelace", "ada%lovelace", "grace"},
    'emails.value sw "ada"': {"Ada_Lovelace@example.com", "adaxlovelace", "ada%lovelace"},
    'emails.value sw "adax%"': {"adaxlovelace"},
    'emails.value co "%"': {"adaxlovelace"},
    'emails.value co "_"': {"Ada_Lovelace@example.com"},
    'emails.value co "@EXAMPLE.COM"': {"Ada_Lovelace@example.com", "adaxlovelace", "grace"},
    'emails.value ew ".NET"': {"ada%lovelace"},
    'emails[type eq "work" and value ew "example.org"]': {"Łukasz.Ünal"},
    'emails.value sw "grace.h"': {"grace"},
    'not (userName sw "ada")': {"Łukasz.Ünal", "grace"},
    'userName sw "ada" and emails.value co "%"': {"adaxlovelace"},
}


@pytest.fixture
async def env(backend, make_env):
    return await make_env(backend, passwords=PasswordConfig(bcrypt_cost=4))


async def scim_client(project: Any) -> Any:
    token = await new_token(project)

    async def call(method: str, path: str, body: Any = None, params: Any = None) -> Any:
        headers = {"Authorization": f"Bearer {token}", "Host": project.host, "Content-Type": "application/scim+json"}
        return await project.env.client.request(
            method, "/_api/scim/v2" + path, headers=headers, json=body, params=params
        )

    return call


def scim_user(name: str, email: str) -> dict[str, Any]:
    return {"schemas": [USER_SCHEMA], "userName": name, "emails": [{"value": email, "type": "work", "primary": True}]}


async def scanned(db: Database, project_id: str, filter_text: str) -> set[str]:
    """The user ids the comparisons as they were before the indexes (a scan by position) find for a simple filter."""
    attribute, op, value = filter_text.split(" ", 2)
    kind = {"userName": "username", "emails.value": "email"}[attribute]
    needle = value.strip('"').replace("\\\\", "\\").lower()
    async with db.reader() as tx:
        postgres = tx.dialect == "postgres"
        sql = {
            "co": "strpos(lower(normalized_value), $3) > 0" if postgres else "instr(lower(normalized_value), $3) > 0",
            "sw": "starts_with(lower(normalized_value), $3)"
            if postgres
            else "substr(lower(normalized_value), 1, length($3)) = $3",
            "ew": "right(lower(normalized_value), length($3)) = $3"
            if postgres
            else "substr(lower(normalized_value), -length($3)) = $3",
        }[op]
        rows = await tx.fetch(
            f"SELECT user_id FROM userio_identity WHERE project_id = $1 AND login_id_key = $2 AND {sql}",
            project_id,
            kind,
            needle,
        )
    return {row["user_id"] for row in rows}


async def test_sw_co_and_ew_on_login_ids_find_the_users_the_scan_found(env):
    project, other = await env.make_project(), await env.make_project()
    scim, elsewhere = await scim_client(project), await scim_client(other)
    ids = {}
    for name, email in USERS:
        created = await scim("POST", "/Users", scim_user(name, email))
        assert created.status_code == 201, created.text
        ids[created.json()["id"]] = name
        # The same users in another project: never found by this project's filters.
        assert (await elsewhere("POST", "/Users", scim_user(name, email))).status_code == 201
    async with env.services.db.reader() as tx:
        joined = await tx.fetch(
            "SELECT login_id_key FROM userio_identity WHERE project_id = $1 AND unique_key LIKE '%' || $2 || '%'",
            project.id,
            "\x1f",
        )
    assert [row["login_id_key"] for row in joined] in (["username"], ["email"])  # Ada's second login id

    for text, expected in FILTERS.items():
        response = await scim("GET", "/Users", params={"filter": text, "count": "100"})
        assert response.status_code == 200, (text, response.text)
        body = response.json()
        found = {r["id"] for r in body["Resources"]}
        assert {ids.get(user_id, user_id) for user_id in found} == expected, text
        assert body["totalResults"] == len(expected), text
        simple = text.split(" ")[0] in ("userName", "emails.value") and text.count('"') == 2
        if simple:
            assert found == await scanned(env.services.db, project.id, text), text


def test_the_upper_bound_of_a_prefix_is_the_next_string_in_code_point_order():
    assert _successor("ab") == "ac"
    assert _successor("a\U0010ffff") == "b"
    assert _successor("\U0010ffff\U0010ffff") is None
    assert _successor("a\ud7ff") == "a\ue000"  # no surrogate is a character of a stored text


PLANS = {
    'userName sw "user123"': "userio_identity_folded",
    'emails.value sw "USER99"': "userio_identity_folded",
    'userName co "ser123"': "userio_identity_trigrams",
    'userName ew "er12345"': "userio_identity_trigrams",
    'emails[type eq "work" and value co "r77@exa"]': "userio_identity_trigrams",
    'emails.value ew "5_0%"': "userio_identity_trigrams",
}


def trigram_statements() -> list[str]:
    """The SQL block of docs/scim.md's "`co` and `ew` at scale", a statement each."""
    section = (ROOT / "docs" / "scim.md").read_text().split("### `co` and `ew` at scale", 1)[1]
    match = re.search(r"```sql\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the section has an SQL block"
    return [statement.strip() for statement in match.group(1).split(";") if statement.strip()]


@pytest.mark.parametrize("mode", ["auto", "force_generic_plan"])
async def test_on_postgres_sw_co_and_ew_plans_probe_the_indexes_not_a_scan_of_the_identities(mode):
    """EXPLAIN of the search's and the count's queries at 40 000 identities: each probes its index with the value.

    `force_generic_plan` is what a prepared statement may run after its fifth execution (asyncpg prepares them).
    """
    async with own_postgres_database("userio_plans") as url:
        db = Database(url)
        await db.start()
        try:
            async with db.transaction() as tx:
                await tx.execute("INSERT INTO userio_project (id, created_at, settings) VALUES ('p1', now(), '{}')")
                await tx.execute(
                    "INSERT INTO userio_user (id, project_id, created_at, updated_at, is_disabled,"
                    " standard_attributes, custom_attributes)"
                    " SELECT 'u' || g, 'p1', now(), now(), FALSE, '{}', '{}' FROM generate_series(1, 20000) g"
                )
                await tx.execute(
                    "INSERT INTO userio_identity (id, project_id, user_id, login_id_key, login_id_type,"
                    " original_value, normalized_value, created_at, unique_key)"
                    " SELECT k || g, 'p1', 'u' || g, k, k, v, v, now(), v FROM generate_series(1, 20000) g,"
                    " LATERAL (VALUES ('username', 'user' || g), ('email', 'user' || g || '@example.com')) AS x(k, v)"
                )
            async with db.transaction() as tx:  # the trigram index as docs/scim.md has an operator make it
                for statement in trigram_statements():
                    await tx.execute(statement)
            async with db.transaction() as tx:
                await tx.execute("ANALYZE userio_identity")
                await tx.execute("ANALYZE userio_user")
            for text, index in PLANS.items():
                condition = parse_filter(text, USER_ATTRIBUTES, USER_SCHEMA, FilterLimits())
                assert isinstance(condition, Compare) or text.startswith("emails[")
                async with db.reader() as tx:
                    await tx.execute(f"SET plan_cache_mode = {mode}")
                    args: list[Any] = ["p1"]
                    clause = _Where(tx, args).compile(condition)
                    for query in (
                        f"SELECT u.id FROM userio_user u WHERE u.project_id = $1 AND {clause} ORDER BY u.id LIMIT 100",
                        f"SELECT COUNT(*) AS n FROM userio_user u WHERE u.project_id = $1 AND {clause}",
                    ):
                        await tx.execute(f"PREPARE q AS {query}")
                        values = ", ".join(_literal(arg) for arg in args)
                        plan = "\n".join(r["QUERY PLAN"] for r in await tx.fetch(f"EXPLAIN EXECUTE q({values})"))
                        await tx.execute("DEALLOCATE q")
                        assert index in plan, (text, plan)
                        assert "Seq Scan on userio_identity" not in plan, (text, plan)
                        # The value narrows the probe: not a walk of the project's identities through the index.
                        probes = [line for line in plan.splitlines() if "Index Cond" in line]
                        assert any("lower(normalized_value)" in line for line in probes), (text, plan)
                    await tx.execute("RESET plan_cache_mode")
        finally:
            await db.close()


def _literal(value: Any) -> str:
    return "'" + str(value).replace("'", "''") + "'"


async def test_on_sqlite_sw_is_a_range_of_the_index_and_co_reads_the_index_not_the_users(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'plans.sqlite3'}")
    await db.start()
    try:
        await migrate(db)
        plans = {}
        for text in ('userName sw "user123"', 'emails.value co "r77@exa"'):
            condition = parse_filter(text, USER_ATTRIBUTES, USER_SCHEMA, FilterLimits())
            async with db.reader() as tx:
                args: list[Any] = ["p1"]
                clause = _Where(tx, args).compile(condition)
                query = f"SELECT COUNT(*) AS n FROM userio_user u WHERE u.project_id = $1 AND {clause}"
                plans[text] = [r["detail"] for r in await tx.fetch(f"EXPLAIN QUERY PLAN {query}", *args)]
    finally:
        await db.close()
    folded = "SEARCH i USING INDEX userio_identity_folded (project_id=?"
    assert f"{folded} AND <expr>>? AND <expr><?)" in plans['userName sw "user123"']
    assert f"{folded})" in plans['emails.value co "r77@exa"']
