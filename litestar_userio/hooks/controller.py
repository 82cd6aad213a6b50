"""`GET/PUT/DELETE /_api/admin/hooks` and `POST /_api/admin/hooks/test` (DECISIONS 5; export-style envelope)."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from litestar import Controller, Request, delete, get, post, put
from litestar.di import NamedDependency, Provide

from litestar_userio.config import UserIOConfig
from litestar_userio.dependencies import provide_admin_project
from litestar_userio.errors import Cause, UnsupportedMediaType, ValidationFailed, export_error_handler
from litestar_userio.hooks.schemas import HookList, HookListResult, HookTestRequest, HookTestResult
from litestar_userio.hooks.service import HookSpec
from litestar_userio.imports.validation import cause_from_msgspec
from litestar_userio.openapi import ExportErrorBody, error_responses, json_body
from litestar_userio.projects.service import ProjectRecord
from litestar_userio.services import Services

__all__ = ["build_hooks_controller"]

T = TypeVar("T")


async def _body(request: Request[Any, Any, Any], kind: type[T]) -> T:
    if request.headers.get("content-type", "").split(";", 1)[0].strip().lower() != "application/json":
        raise UnsupportedMediaType()
    try:
        return msgspec.json.decode(await request.body(), type=kind)
    except msgspec.ValidationError as exc:
        raise ValidationFailed([cause_from_msgspec(exc)]) from exc
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ValidationFailed([Cause("", "json", {"error": str(exc)})], "request body is not valid JSON") from exc


def _origin(request: Request[Any, Any, Any]) -> str:
    return str(request.base_url).rstrip("/")


def build_hooks_controller(config: UserIOConfig) -> type[Controller]:
    """The hooks admin controller for this config."""

    class HooksController(Controller):
        """Thin: authenticate, parse, call the hook or token service, wrap the answer in `result`."""

        path = f"{config.path_prefix}/hooks"
        tags = ["Token hooks"]
        dependencies = {"project": Provide(provide_admin_project)}
        exception_handlers = {Exception: export_error_handler}
        request_max_body_size = 2 * 1024 * 1024

        @get(
            "/", summary="The project's blocking hooks, in order", responses=error_responses(ExportErrorBody, 403, 503)
        )
        async def list_hooks(
            self, project: NamedDependency[ProjectRecord], userio: NamedDependency[Services]
        ) -> HookListResult:
            hooks = await userio.hooks.list(project.id)
            return HookListResult(HookList([HookSpec(h.event, h.source) for h in hooks]))  # type: ignore[arg-type]

        @put(
            "/",
            summary="Replace the hooks; every hook must compile or nothing changes",
            operation_class=json_body(HookList),
            responses=error_responses(ExportErrorBody, 400, 403, 415, 503),
        )
        async def replace_hooks(
            self,
            request: Request[Any, Any, Any],
            project: NamedDependency[ProjectRecord],
            userio: NamedDependency[Services],
        ) -> HookListResult:
            body = await _body(request, HookList)
            await userio.hooks.replace(project.id, body.hooks)
            return HookListResult(body)

        @delete("/", status_code=200, summary="Remove every hook", responses=error_responses(ExportErrorBody, 403, 503))
        async def delete_hooks(
            self, project: NamedDependency[ProjectRecord], userio: NamedDependency[Services]
        ) -> HookListResult:
            await userio.hooks.replace(project.id, [])
            return HookListResult(HookList([]))

        @post(
            "/test",
            status_code=200,
            summary="Run hooks against a user and client; nothing is issued",
            operation_class=json_body(HookTestRequest),
            responses=error_responses(ExportErrorBody, 400, 403, 404, 415, 503),
        )
        async def test_hooks(
            self,
            request: Request[Any, Any, Any],
            project: NamedDependency[ProjectRecord],
            userio: NamedDependency[Services],
        ) -> HookTestResult:
            body = await _body(request, HookTestRequest)
            hooks = None if body.hooks is msgspec.UNSET else await userio.hooks.compile_all(body.hooks)
            preview = await userio.tokens.preview(
                project.id, body.event, body.client_id, body.user_id, issuer=_origin(request), hooks=hooks
            )
            return HookTestResult(preview)

    return HooksController
