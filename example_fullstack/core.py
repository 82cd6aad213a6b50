"""The app's own parts, the same before and after the adoption: its `UserService`, its token, its routes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import jwt
from advanced_alchemy.extensions.litestar import (
    AsyncSessionConfig,
    SQLAlchemyAsyncConfig,
    SQLAlchemyPlugin,
)
from advanced_alchemy.repository import SQLAlchemyAsyncRepository
from advanced_alchemy.service import SQLAlchemyAsyncRepositoryService
from argon2 import PasswordHasher
from argon2.exceptions import VerificationError
from litestar import Litestar, Request, get
from litestar.di import NamedDependency, Provide
from litestar.exceptions import NotAuthorizedException
from litestar.plugins import PluginProtocol
from litestar.types import ControllerRouterHandler
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from example_fullstack import settings
from example_fullstack.models import Team, TeamMember, User

hasher = PasswordHasher()


class UserRepository(SQLAlchemyAsyncRepository[User]):
    model_type = User


class UserService(SQLAlchemyAsyncRepositoryService[User]):
    """The app's own user service (its name also sits in the app's `signature_namespace`)."""

    repository_type = UserRepository

    async def authenticate(self, email: str, password: str) -> User:
        """The app's login before the adoption: its own Argon2 check."""
        user = await self.get_one_or_none(email=email)
        try:
            if user is None or not hasher.verify(user.hashed_password, password):
                raise NotAuthorizedException("wrong email or password")
        except VerificationError as error:
            raise NotAuthorizedException("wrong email or password") from error
        return user

    async def teams_of(self, user_id: UUID) -> Sequence[tuple[Team, str]]:
        rows = await self.repository.session.execute(
            select(Team, TeamMember.role).join(TeamMember).where(TeamMember.user_id == user_id).order_by(Team.name)
        )
        return [(team, role) for team, role in rows.tuples()]


async def provide_users(db_session: NamedDependency[AsyncSession]) -> UserService:
    return UserService(session=db_session)


def mint_token(user_id: UUID | str) -> str:
    """The app's own access token: HS256, `sub` the user's id."""
    now = datetime.now(UTC)
    claims = {"sub": str(user_id), "iat": now, "exp": now + timedelta(minutes=30)}
    return jwt.encode(claims, settings.SECRET_KEY, algorithm="HS256")


async def provide_user_id(request: Request[Any, Any, Any]) -> UUID:
    """The signed-in user's id, from the app's bearer token."""
    token = request.headers.get("authorization", "").removeprefix("Bearer ")
    try:
        return UUID(jwt.decode(token, settings.SECRET_KEY, algorithms=["HS256"])["sub"])
    except (jwt.PyJWTError, KeyError, ValueError) as error:
        raise NotAuthorizedException("a bearer token is required") from error


@get("/api/users/me")
async def me(users: NamedDependency[UserService], current_user_id: NamedDependency[UUID]) -> dict[str, Any]:
    user = await users.get(current_user_id)
    return {"id": str(user.id), "email": user.email, "name": user.name}


@get("/api/teams")
async def my_teams(users: NamedDependency[UserService], current_user_id: NamedDependency[UUID]) -> list[dict[str, Any]]:
    return [
        {"id": str(team.id), "name": team.name, "role": role} for team, role in await users.teams_of(current_user_id)
    ]


def build_app(login: ControllerRouterHandler, plugins: Sequence[PluginProtocol] = ()) -> Litestar:
    """The app with its own routes and the login handler of its stage."""
    alchemy = SQLAlchemyAsyncConfig(
        connection_string=settings.DATABASE_URL,
        session_config=AsyncSessionConfig(expire_on_commit=False),
        before_send_handler="autocommit",
        create_all=False,
    )
    return Litestar(
        route_handlers=[login, me, my_teams],
        dependencies={"users": Provide(provide_users), "current_user_id": Provide(provide_user_id)},
        signature_namespace={"UserService": UserService, "UUID": UUID, "AsyncSession": AsyncSession},
        plugins=[SQLAlchemyPlugin(config=alchemy), *plugins],
    )
