"""The app after the adoption (`docs/adoption.md`): the plugin beside it in the `userio` schema, the login
switched to the plugin's sign-in; the app keeps its own token format, minted from the user id (its old id).
"""

from __future__ import annotations

from typing import Any

from litestar import post
from litestar.di import NamedDependency
from litestar.params import URLEncodedBody

from example_fullstack import settings
from example_fullstack.core import build_app, mint_token
from litestar_userio import UserIOConfig, UserIOPlugin
from litestar_userio import UserService as UserIOUserService


def userio_config() -> UserIOConfig:
    """The plugin on the app's database, in its own schema."""
    return UserIOConfig(database_url=settings.DATABASE_URL.replace("+asyncpg", ""), database_schema="userio")


@post("/api/access/login", status_code=200)
async def login(
    userio_users: NamedDependency[UserIOUserService],
    data: URLEncodedBody[dict[str, str]],
) -> dict[str, Any]:
    # A refusal raises a typed error the plugin answers per RFC 6749 (400 invalid_grant, 401 invalid_client).
    user_id = await userio_users.sign_in(
        settings.USERIO_PROJECT, data.get("username", ""), data.get("password", ""), settings.USERIO_CLIENT
    )
    return {"access_token": mint_token(user_id), "token_type": "Bearer"}


app = build_app(login, [UserIOPlugin(userio_config())])
