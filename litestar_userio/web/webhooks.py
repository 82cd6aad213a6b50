"""The webhooks admin API (docs/webhooks.md; export-style envelope).

`GET/PUT /webhooks`, `POST /webhooks/{id}/secret`, `GET /webhooks/deliveries`,
`POST /webhooks/deliveries/{id}/retry`. Thin: authenticate (the admin guard), decode the typed body, call
`WebhookService`, wrap the answer in `result`.
"""

from typing import Annotated, Literal

from litestar import Controller, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, Parameter, QueryParameter

from litestar_userio.projects.project_service import ProjectRecord
from litestar_userio.web.bodies import BODY_PARSER, BodySchema, json_body, json_parser
from litestar_userio.web.error_responses import export_error_handler
from litestar_userio.web.openapi import ExportErrorBody, error_responses
from litestar_userio.web.providers import admin_dependencies, authenticate_admin, provide_webhook_service
from litestar_userio.webhooks.webhook_schemas import (
    DeliveryPageResult,
    DeliveryResult,
    WebhookList,
    WebhookListResult,
    WebhookSpecList,
)
from litestar_userio.webhooks.webhook_service import WebhookService

__all__ = ["WebhookListBody", "WebhooksController"]

WebhookListBody = Annotated[WebhookSpecList, json_body("WebhookListBody"), BodySchema(WebhookSpecList)]
"""`data: WebhookListBody` is a `WebhookSpecList` (its route decodes it by `parse_json_body`)."""


class WebhooksController(Controller):
    """Thin: the service holds the rules (URLs, secrets, retries)."""

    path = "/webhooks"
    tags = ["Webhooks"]
    guards = [authenticate_admin]
    dependencies = admin_dependencies(webhooks_service=provide_webhook_service)
    exception_handlers = {Exception: export_error_handler}
    request_max_body_size = 256 * 1024

    @get("/", summary="The project's webhooks (never their secrets)", responses=error_responses(ExportErrorBody, 403))
    async def list_webhooks(
        self, project: NamedDependency[ProjectRecord], webhooks_service: NamedDependency[WebhookService]
    ) -> WebhookListResult:
        return WebhookListResult(WebhookList(await webhooks_service.webhooks(project.id)))

    @put(
        "/",
        opt={BODY_PARSER: json_parser(WebhookSpecList)},
        summary="Replace the webhooks; a new one's secret is in this answer only",
        responses=error_responses(ExportErrorBody, 400, 403, 415, 503),
    )
    async def replace_webhooks(
        self,
        data: WebhookListBody,
        project: NamedDependency[ProjectRecord],
        webhooks_service: NamedDependency[WebhookService],
    ) -> WebhookListResult:
        return WebhookListResult(WebhookList(await webhooks_service.replace(project.id, data.webhooks)))

    @post(
        "/{webhook_id:str}/secret",
        status_code=200,
        summary="Rotate the webhook's secret; the new one is in this answer only",
        responses=error_responses(ExportErrorBody, 403, 404, 503),
    )
    async def rotate_secret(
        self,
        webhook_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        webhooks_service: NamedDependency[WebhookService],
    ) -> WebhookListResult:
        return WebhookListResult(WebhookList([await webhooks_service.rotate_secret(project.id, webhook_id)]))

    @get(
        "/deliveries",
        summary="The project's deliveries, newest first, with their attempts and status",
        responses=error_responses(ExportErrorBody, 400, 403, 503),
    )
    async def list_deliveries(
        self,
        project: NamedDependency[ProjectRecord],
        webhooks_service: NamedDependency[WebhookService],
        webhook_id: str | None = Parameter(default=None, max_length=64),
        status: Annotated[Literal["pending", "succeeded", "failed"] | None, QueryParameter()] = None,
        cursor: str | None = Parameter(default=None, max_length=200),
        limit: int = Parameter(default=50, ge=1, le=500),
    ) -> DeliveryPageResult:
        page = await webhooks_service.deliveries(
            project.id, webhook_id=webhook_id, status=status, cursor=cursor, limit=limit
        )
        return DeliveryPageResult(page)

    @post(
        "/deliveries/{delivery_id:str}/retry",
        status_code=200,
        summary="Send a failed delivery again now",
        responses=error_responses(ExportErrorBody, 403, 404, 503),
    )
    async def retry_delivery(
        self,
        delivery_id: FromPath[str],
        project: NamedDependency[ProjectRecord],
        webhooks_service: NamedDependency[WebhookService],
    ) -> DeliveryResult:
        return DeliveryResult(await webhooks_service.retry(project.id, delivery_id))
