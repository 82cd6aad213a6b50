"""A token endpoint like the example app's, on each deployment, with an imported user and two clients."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import jwt
import pytest

from example_app.oauth import token
from litestar_userio.config import PasswordConfig
from litestar_userio.hooks.secrets import SecretBox
from tests.helpers import HASH_2B, PASSWORD, import_one

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
HOOKS = "/_api/admin/hooks"
SECRETS_KEY = SecretBox.generate_key()


@dataclass
class TokenWorld:
    env: object
    project: object
    user_id: str

    async def put_hooks(self, *hooks):
        response = await self.project.env.client.put(
            HOOKS, json={"hooks": [{"event": e, "source": s} for e, s in hooks]}, headers=self.project.headers()
        )
        assert response.status_code == 200, response.text
        return response

    async def sign_in(self, client_id="jwt-app", password=PASSWORD, username="ada@example.com", scope="openid"):
        return await self.project.env.client.post(
            "/oauth2/token",
            data={
                "grant_type": "password",
                "username": username,
                "password": password,
                "client_id": client_id,
                "scope": scope,
            },
            headers={"Host": self.project.host},
        )

    async def jwks(self):
        response = await self.project.env.client.get("/.well-known/jwks.json", headers={"Host": self.project.host})
        assert response.status_code == 200
        return response.json()

    async def verify(self, token_text, audience):
        keys = jwt.PyJWKSet.from_dict(await self.jwks())
        kid = jwt.get_unverified_header(token_text)["kid"]
        key = next(k for k in keys.keys if k.key_id == kid)
        return jwt.decode(token_text, key.key, algorithms=["RS256"], audience=audience, options={"verify_exp": False})


@pytest.fixture
async def world(backend, make_env) -> TokenWorld:
    return await make_world(backend, make_env)


async def make_world(backend, make_env, hook_timeout: timedelta = timedelta(seconds=1)) -> TokenWorld:
    """The app with the example's token endpoint, a project, Ada imported and a JWT and an opaque client."""
    env = await make_env(
        backend,
        route_handlers=[token],
        hooks={"hook_timeout": hook_timeout, "secrets_key": SECRETS_KEY, "fetch_max_calls": 3},
        # Ada's cost-4 hash is the re-hash's cost here: a cheaper one is re-hashed at the first sign-in (SECURITY.md),
        # and fifty sign-ins at once of cost 10 would be more than a project's pending work (429).
        passwords=PasswordConfig(bcrypt_cost=4),
    )
    project = await env.make_project(roles=("admin", "editor"))
    detail = await import_one(
        project,
        {
            "email": "ada@example.com",
            "email_verified": True,
            "name": "Ada",
            "roles": ["admin"],
            "custom_attributes": {"tier": "gold", "score": 7},
            "password": {"type": "bcrypt", "password_hash": HASH_2B},
        },
    )
    await env.services.tokens.applications.create(project.id, "jwt-app", issue_jwt_access_token=True)
    await env.services.tokens.applications.create(project.id, "opaque-app", issue_jwt_access_token=False)
    return TokenWorld(env, project, detail["user_id"])


def plugin_hook(name: str) -> str:
    return (PLUGINS / name).read_text()
