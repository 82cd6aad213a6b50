"""The hooks admin API (docs/reference.md#hooks, issue 14; export-style envelope).

`GET/PUT/DELETE /hooks`, `POST /hooks/test`, `GET /hooks/secrets`, `PUT/DELETE /hooks/secrets/{name}`,
`GET /hooks/versions`, `GET /hooks/versions/{version}`, `POST /hooks/versions/{version}/rollback`, `GET /hooks/runs`.
"""

from typing import Annotated, Any

import jwt
import msgspec
from litestar import Controller, Request, delete, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, Parameter

from litestar_userio.accounts.user_admin import UserAdminService
from litestar_userio.errors import HookVersionNotFound, InvalidRequest, NotFound
from litestar_userio.hooks.hook_repository import VersionRow
from litestar_userio.hooks.hook_schemas import (
    HookList,
    HookListResult,
    HookRunEntry,
    HookRunPage,
    HookRunPageResult,
    HookSecretInfo,
    HookSecretList,
    HookSecretListResult,
    HookSecretResult,
    HookSecretValue,
    HookTestRequest,
    HookTestResult,
    HookVersion,
    HookVersionActor,
    HookVersionList,
    HookVersionListResult,
    HookVersionResult,
)
from litestar_userio.hooks.hook_service import HookService
from litestar_userio.hooks.lazy_migration_event import MIGRATION_EVENT
from litestar_userio.projects.project_service import ProjectRecord
from litestar_userio.tokens.token_service import TokenService
from litestar_userio.web.bodies import BODY_PARSER, BodySchema, json_body, json_parser
from litestar_userio.web.error_responses import export_error_handler
from litestar_userio.web.openapi import ExportErrorBody, error_responses
from litestar_userio.web.providers import (
    admin_dependencies,
    authenticate_admin,
    provide_hook_service,
    provide_token_service,
    provide_user_admin_service,
)

__all__ = ["HookListBody", "HookSecretBody", "HookTestBody", "HooksController"]

HookListBody = Annotated[HookList, json_body("HookListBody"), BodySchema(HookList)]
"""`data: HookListBody` is a `HookList` (its route decodes it by `parse_json_body`, as the other hooks API bodies)."""
HookSecretBody = Annotated[HookSecretValue, json_body("HookSecretBody"), BodySchema(HookSecretValue)]
HookTestBody = Annotated[HookTestRequest, json_body("HookTestBody"), BodySchema(HookTestRequest)]


SAMPLE_LOGIN_ID = "sample@example.com"
"""The login id of a `user.password_migration` test that names none."""
SAMPLE_PASSWORD = "sample-password"
"""The password of a `user.password_migration` test that names none."""


def _origin(request: Request[Any, Any, Any]) -> str:
    return str(request.base_url).rstrip("/")


def _actor(request: Request[Any, Any, Any]) -> tuple[str | None, str | None]:
    """The key id and subject of the admin token (already verified by the project dependency)."""
    token = request.headers.get("authorization", "").partition(" ")[2].strip()
    try:
        kid = jwt.get_unverified_header(token).get("kid")
        sub = jwt.decode(token, options={"verify_signature": False}).get("sub")
    except jwt.PyJWTError:
        return None, None
    return (str(kid) if kid is not None else None), (str(sub) if sub is not None else None)


def _version_number(text: str) -> int:
    """A version number from the path; anything else names no version (404 in the API's envelope)."""
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise HookVersionNotFound(f"no version {text!r} of this project's hooks")
    return int(text)


def _version(row: VersionRow, *, with_body: bool = False) -> HookVersion:
    return HookVersion(
        row.version,
        row.created_at,
        HookVersionActor(row.actor_kid, row.actor_sub),
        row.body if with_body else msgspec.UNSET,
    )


class HooksController(Controller):
    """Thin: authenticate, parse, call the hook or token service, wrap the answer in `result`."""

    path = "/hooks"
    tags = ["Token hooks"]
    guards = [authenticate_admin]
    dependencies = admin_dependencies(
        hooks_service=provide_hook_service,
        tokens_service=provide_token_service,
        user_admin_service=provide_user_admin_service,
    )
    exception_handlers = {Exception: export_error_handler}
    request_max_body_size = 2 * 1024 * 1024

    @get(
        "/",
        summary="The project's blocking hooks, in order, and its fetch allowlist",
        responses=error_responses(ExportErrorBody, 403, 503),
    )
    async def list_hooks(
        self, project: NamedDependency[ProjectRecord], hooks_service: NamedDependency[HookService]
    ) -> HookListResult:
        hooks, allowlist = await hooks_service.settings(project.id)
        return HookListResult(HookList([h.spec() for h in hooks], allowlist))

    @put(
        "/",
        opt={BODY_PARSER: json_parser(HookList)},
        summary="Replace the hooks (a new version); every hook must compile or nothing changes",
        description="Each saved hook then runs once on a sample event of its kind (no network, nothing logged); one"
        " that answers in a wrong shape is named in `warnings` beside `result`.",
        responses=error_responses(ExportErrorBody, 400, 403, 415, 503),
    )
    async def replace_hooks(
        self,
        request: Request[Any, Any, Any],
        data: HookListBody,
        project: NamedDependency[ProjectRecord],
        hooks_service: NamedDependency[HookService],
    ) -> HookListResult:
        allowlist = None if data.fetch_allowlist is msgspec.UNSET else data.fetch_allowlist
        await hooks_service.replace(project.id, data.hooks, allowlist, _actor(request))
        hooks, saved_allowlist = await hooks_service.settings(project.id)
        warnings = await hooks_service.trial_warnings(project.id, hooks)
        return HookListResult(HookList([h.spec() for h in hooks], saved_allowlist), warnings or msgspec.UNSET)

    @delete(
        "/",
        status_code=200,
        summary="Remove every hook (a new version; the allowlist stays)",
        responses=error_responses(ExportErrorBody, 403, 503),
    )
    async def delete_hooks(
        self,
        request: Request[Any, Any, Any],
        project: NamedDependency[ProjectRecord],
        hooks_service: NamedDependency[HookService],
    ) -> HookListResult:
        await hooks_service.replace(project.id, [], None, _actor(request))
        _, allowlist = await hooks_service.settings(project.id)
        return HookListResult(HookList([], allowlist))

    @get(
        "/secrets",
        summary="Names and update times of the project's hook secrets (never their values)",
        responses=error_responses(ExportErrorBody, 403, 503),
    )
    async def list_secrets(
        self, project: NamedDependency[ProjectRecord], hooks_service: NamedDependency[HookService]
    ) -> HookSecretListResult:
        names = await hooks_service.secret_names(project.id)
        return HookSecretListResult(HookSecretList([HookSecretInfo(n, t) for n, t in names]))

    @put(
        "/secrets/{name:str}",
        opt={BODY_PARSER: json_parser(HookSecretValue)},
        summary="Set a hook secret (encrypted at rest; hooks read it as ctx.secrets.NAME)",
        responses=error_responses(ExportErrorBody, 400, 403, 415, 500, 503),
    )
    async def put_secret(
        self,
        data: HookSecretBody,
        name: FromPath[str],
        project: NamedDependency[ProjectRecord],
        hooks_service: NamedDependency[HookService],
    ) -> HookSecretResult:
        updated = await hooks_service.put_secret(project.id, name, data.value)
        return HookSecretResult(HookSecretInfo(name, updated))

    @delete(
        "/secrets/{name:str}",
        status_code=200,
        summary="Delete a hook secret",
        responses=error_responses(ExportErrorBody, 403, 404, 500, 503),
    )
    async def delete_secret(
        self,
        name: FromPath[str],
        project: NamedDependency[ProjectRecord],
        hooks_service: NamedDependency[HookService],
    ) -> HookSecretListResult:
        await hooks_service.delete_secret(project.id, name)
        names = await hooks_service.secret_names(project.id)
        return HookSecretListResult(HookSecretList([HookSecretInfo(n, t) for n, t in names]))

    @get(
        "/versions",
        summary="Every saved version of the hooks, newest first",
        responses=error_responses(ExportErrorBody, 403, 503),
    )
    async def list_versions(
        self, project: NamedDependency[ProjectRecord], hooks_service: NamedDependency[HookService]
    ) -> HookVersionListResult:
        rows = await hooks_service.versions(project.id)
        return HookVersionListResult(HookVersionList([_version(r) for r in rows]))

    @get(
        "/versions/{version:str}",
        summary="One saved version with its body",
        responses=error_responses(ExportErrorBody, 403, 404, 503),
    )
    async def get_version(
        self,
        version: FromPath[str],
        project: NamedDependency[ProjectRecord],
        hooks_service: NamedDependency[HookService],
    ) -> HookVersionResult:
        number = _version_number(version)
        return HookVersionResult(_version(await hooks_service.version(project.id, number), with_body=True))

    @post(
        "/versions/{version:str}/rollback",
        status_code=200,
        summary="Save a version's body again, as a new version",
        responses=error_responses(ExportErrorBody, 400, 403, 404, 503),
    )
    async def rollback(
        self,
        request: Request[Any, Any, Any],
        version: FromPath[str],
        project: NamedDependency[ProjectRecord],
        hooks_service: NamedDependency[HookService],
    ) -> HookVersionResult:
        new_version = await hooks_service.rollback(project.id, _version_number(version), _actor(request))
        return HookVersionResult(_version(await hooks_service.version(project.id, new_version), with_body=True))

    @get(
        "/runs",
        summary="The run log of production hook runs, newest first, paged",
        responses=error_responses(ExportErrorBody, 400, 403, 503),
    )
    async def list_runs(
        self,
        project: NamedDependency[ProjectRecord],
        hooks_service: NamedDependency[HookService],
        limit: int = Parameter(default=50, ge=1, le=500),
        cursor: str | None = Parameter(default=None, pattern=r"^[0-9]{1,18}$"),
    ) -> HookRunPageResult:
        rows, more = await hooks_service.runs(project.id, limit, int(cursor) if cursor else None)
        entries = [
            HookRunEntry(
                r.event,
                r.hook_index,
                r.started_at,
                r.duration_ms,
                r.outcome,  # type: ignore[arg-type]
                r.error_kind,
                r.console,
                r.claims_added,
                r.sampled_rate,
            )
            for _, r in rows
        ]
        next_cursor = str(rows[-1][0]) if more and rows else None
        return HookRunPageResult(HookRunPage(entries, next_cursor))

    @post(
        "/test",
        opt={BODY_PARSER: json_parser(HookTestRequest)},
        status_code=200,
        summary="Run hooks against a user and client; nothing is issued",
        responses=error_responses(ExportErrorBody, 400, 403, 404, 415, 503),
    )
    async def test_hooks(
        self,
        request: Request[Any, Any, Any],
        data: HookTestBody,
        project: NamedDependency[ProjectRecord],
        hooks_service: NamedDependency[HookService],
        tokens_service: NamedDependency[TokenService],
        user_admin_service: NamedDependency[UserAdminService],
    ) -> HookTestResult:
        hooks = None if data.hooks is msgspec.UNSET else await hooks_service.compile_all(data.hooks)
        user_id = None if data.user_id is msgspec.UNSET else data.user_id
        if data.event == MIGRATION_EVENT:
            waiting = None if user_id is None else await user_admin_service.load(project.id, user_id)
            if user_id is not None and waiting is None:
                raise NotFound(f"no user {user_id!r} in this project: pass a user's id (`sub` in an export)")
            login_id = SAMPLE_LOGIN_ID if data.login_id is msgspec.UNSET else data.login_id
            password = SAMPLE_PASSWORD if data.password is msgspec.UNSET else data.password
            return HookTestResult(await hooks_service.preview_migration(project.id, login_id, password, waiting, hooks))
        if user_id is None or data.client_id is msgspec.UNSET:
            raise InvalidRequest(f"{data.event} is tested against a user and a client: give user_id and client_id")
        preview = await tokens_service.preview(
            project.id, data.event, data.client_id, user_id, issuer=_origin(request), hooks=hooks
        )
        application = await tokens_service.applications.get(project.id, data.client_id)
        if data.event == "oidc.jwt.pre_create" and application and not application.issue_jwt_access_token:
            preview.warnings.append(
                f"client {data.client_id!r} gets opaque access tokens: oidc.jwt.pre_create hooks never run for"
                " it (this preview shows what they would do to a JWT)"
            )
        return HookTestResult(preview)
