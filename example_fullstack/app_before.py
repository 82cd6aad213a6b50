"""The app before the adoption: its own login checks the Argon2 hash in `user_account`."""

from __future__ import annotations

from typing import Any

from litestar import post
from litestar.di import NamedDependency
from litestar.params import URLEncodedBody

from example_fullstack.core import UserService, build_app, mint_token


@post("/api/access/login", status_code=200)
async def login(users: NamedDependency[UserService], data: URLEncodedBody[dict[str, str]]) -> dict[str, Any]:
    user = await users.authenticate(data.get("username", ""), data.get("password", ""))
    return {"access_token": mint_token(user.id), "token_type": "Bearer"}


app = build_app(login)
