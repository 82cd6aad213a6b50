"""A host's own handler takes `UserAdminService` by DI (`userio_user_admin`) under postponed annotations."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from litestar_userio import PasswordConfig
from litestar_userio.accounts.user_admin import UserAdminService


@post("/sign-up")
async def sign_up(
    data: JSONBody[dict[str, str]], userio_user_admin: NamedDependency[UserAdminService]
) -> dict[str, Any]:
    project = await userio_user_admin.projects.get(data["project"])
    assert project is not None
    user, _ = await userio_user_admin.create(project, msgspec.json.encode({"email": data["email"]}))
    await userio_user_admin.set_password(project, user["sub"], password=data["password"])
    return user


async def test_a_host_sign_up_creates_a_user_who_signs_in(backend, make_env):
    env = await make_env(backend, route_handlers=[sign_up], passwords=PasswordConfig(bcrypt_cost=4))
    project = await env.make_project()

    response = await env.client.post(
        "/sign-up", json={"project": project.id, "email": "Ada@Example.com", "password": "long enough"}
    )

    assert response.status_code == 201, response.text
    user = response.json()
    assert user["email"] == "ada@example.com"
    assert await env.services.users.verify_password(project.id, "ada@example.com", "long enough") == user["sub"]
