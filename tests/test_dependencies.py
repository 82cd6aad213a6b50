"""Each service is its own dependency: a host's handler takes the ones it uses, under configurable keys."""

from __future__ import annotations

from dataclasses import fields
from typing import get_type_hints

import pytest
from litestar import get
from litestar.di import NamedDependency

from litestar_userio.config import DependencyKeys
from litestar_userio.projects.project_service import ProjectService
from litestar_userio.tokens.token_service import TokenService
from litestar_userio.web import providers


@get("/host/default-keys")
async def default_keys(
    userio_projects: NamedDependency[ProjectService], userio_tokens: NamedDependency[TokenService]
) -> dict[str, str]:
    return {"projects": type(userio_projects).__name__, "tokens": type(userio_tokens).__name__}


@get("/host/renamed")
async def renamed(auth_tokens: NamedDependency[TokenService]) -> dict[str, str]:
    return {"tokens": type(auth_tokens).__name__}


async def test_host_handlers_take_services_under_the_default_keys(backend, make_env):
    env = await make_env(backend, route_handlers=[default_keys])

    response = await env.client.get("/host/default-keys")

    assert response.status_code == 200
    assert response.json() == {"projects": "ProjectService", "tokens": "TokenService"}


async def test_renamed_keys_serve_the_host_and_leave_the_admin_api_working(backend, make_env):
    keys = DependencyKeys(tokens="auth_tokens", admin="auth_admin", imports="imports_service")
    env = await make_env(backend, route_handlers=[renamed], dependency_keys=keys)
    project = await env.make_project()

    host = await env.client.get("/host/renamed")
    listed = await project.get("/_api/admin/users/import")

    assert (host.status_code, host.json()) == (200, {"tokens": "TokenService"})
    assert listed.status_code == 200


def test_keys_must_be_distinct():
    with pytest.raises(ValueError, match="distinct"):
        DependencyKeys(users="userio_tokens")


def test_every_service_has_one_provider_and_one_key():
    """A service added to `Services` without a key or a provider fails here; each provider is a plain function."""
    services = set(get_type_hints(providers.Services)) - {"db"}
    keys = {field.name for field in fields(DependencyKeys)}

    assert set(providers.PROVIDERS) == services == keys
    assert get_type_hints(providers.provide_token_service)["return"] is TokenService
    assert providers.provide_hook_service.__name__ == "provide_hook_service"
    assert providers.provide_storage.__doc__ == "The export storage; None when exports are disabled."
