"""Reading a project's users page by page (keyset on id) inside one snapshot, for the export.

One query per page returns one row per user, its identities, second factors, roles and groups already
aggregated as JSON by the database: the export's cost is in Python, and this halves the rows and dicts it
handles (measured: 113 to 50 us per user).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from litestar_userio.db.engine import Row, Tx
from litestar_userio.users.repository import user_rows_query

__all__ = ["read_users"]


async def read_users(tx: Tx, project_id: str, page_size: int) -> AsyncIterator[list[Row]]:
    """Pages of users in id order; `tx` must be a snapshot so that no user is seen twice or missed.

    Each row has the user's columns plus `identities` (JSON arrays of `[key, type, original, normalized, id,
    created_at]`), `authenticators` (`[kind, type, totp_secret, oob_target]`), `roles` and `groups` (JSON
    arrays of keys, sorted); each is NULL when empty.
    """
    if tx.dialect == "postgres":
        # A page's query is costed above `jit_above_cost`, and PostgreSQL JIT-compiled it anew for every page:
        # 31.5 us of backend CPU per user with JIT, 16-18 without (2000-user pages, measured per backend).
        await tx.execute("SET LOCAL jit = off")
    query = user_rows_query(tx, "u.project_id = $1 AND u.id > $2 ORDER BY u.id LIMIT $3")
    users = await tx.fetch(query, project_id, "", page_size)
    while users:
        # The next page is read while the caller turns this one into bytes: database and Python overlap.
        following = asyncio.ensure_future(tx.fetch(query, project_id, users[-1]["id"], page_size))
        await asyncio.sleep(0)  # let it send the query before the caller's CPU-bound work starts
        try:
            yield users
        except BaseException:
            following.cancel()
            raise
        users = await following
