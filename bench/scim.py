"""SCIM benchmark (issue 44): a Bulk of 1 000 user creations, and filtered lists at 200 000 users.

    .venv/bin/python bench/scim.py [--database postgres|sqlite] [--users 200000] [--runs 15] [--reuse]

The plugin in this process (Litestar's ASGI app through httpx, no network: the figures are the server's), on a fresh
PostgreSQL database (`USERIO_BENCH_PG`) or SQLite file. Prints:
  1. `POST /Bulk` of 1 000 `POST /Users` operations (no passwords: hashing one is a fixed cost of the project's
     algorithm, not SCIM's): seconds, and a baseline, the same 1 000 users as one import task;
  2. after importing `--users` users (the import API), each filter's p50 and max over `--runs` lists, with a page
     of 100 (and an unfiltered page of 1 000), against `GET /Users/{id}` as the floor. On PostgreSQL the tables are
     analyzed first, as autovacuum does after an import: without statistics the planner takes the new tables for
     empty and walks an index of the project's identities for `co`/`ew` (600-900 ms at 200 000, not 1-50 ms).

`--reuse` skips 1. and the seeding and lists the users a previous run left (PostgreSQL's `userio_bench_scim`, SQLite's
`bench/out/scim.sqlite3`; a run without it starts them afresh): so builds can be compared on one data set, in turns.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from litestar import Litestar  # noqa: E402

from bench.harness import OUT, PG, recreate_database  # noqa: E402
from litestar_userio import AuthConfig, UserIOConfig, UserIOPlugin  # noqa: E402
from userio_core.admin_keys import generate_key_pair, sign_admin_token  # noqa: E402

HOST = "bench.example.test"
PROJECT = "bench"


def user(i: int, tag: str) -> dict[str, Any]:
    return {
        "userName": f"{tag}{i:07d}@example.com",
        "externalId": f"00u{tag}{i:07d}",
        "name": {"givenName": f"Given{i % 997}", "familyName": f"Family{i % 1009}"},
        "displayName": f"Person {i}",
        "emails": [{"value": f"{tag}{i:07d}@example.com", "type": "work", "primary": True}],
        "active": True,
    }


async def timed(client: httpx.AsyncClient, method: str, path: str, **kwargs: Any) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    response = await client.request(method, path, **kwargs)
    return time.perf_counter() - started, response


async def main() -> None:
    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser()
    parser.add_argument("--database", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--users", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--reuse", action="store_true", help="list the users of the previous run, seeding none")
    args = parser.parse_args()
    sqlite = OUT / "scim.sqlite3"
    if args.database == "postgres":
        url = f"{PG}/userio_bench_scim" if args.reuse else await recreate_database("userio_bench_scim")
    else:
        OUT.mkdir(parents=True, exist_ok=True)
        if not args.reuse:
            for stale in OUT.glob("scim.sqlite3*"):
                stale.unlink()
        url = f"sqlite:///{sqlite}"
    config = UserIOConfig(database_url=url, migrate_on_startup=True, auth=AuthConfig(allow_http=True))
    app = Litestar(plugins=[UserIOPlugin(config)])
    async with app.lifespan():
        services = app.state["userio"]
        key = generate_key_pair()
        if not args.reuse:
            await services.projects.create(PROJECT, [HOST])
        await services.projects.add_admin_key(PROJECT, key.kid, key.public_pem)
        token = (await services.scim.create_token(PROJECT)).token
        scim = {"Authorization": f"Bearer {token}", "Host": HOST, "Content-Type": "application/scim+json"}
        admin = {"Authorization": "Bearer " + sign_admin_token(key.private_pem, PROJECT), "Host": HOST}
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="https://bench", timeout=600) as client:
            if not args.reuse:
                ops = [
                    {"method": "POST", "path": "/Users", "bulkId": str(i), "data": user(i, "b")} for i in range(1000)
                ]
                body = msgspec.json.encode(
                    {"schemas": ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"], "Operations": ops}
                )
                seconds, response = await timed(client, "POST", "/_api/scim/v2/Bulk", content=body, headers=scim)
                statuses = {op["status"] for op in response.json()["Operations"]}
                print(f"bulk: 1000 creations in {seconds:.2f} s ({len(body)} bytes; statuses {sorted(statuses)})")
                records = [
                    {"email": f"i{i:07d}@example.com", "preferred_username": f"i{i:07d}@example.com",
                     "given_name": f"Given{i % 997}", "family_name": f"Family{i % 1009}", "name": f"Person {i}"}
                    for i in range(1000)
                ]  # fmt: skip
                started = time.perf_counter()
                await import_all(client, admin, records)
                print(f"baseline: the same 1000 users as one import task in {time.perf_counter() - started:.2f} s")

                started = time.perf_counter()
                step = 1100
                rest = [
                    {"email": f"u{i:07d}@example.com", "preferred_username": f"u{i:07d}@example.com",
                     "given_name": f"Given{i % 997}", "family_name": f"Family{i % 1009}", "name": f"Person {i}"}
                    for i in range(args.users - 2000)
                ]  # fmt: skip
                for start in range(0, len(rest), step * 20):
                    await asyncio.gather(
                        *(
                            import_all(client, admin, rest[s : s + step])
                            for s in range(start, min(start + step * 20, len(rest)), step)
                        )
                    )
                print(f"seeded {args.users} users in {time.perf_counter() - started:.0f} s")

            if args.database == "postgres":  # as autovacuum would after the import (it is off on this machine's server)
                async with services.db.transaction() as tx:
                    for table in ("userio_user", "userio_identity"):
                        await tx.execute(f"ANALYZE {table}")
            listed = await client.get("/_api/scim/v2/Users", params={"count": "1"}, headers=scim)
            some = listed.json()["Resources"][0]["id"]
            cases = {
                "GET /Users/{id} (floor)": (f"/_api/scim/v2/Users/{some}", {}),
                "userName eq": ("/_api/scim/v2/Users", {"filter": 'userName eq "u0150000@example.com"'}),
                "externalId eq": ("/_api/scim/v2/Users", {"filter": 'externalId eq "00ub0000500"'}),
                'emails[type eq "work" and value eq]': (
                    "/_api/scim/v2/Users",
                    {"filter": 'emails[type eq "work" and value eq "u0100000@example.com"]'},
                ),
                "userName sw (100 found)": (
                    "/_api/scim/v2/Users",
                    {"filter": 'userName sw "u01979"', "count": "100"},
                ),
                "userName co": (
                    "/_api/scim/v2/Users",
                    {"filter": 'userName co "01979"', "count": "100"},
                ),
                "userName ew": ("/_api/scim/v2/Users", {"filter": 'userName ew "0150000@example.com"'}),
                "emails.value sw (100 found)": (
                    "/_api/scim/v2/Users",
                    {"filter": 'emails.value sw "U01979"', "count": "100"},
                ),
                'emails[value co "5_0%"]': ("/_api/scim/v2/Users", {"filter": 'emails[value co "5_0%"]'}),
                "name.familyName eq (scan, ~200)": (
                    "/_api/scim/v2/Users",
                    {"filter": 'name.familyName eq "Family7"', "count": "100"},
                ),
                "meta.created gt, page of 100": (
                    "/_api/scim/v2/Users",
                    {"filter": 'meta.created gt "2000-01-01T00:00:00Z"', "count": "100"},
                ),
                "no filter, page of 1000": ("/_api/scim/v2/Users", {"count": "1000", "startIndex": "100001"}),
            }
            for name, (path, params) in cases.items():
                times = []
                for _ in range(args.runs):
                    seconds, answer = await timed(client, "GET", path, params=params, headers=scim)
                    assert answer.status_code == 200, answer.text
                    times.append(seconds)
                found = answer.json().get("totalResults", 1)
                print(
                    f"{name:40s} p50 {statistics.median(times) * 1000:7.1f} ms  max {max(times) * 1000:7.1f} ms  ({found} found)"
                )


async def import_all(client: httpx.AsyncClient, admin: dict[str, str], records: list[dict[str, Any]]) -> None:
    """One import task of `records`, waited for."""
    response = await client.post(
        "/_api/admin/users/import", json={"identifier": "email", "records": records}, headers=admin
    )
    assert response.status_code == 202, response.text
    location = response.headers["location"]
    while True:
        status = (await client.get(location, headers=admin)).json()
        if status["status"] == "completed":
            return
        await asyncio.sleep(0.05)


if __name__ == "__main__":
    asyncio.run(main())
