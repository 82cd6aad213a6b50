"""The token benchmark's baseline: a bare Litestar handler that reads one indexed row and signs an RS256 JWT.

    uvicorn bench.token_baseline:app  (started by bench/tokens.py, which sets the environment below)

`BASELINE_DATABASE_URL` (postgresql://... or sqlite:///...), `BASELINE_USER_ID` (the row read by primary key) and
`BASELINE_KEY_FILE` (the project's own signing key, PEM, so both sides sign with the same key). What a token
endpoint cannot do without; everything the plugin adds above it is what `bench/tokens.py` measures.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import jwt
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from litestar import Litestar, post

DATABASE_URL = os.environ.get("BASELINE_DATABASE_URL", "")
USER_ID = os.environ.get("BASELINE_USER_ID", "")
KEY = load_pem_private_key(Path(os.environ.get("BASELINE_KEY_FILE", "/dev/null")).read_bytes(), password=None)
QUERY = "SELECT id, project_id, created_at FROM userio_user WHERE id = {}"

state: dict[str, Any] = {}


@asynccontextmanager
async def lifespan(_: Litestar) -> AsyncIterator[None]:
    if DATABASE_URL.startswith("postgresql"):
        state["pool"] = await asyncpg.create_pool(
            DATABASE_URL, min_size=4, max_size=4, server_settings={"search_path": "userio"}
        )
        yield
        await state["pool"].close()
    else:
        state["sqlite"] = sqlite3.connect(DATABASE_URL.removeprefix("sqlite:///"), check_same_thread=False)
        yield
        state["sqlite"].close()


async def read_user() -> tuple[Any, ...]:
    if "pool" in state:
        row = await state["pool"].fetchrow(QUERY.format("$1"), USER_ID)
        return tuple(row)
    return tuple(state["sqlite"].execute(QUERY.format("?"), (USER_ID,)).fetchone())


@post("/token", status_code=200)
async def token() -> dict[str, Any]:
    """One indexed read and one RS256 signature: the least a token answer costs."""
    user_id, project_id, _ = await read_user()
    now = int(time.time())
    claims = {"sub": user_id, "aud": project_id, "iat": now, "exp": now + 1800, "jti": uuid.uuid4().hex}
    signed = jwt.encode(claims, KEY, algorithm="RS256", headers={"typ": "at+jwt"})  # type: ignore[arg-type]
    return {"access_token": signed, "token_type": "Bearer", "expires_in": 1800}


app = Litestar(route_handlers=[token], lifespan=[lifespan])
