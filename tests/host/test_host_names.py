"""A host with its own `UserService`, `TokenService` and `Services` in its signature namespace (litestar-fullstack's
pattern, postponed annotations included) keeps every route answering beside the plugin, and so does the plugin."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from litestar import Controller, Litestar, get
from litestar.di import Provide

from litestar_userio import UserIOPlugin
from litestar_userio import UserService as UserIOUsers


@dataclass
class UserService:
    """The host's own user service."""

    name: str = "host users"


@dataclass
class TokenService:
    """The host's own token service."""

    name: str = "host tokens"


@dataclass
class Services:
    """The host's own bag of services."""

    users: UserService
    tokens: TokenService


def provide_users() -> UserService:
    return UserService()


def provide_tokens() -> TokenService:
    return TokenService()


def provide_services(users_service: UserService, tokens_service: TokenService) -> Services:
    return Services(users_service, tokens_service)


class AccountController(Controller):
    path = "/host"
    dependencies = {"services": Provide(provide_services, sync_to_thread=False)}
    signature_namespace = {"Services": Services}

    @get("/users")
    async def users(self, users_service: UserService) -> dict[str, str]:
        return {"service": users_service.name, "type": type(users_service).__qualname__}

    @get("/tokens")
    async def tokens(self, tokens_service: TokenService) -> dict[str, str]:
        return {"service": tokens_service.name}

    @get("/services")
    async def services(self, services: Services) -> dict[str, str]:
        return {"users": services.users.name, "tokens": services.tokens.name}

    @get("/userio-users")
    async def userio_users(self, userio_users: UserIOUsers) -> dict[str, str]:
        return {"service": type(userio_users).__module__}


def host_app(database_url: str, tmp_path: Any) -> Litestar:
    from litestar_userio import ExportConfig, LocalStorageConfig, UserIOConfig

    config = UserIOConfig(
        database_url=database_url, exports=ExportConfig(storage=LocalStorageConfig(directory=tmp_path))
    )
    return Litestar(
        route_handlers=[AccountController],
        dependencies={
            "users_service": Provide(provide_users, sync_to_thread=False),
            "tokens_service": Provide(provide_tokens, sync_to_thread=False),
        },
        signature_namespace={"UserService": UserService, "TokenService": TokenService, "Services": Services},
        plugins=[UserIOPlugin(config)],
    )


@pytest.mark.engine
async def test_host_routes_with_colliding_names_answer_beside_the_plugin(backend, tmp_path):
    app = host_app(backend.database_url, tmp_path)
    async with (
        app.lifespan(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="https://h") as client,
    ):
        users = await client.get("/host/users")
        tokens = await client.get("/host/tokens")
        bag = await client.get("/host/services")
        ours = await client.get("/host/userio-users")
        admin = await client.get("/_api/admin/users/import", headers={"Host": "nowhere.test"})
        passwords = await client.get("/_api/admin/users/password-migration", headers={"Host": "nowhere.test"})

    assert (users.status_code, users.json()) == (200, {"service": "host users", "type": "UserService"})
    assert (tokens.status_code, tokens.json()) == (200, {"service": "host tokens"})
    assert (bag.status_code, bag.json()) == (200, {"users": "host users", "tokens": "host tokens"})
    assert (ours.status_code, ours.json()) == (200, {"service": "litestar_userio.accounts.sign_in_service"})
    # the plugin's own routes (one takes our `UserService`) still resolve their names: refused, not a 500
    assert (admin.status_code, passwords.status_code) == (403, 403)


def test_every_plugin_handler_resolves_its_names_in_the_plugin(tmp_path):
    """No handler of the plugin takes a host's class for one of its own (the host's names are in the app namespace).

    A guard answers 403 before the parameters are resolved, so a request alone cannot show a borrowed name.
    """
    app = host_app("sqlite:///" + str(tmp_path / "userio.sqlite3"), tmp_path)
    borrowed = [
        (handler.handler_name, name, repr(field.annotation))
        for route in app.routes
        for handler in getattr(route, "route_handlers", [])
        if handler.fn.__module__.startswith("litestar_userio")
        for name, field in handler.parsed_fn_signature.parameters.items()
        if __name__ in repr(field.annotation)
    ]
    assert borrowed == []


def test_a_host_with_its_own_names_starts_without_a_warning(tmp_path):
    """The plugin's handlers need no name of the app's namespace, so Litestar has nothing to warn about at start-up
    (an app that turns that warning into an error starts too)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*already defined as a different type in the signature namespace")
        app = host_app("sqlite:///" + str(tmp_path / "userio.sqlite3"), tmp_path)

    assert any(route.path.startswith("/_api/admin/users") for route in app.routes)
