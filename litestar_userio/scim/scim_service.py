"""SCIM 2.0 (RFC 7643/7644, docs/scim.md): tokens, Users, Groups and Bulk over the single-user write path.

A SCIM write is `UserAdminService`'s write (create, update, set_password, disable, enable, delete): the import's
validation, login-id rules and update rules, the same events. A group's membership is a change of each member,
written the same way. Reads are SCIM's view of the exported user.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import msgspec

from litestar_userio.accounts.user_admin import NewUser, UserAdminService
from litestar_userio.changes.entries import ChangeOrigin
from litestar_userio.config import AuthConfig, ScimConfig
from litestar_userio.db.engine import Database
from litestar_userio.errors import (
    HTTPSRequired,
    NotFound,
    ScimAuthFailed,
    ScimError,
    ScimPreconditionFailed,
    ScimTooLarge,
    UnknownHost,
)
from litestar_userio.projects.project_service import ProjectRecord, ProjectService
from litestar_userio.scim.failures import error_body, scim_failure
from litestar_userio.scim.filters import GROUP_ATTRIBUTES, USER_ATTRIBUTES, FilterLimits, parse_filter
from litestar_userio.scim.patch import apply_patch
from litestar_userio.scim.resources import (
    BULK_RESPONSE_SCHEMA,
    GROUP_SCHEMA,
    USER_SCHEMA,
    UserInput,
    group_resource,
    user_input,
    user_resource,
)
from litestar_userio.scim.scim_repository import GroupRow, ScimRepository, TokenRow
from litestar_userio.users.search import AllOf, AnyOf, Compare, Condition, Constant, Negation, UserSort
from userio_core.clock import Clock
from userio_core.ids import new_id

__all__ = ["GroupNotFound", "ListQuery", "ScimService", "ScimTokenCreated"]

SCIM = ChangeOrigin("scim")
"""The change log's origin of every SCIM write (docs/changes.md)."""
_TOUCH_EVERY = timedelta(minutes=1)
_USER_MULTI = frozenset({"emails", "phonenumbers", "addresses", "photos", "groups"})
_GROUP_MULTI = frozenset({"members"})
_SORT_FIELDS = {
    "id": "id",
    "username": "username",
    "externalid": "external_id",
    "displayname": "name",
    "name.givenname": "given_name",
    "name.familyname": "family_name",
    "emails": "email",
    "emails.value": "email",
    "meta.created": "created_at",
    "meta.lastmodified": "updated_at",
}


class GroupNotFound(NotFound):
    """No group of that id in the project."""

    reason = "GroupNotFound"
    default_message = "group not found"


@dataclass
class ScimTokenCreated:
    """A new token: `token` is shown this once."""

    id: str
    token: str
    created_at: Any


@dataclass
class ListQuery:
    """A list request's parameters (RFC 7644 3.4.2)."""

    filter: str | None = None
    start_index: int = 1
    count: int | None = None
    sort_by: str | None = None
    sort_order: str | None = None


def token_hash(token: str) -> str:
    """How a token is stored: its SHA-256 (a token is 256 random bits: no salt or slow hash needed)."""
    return hashlib.sha256(token.encode()).hexdigest()


class ScimService:
    """SCIM's operations for one project at a time."""

    def __init__(
        self,
        db: Database,
        projects: ProjectService,
        user_admin: UserAdminService,
        clock: Clock,
        *,
        config: ScimConfig,
        auth: AuthConfig,
        served: bool = True,
    ) -> None:
        self.db = db
        self.projects = projects
        self.user_admin = user_admin
        self.clock = clock
        self.config = config
        self.auth = auth
        self.served = served
        """False when `UserIOConfig.scim` is None: no SCIM route, the token endpoints only."""
        self.repository = ScimRepository()
        self.limits = FilterLimits(config.max_filter_length, config.max_filter_clauses, config.max_filter_depth)

    # Tokens.

    async def create_token(self, project_id: str) -> ScimTokenCreated:
        """A new bearer token for the project; stored hashed, shown once."""
        token = "scim_" + secrets.token_urlsafe(32)
        token_id = "scimtoken_" + secrets.token_hex(12)
        now = self.clock.now()
        async with self.db.transaction() as tx:
            await self.repository.add_token(tx, project_id, token_id, token_hash(token), now)
        return ScimTokenCreated(token_id, token, now)

    async def list_tokens(self, project_id: str) -> list[TokenRow]:
        """The project's tokens (ids, created, last used), never their secrets."""
        async with self.db.reader() as tx:
            return await self.repository.tokens(tx, project_id)

    async def revoke_token(self, project_id: str, token_id: str) -> None:
        """Revoke at once; `NotFound` when the project has no such token."""
        async with self.db.transaction() as tx:
            if not await self.repository.delete_token(tx, project_id, token_id):
                raise NotFound("no SCIM token of that id")

    async def authenticate(self, scheme: str, host: str, authorization: str) -> ProjectRecord:
        """The project of a SCIM request: HTTPS, the project by `Host`, a bearer token of that project (else 401)."""
        if scheme != "https" and not self.auth.allow_http:
            raise HTTPSRequired("HTTPS is required")
        project = await self.projects.by_host(host)
        if project is None:
            raise UnknownHost()
        kind, _, token = authorization.partition(" ")
        if kind.lower() != "bearer" or not token.strip():
            raise ScimAuthFailed("missing Authorization: Bearer <SCIM token>")
        digest = token_hash(token.strip())
        async with self.db.reader() as tx:
            row = await self.repository.token_by_hash(tx, project.id, digest)
        if row is None:
            raise ScimAuthFailed("unknown or revoked SCIM token")
        now = self.clock.now()
        if row.last_used_at is None or now - row.last_used_at >= _TOUCH_EVERY:
            async with self.db.transaction() as tx:
                await self.repository.touch_token(tx, row.id, now)
        return project

    # Users.

    async def get_user(self, project: ProjectRecord, user_id: str, base_url: str) -> dict[str, Any]:
        """The SCIM User; 404 when the project has none of that id."""
        hit = await self.user_admin.get_hit(project.id, user_id)
        return await self._user_resource(project, hit.document, hit.external_id, base_url)

    async def list_users(
        self, project: ProjectRecord, query: ListQuery, base_url: str
    ) -> tuple[int, list[dict[str, Any]]]:
        """(totalResults, the page) of a filtered, sorted list."""
        rules = project.settings.login_id_rules()
        condition: Condition = Constant(True)
        if query.filter:
            condition = parse_filter(query.filter, USER_ATTRIBUTES, USER_SCHEMA, self.limits, rules.normalize)
        sort = UserSort()
        if query.sort_by:
            field = _SORT_FIELDS.get(query.sort_by.lower().removeprefix(USER_SCHEMA.lower() + ":"))
            if field is None:
                raise ScimError("invalidValue", f"sorting by {query.sort_by} is not supported")
            sort = UserSort(field, descending=(query.sort_order or "").lower() == "descending")
        count = self._count(query.count)
        page = await self.user_admin.search(
            project.id, condition, sort, offset=max(query.start_index, 1) - 1, limit=count
        )
        groups = await self._group_names(project.id)
        return page.total, [
            user_resource(hit.document, hit.external_id, self._user_groups(hit.document, groups, base_url), base_url)
            for hit in page.items
        ]

    async def create_user(self, project: ProjectRecord, body: Any, base_url: str) -> dict[str, Any]:
        """POST /Users: one import record through `UserAdminService.create` (409 `uniqueness` on a taken login id)."""
        given = user_input(body, replace=False)
        record = dict(given.record)
        if not given.active:
            record["disabled"] = True
        document, _ = await self.user_admin.create(
            project, msgspec.json.encode(record), origin=SCIM, password=given.password, external_id=given.external_id
        )
        return await self.get_user(project, document["sub"], base_url)

    async def create_users(
        self, project: ProjectRecord, bodies: list[Any], base_url: str
    ) -> list[dict[str, Any] | Exception]:
        """Several `POST /Users` at once (Bulk): each body as `create_user` takes it, each failing alone, one write."""
        outcomes: list[dict[str, Any] | Exception | None] = [None] * len(bodies)
        inputs: list[tuple[int, UserInput]] = []
        for index, body in enumerate(bodies):
            try:
                given = user_input(body, replace=False)
            except ScimError as exc:
                outcomes[index] = exc
                continue
            inputs.append((index, given))
        news = []
        for _, given in inputs:
            record = dict(given.record)
            if not given.active:
                record["disabled"] = True
            news.append(NewUser(msgspec.json.encode(record), given.password, given.external_id))
        made = await self.user_admin.create_many(project, news, origin=SCIM) if news else []
        for (index, given), outcome in zip(inputs, made, strict=True):
            if isinstance(outcome, Exception):
                outcomes[index] = outcome
            else:
                outcomes[index] = user_resource(outcome[0], given.external_id, [], base_url)
        return [o if o is not None else ScimError(None, "not created") for o in outcomes]

    async def replace_user(
        self, project: ProjectRecord, user_id: str, body: Any, base_url: str, if_match: str | None
    ) -> dict[str, Any]:
        """PUT /Users/{id}: every mapped attribute set as given, or removed when absent."""
        current = await self.get_user(project, user_id, base_url)
        _check_version(current, if_match)
        return await self._write_user(project, user_id, current, user_input(body, replace=True), base_url)

    async def patch_user(
        self, project: ProjectRecord, user_id: str, body: Any, base_url: str, if_match: str | None
    ) -> dict[str, Any]:
        """PATCH /Users/{id}: the operations on the resource, then written as a PUT; 200 with the whole resource."""
        current = await self.get_user(project, user_id, base_url)
        _check_version(current, if_match)
        patched = apply_patch(
            {k: v for k, v in current.items() if k not in ("meta", "groups")},
            body,
            schema=USER_SCHEMA,
            multi_valued=_USER_MULTI,
        )
        return await self._write_user(project, user_id, current, user_input(patched, replace=True), base_url)

    async def delete_user(self, project: ProjectRecord, user_id: str, if_match: str | None) -> None:
        """DELETE /Users/{id}: the user and everything of it."""
        if if_match is not None:
            _check_version(await self.get_user(project, user_id, ""), if_match)
        await self.user_admin.delete(project, user_id, origin=SCIM)

    async def _write_user(
        self, project: ProjectRecord, user_id: str, current: dict[str, Any], given: UserInput, base_url: str
    ) -> dict[str, Any]:
        record = msgspec.json.encode(given.record)
        await self.user_admin.update(project, user_id, record, origin=SCIM, external_id=given.external_id)
        if given.password is not None:
            await self.user_admin.set_password(project, user_id, password=given.password, origin=SCIM)
        if given.active != current["active"]:
            if given.active:
                await self.user_admin.enable(project, user_id, origin=SCIM)
            else:
                await self.user_admin.disable(project, user_id, origin=SCIM)
        return await self.get_user(project, user_id, base_url)

    async def _user_resource(
        self, project: ProjectRecord, document: dict[str, Any], external_id: str | None, base_url: str
    ) -> dict[str, Any]:
        groups = await self._group_names(project.id) if document.get("groups") else {}
        return user_resource(document, external_id, self._user_groups(document, groups, base_url), base_url)

    async def _group_names(self, project_id: str) -> dict[str, GroupRow]:
        async with self.db.reader() as tx:
            return {group.key: group for group in await self.repository.groups(tx, project_id)}

    @staticmethod
    def _user_groups(document: dict[str, Any], groups: dict[str, GroupRow], base_url: str) -> list[dict[str, str]]:
        out = []
        for key in document.get("groups") or []:
            group = groups.get(key)
            if group is not None:
                out.append(
                    {"value": group.id, "display": group.name or group.key, "$ref": f"{base_url}/Groups/{group.id}"}
                )
        return out

    def _count(self, count: int | None) -> int:
        if count is None:
            return self.config.max_results
        return max(0, min(count, self.config.max_results))

    # Groups.

    async def get_group(self, project: ProjectRecord, group_id: str, base_url: str) -> dict[str, Any]:
        """The SCIM Group; 404 when the project has none of that id."""
        async with self.db.reader() as tx:
            found = await self.repository.groups(tx, project.id, [group_id])
        if not found:
            raise GroupNotFound()
        return await self._group_resource(project, found[0], base_url)

    async def list_groups(
        self, project: ProjectRecord, query: ListQuery, base_url: str
    ) -> tuple[int, list[dict[str, Any]]]:
        """Groups are few per project: filtered here, over the project's groups, by the same parsed conditions."""
        condition: Condition = Constant(True)
        if query.filter:
            condition = parse_filter(query.filter, GROUP_ATTRIBUTES, GROUP_SCHEMA, self.limits)
        async with self.db.reader() as tx:
            groups = await self.repository.groups(tx, project.id)
        matched = [g for g in groups if _group_matches(condition, g)]
        if query.sort_by:
            field = query.sort_by.lower()
            if field not in ("displayname", "id", "externalid", "meta.created"):
                raise ScimError("invalidValue", f"sorting by {query.sort_by} is not supported")
            attribute = {"displayname": "name", "id": "id", "externalid": "external_id", "meta.created": "created_at"}[
                field
            ]
            matched.sort(
                key=lambda g: (getattr(g, attribute) is None, str(getattr(g, attribute) or "").lower()),
                reverse=(query.sort_order or "").lower() == "descending",
            )
        start = max(query.start_index, 1) - 1
        page = matched[start : start + self._count(query.count)]
        return len(matched), [await self._group_resource(project, g, base_url) for g in page]

    async def create_group(self, project: ProjectRecord, body: Any, base_url: str) -> dict[str, Any]:
        """POST /Groups: a group key derived once from displayName; its members through each user's write."""
        name, external_id, members = _group_input(body)
        now = self.clock.now()
        group_id = new_id()
        async with self.db.transaction() as tx:
            await self._check_members(tx, project.id, members)
            key = await self._free_key(tx, project.id, name)
            await self.repository.add_group(tx, project.id, group_id, key, name, external_id, now)
        await self._set_members(project, key, [], members)
        return await self.get_group(project, group_id, base_url)

    async def replace_group(
        self, project: ProjectRecord, group_id: str, body: Any, base_url: str, if_match: str | None
    ) -> dict[str, Any]:
        """PUT /Groups/{id}: name, externalId and members as given (the key stays)."""
        current = await self.get_group(project, group_id, base_url)
        _check_version(current, if_match)
        return await self._write_group(project, group_id, current, _group_input(body), base_url)

    async def patch_group(
        self, project: ProjectRecord, group_id: str, body: Any, base_url: str, if_match: str | None
    ) -> dict[str, Any]:
        """PATCH /Groups/{id}: members add/remove, displayName, externalId."""
        current = await self.get_group(project, group_id, base_url)
        _check_version(current, if_match)
        patched = apply_patch(
            {k: v for k, v in current.items() if k != "meta"},
            body,
            schema=GROUP_SCHEMA,
            multi_valued=_GROUP_MULTI,
            read_only=frozenset({"id", "meta"}),
        )
        return await self._write_group(project, group_id, current, _group_input(patched), base_url)

    async def delete_group(self, project: ProjectRecord, group_id: str, if_match: str | None) -> None:
        """DELETE /Groups/{id}: each member leaves it (a change of the user), then the group goes."""
        async with self.db.reader() as tx:
            found = await self.repository.groups(tx, project.id, [group_id])
        if not found:
            raise GroupNotFound()
        if if_match is not None:
            _check_version(await self.get_group(project, group_id, ""), if_match)
        group = found[0]
        await self._set_members(project, group.key, group.members, [])
        async with self.db.transaction() as tx:
            await self.repository.delete_group(tx, project.id, group_id)

    async def _write_group(
        self,
        project: ProjectRecord,
        group_id: str,
        current: dict[str, Any],
        given: tuple[str, str | None, list[str]],
        base_url: str,
    ) -> dict[str, Any]:
        name, external_id, members = given
        now = self.clock.now()
        async with self.db.transaction() as tx:
            found = await self.repository.groups(tx, project.id, [group_id])
            if not found:
                raise GroupNotFound()
            await self._check_members(tx, project.id, members)
            await self.repository.update_group(tx, project.id, group_id, name, external_id, now)
        await self._set_members(project, found[0].key, found[0].members, members)
        return await self.get_group(project, group_id, base_url)

    async def _check_members(self, tx: Any, project_id: str, members: list[str]) -> None:
        known = await self.repository.users_in_project(tx, project_id, members)
        unknown = [m for m in members if m not in known]
        if unknown:
            raise ScimError("invalidValue", f"no user of this project has the id {unknown[0]!r}")

    async def _set_members(self, project: ProjectRecord, key: str, before: list[str], after: list[str]) -> None:
        """Each user who joins or leaves: its `groups` written through `UserAdminService.update`."""
        joined = [u for u in dict.fromkeys(after) if u not in before]
        left = [u for u in before if u not in after]
        for user_id, joins in [(u, True) for u in joined] + [(u, False) for u in left]:
            hit = await self.user_admin.get_hit(project.id, user_id)
            keys = [k for k in hit.document.get("groups") or [] if k != key] + ([key] if joins else [])
            await self.user_admin.update(project, user_id, msgspec.json.encode({"groups": sorted(keys)}), origin=SCIM)

    async def _group_resource(self, project: ProjectRecord, group: GroupRow, base_url: str) -> dict[str, Any]:
        members = [{"value": m, "$ref": f"{base_url}/Users/{m}"} for m in group.members]
        created = _timestamp(group.created_at)
        return group_resource(
            group.id,
            group.name or group.key,
            group.external_id,
            members,
            created,
            _timestamp(group.updated_at),
            base_url,
        )

    # Bulk.

    async def bulk(self, project: ProjectRecord, body: Any, base_url: str) -> dict[str, Any]:
        """POST /Bulk (RFC 7644 3.7): each operation as its own request, in order; over `maxOperations` 413, none run.

        An operation naming another's `bulkId` runs after it; `failOnErrors` stops after that many failures. An
        operation that names a `bulkId` no operation created (or one that failed) fails with 409 `invalidValue`.
        """
        if not isinstance(body, dict):
            raise ScimError("invalidSyntax", "the bulk request must be a JSON object")
        lowered = _lower(body)
        operations = lowered.get("operations")
        if not isinstance(operations, list) or not all(isinstance(op, dict) for op in operations):
            raise ScimError("invalidSyntax", "Operations must be an array of objects")
        if len(operations) > self.config.max_operations:
            raise ScimTooLarge(f"{len(operations)} operations: maxOperations is {self.config.max_operations}")
        fail_on_errors = lowered.get("failonerrors")
        if fail_on_errors is not None and (
            isinstance(fail_on_errors, bool) or not isinstance(fail_on_errors, int) or fail_on_errors < 1
        ):
            raise ScimError("invalidValue", "failOnErrors must be a positive integer")
        ops = [_lower(op) for op in operations]
        created: dict[str, str] = {}
        failed: set[str] = set()
        results: dict[int, dict[str, Any]] = {}
        errors = 0
        pending = list(range(len(ops)))
        while pending:
            waiting = []
            batch: list[int] = []
            for index in pending:
                op = ops[index]
                refs = _bulk_refs([op.get("path"), op.get("data")], set())
                if fail_on_errors is None and not refs and _creates_user(op):
                    batch.append(index)  # consecutive creations are written together, each as its own POST
                    continue
                if batch:
                    errors += await self._bulk_create_users(project, ops, batch, created, failed, results, base_url)
                    batch = []
                if refs & failed or (refs - created.keys() and not refs - created.keys() <= _bulk_ids(ops, pending)):
                    results[index] = self._bulk_failure(op, 409, "invalidValue", "a bulkId it names was not created")
                    errors += 1
                elif refs - created.keys():
                    waiting.append(index)
                    continue
                else:
                    results[index] = await self._bulk_operation(project, op, created, base_url)
                    if int(results[index]["status"]) >= 400:
                        errors += 1
                        if isinstance(op.get("bulkid"), str):
                            failed.add(op["bulkid"])
                if fail_on_errors is not None and errors >= fail_on_errors:
                    waiting = []
                    break
            if batch:
                errors += await self._bulk_create_users(project, ops, batch, created, failed, results, base_url)
            if waiting and len(waiting) == len(pending):  # references among themselves only: a cycle
                for index in waiting:
                    results[index] = self._bulk_failure(ops[index], 409, "invalidValue", "circular bulkId references")
                break
            pending = waiting
        return {"schemas": [BULK_RESPONSE_SCHEMA], "Operations": [results[i] for i in sorted(results)]}

    async def _bulk_create_users(
        self,
        project: ProjectRecord,
        ops: list[dict[str, Any]],
        indices: list[int],
        created: dict[str, str],
        failed: set[str],
        results: dict[int, dict[str, Any]],
        base_url: str,
    ) -> int:
        """Consecutive `POST /Users` operations through `create_users` (one write); the number that failed."""
        made = await self.create_users(project, [ops[i].get("data") for i in indices], base_url)
        errors = 0
        for index, outcome in zip(indices, made, strict=True):
            op = ops[index]
            if isinstance(outcome, dict):
                created[op["bulkid"]] = outcome["id"]
                results[index] = _bulk_result("POST", op["bulkid"], 201, outcome)
            else:
                status, scim_type, detail = scim_failure(outcome)
                results[index] = self._bulk_failure(op, status, scim_type, detail)
                failed.add(op["bulkid"])
                errors += 1
        return errors

    async def _bulk_operation(
        self, project: ProjectRecord, op: dict[str, Any], created: dict[str, str], base_url: str
    ) -> dict[str, Any]:
        method = str(op.get("method", "")).upper()
        bulk_id = op.get("bulkid")
        try:
            path = op.get("path")
            if isinstance(path, str):
                path = _PATH_REF.sub(lambda m: created[m[1]], path)
            data = _resolve(op.get("data"), created)
            version = op.get("version")
            match = _BULK_PATH.match(path) if isinstance(path, str) else None
            if match is None:
                raise ScimError("invalidPath", "path must be /Users, /Groups, /Users/{id} or /Groups/{id}")
            kind, resource_id = match[1], match[2]
            users = kind == "Users"
            if method == "POST" and resource_id is None:
                if not isinstance(bulk_id, str) or not bulk_id:
                    raise ScimError("invalidValue", "a POST operation needs a bulkId")
                made = await (self.create_user if users else self.create_group)(project, data, base_url)
                created[bulk_id] = made["id"]
                return _bulk_result(method, bulk_id, 201, made)
            if resource_id is None or method not in ("PUT", "PATCH", "DELETE"):
                raise ScimError("invalidSyntax", f"{method} {path} is not an operation of Bulk")
            if method == "DELETE":
                await (self.delete_user if users else self.delete_group)(project, resource_id, version)
                return {"method": method, "location": f"{base_url}/{kind}/{resource_id}", "status": "204"}
            if method == "PUT":
                replaced = await (self.replace_user if users else self.replace_group)(
                    project, resource_id, data, base_url, version
                )
                return _bulk_result(method, bulk_id, 200, replaced)
            patched = await (self.patch_user if users else self.patch_group)(
                project, resource_id, data, base_url, version
            )
            return _bulk_result(method, bulk_id, 200, patched)
        except Exception as exc:  # each operation fails alone, as its single request would
            status, scim_type, detail = scim_failure(exc)
            return self._bulk_failure(op, status, scim_type, detail)

    @staticmethod
    def _bulk_failure(op: dict[str, Any], status: int, scim_type: str | None, detail: str) -> dict[str, Any]:
        result: dict[str, Any] = {"method": str(op.get("method", "")).upper()}
        if isinstance(op.get("bulkid"), str):
            result["bulkId"] = op["bulkid"]
        result["status"] = str(status)
        result["response"] = error_body(status, scim_type, detail)
        return result

    async def _free_key(self, tx: Any, project_id: str, name: str) -> str:
        base = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:30] or "group"
        if not re.match(r"[a-z_]", base):
            base = "g_" + base
        key = base
        while await self.repository.key_taken(tx, project_id, key):
            key = f"{base}_{secrets.token_hex(3)}"
        return key


_BULK_PATH = re.compile(r"^/(Users|Groups)(?:/([^/?#]+))?$")
_BULK_REF = re.compile(r"^bulkId:(.+)$")
_PATH_REF = re.compile(r"(?<=/)bulkId:([^/?#]+)")


def _bulk_refs(value: Any, found: set[str]) -> set[str]:
    """Every `bulkId:<id>` a Bulk operation's path or data names."""
    if isinstance(value, str):
        if match := _BULK_REF.match(value):
            found.add(match[1])
        found.update(_PATH_REF.findall(value))
    elif isinstance(value, list):
        for item in value:
            _bulk_refs(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _bulk_refs(item, found)
    return found


def _resolve(value: Any, ids: dict[str, str]) -> Any:
    """The value with each `bulkId:<id>` replaced by the id that operation created."""
    if isinstance(value, str):
        match = _BULK_REF.match(value)
        return ids[match[1]] if match else value
    if isinstance(value, list):
        return [_resolve(item, ids) for item in value]
    if isinstance(value, dict):
        return {key: _resolve(item, ids) for key, item in value.items()}
    return value


def _timestamp(value: Any) -> str | None:
    return None if value is None else msgspec.json.encode(value)[1:-1].decode()


def _creates_user(op: dict[str, Any]) -> bool:
    """A Bulk `POST /Users` with its bulkId."""
    return (
        str(op.get("method", "")).upper() == "POST"
        and op.get("path") == "/Users"
        and isinstance(op.get("bulkid"), str)
        and bool(op["bulkid"])
    )


def _bulk_ids(ops: list[dict[str, Any]], indices: list[int]) -> set[str]:
    """The bulkIds the operations at `indices` would create."""
    return {ops[i]["bulkid"] for i in indices if isinstance(ops[i].get("bulkid"), str)}


def _bulk_result(method: str, bulk_id: Any, status: int, resource: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"method": method}
    if isinstance(bulk_id, str):
        result["bulkId"] = bulk_id
    result["location"] = resource["meta"]["location"]
    result["version"] = resource["meta"]["version"]
    result["status"] = str(status)
    return result


def _lower(obj: dict[str, Any]) -> dict[str, Any]:
    return {key.lower(): value for key, value in obj.items()}


def _check_version(current: dict[str, Any], if_match: str | None) -> None:
    """`If-Match` (RFC 7644 3.14): `*` or one of the tags given must be the resource's version, else 412."""
    if if_match is None:
        return
    tags = [t.strip() for t in if_match.split(",")]
    version = current["meta"]["version"]
    strong = version.removeprefix("W/")
    if "*" in tags or any(tag.removeprefix("W/") == strong for tag in tags):
        return
    raise ScimPreconditionFailed()


def _group_input(body: Any) -> tuple[str, str | None, list[str]]:
    if not isinstance(body, dict):
        raise ScimError("invalidSyntax", "the body must be a JSON object")
    lowered = {k.lower(): v for k, v in body.items()}
    name = lowered.get("displayname")
    if not isinstance(name, str) or not name.strip():
        raise ScimError("invalidValue", "displayName is required")
    external_id = lowered.get("externalid")
    if external_id is not None and not isinstance(external_id, str):
        raise ScimError("invalidValue", "externalId must be a string")
    members = lowered.get("members") or []
    if not isinstance(members, list):
        raise ScimError("invalidValue", "members must be an array")
    ids = []
    for member in members:
        value = member.get("value") if isinstance(member, dict) else None
        if not isinstance(value, str):
            raise ScimError("invalidValue", "each member needs a value: a user's id")
        ids.append(value)
    return name, external_id, list(dict.fromkeys(ids))


def _group_matches(condition: Condition, group: GroupRow) -> bool:
    """A group against a condition over `GROUP_ATTRIBUTES`' fields (evaluated here: a project has few groups)."""
    if isinstance(condition, Constant):
        return condition.value
    if isinstance(condition, Negation):
        return not _group_matches(condition.part, group)
    if isinstance(condition, AllOf):
        return all(_group_matches(p, group) for p in condition.parts)
    if isinstance(condition, AnyOf):
        return any(_group_matches(p, group) for p in condition.parts)
    assert isinstance(condition, Compare)
    values: list[Any]
    if condition.field == "member":
        values = list(group.members)
    else:
        value = {
            "id": group.id,
            "name": group.name or group.key,
            "external_id": group.external_id,
            "created_at": group.created_at,
            "updated_at": group.updated_at or group.created_at,
        }[condition.field]
        values = [] if value is None else [value]
    if condition.op == "pr":
        return bool(values)
    if condition.op == "ne":
        return not any(_compare_value(v, "eq", condition) for v in values)
    return any(_compare_value(v, condition.op, condition) for v in values)


def _compare_value(actual: Any, op: str, condition: Compare) -> bool:
    wanted = condition.value
    if not isinstance(actual, str):
        ordering = {
            "eq": actual == wanted,
            "gt": actual > wanted,
            "ge": actual >= wanted,
            "lt": actual < wanted,
            "le": actual <= wanted,
        }
        return bool(ordering.get(op, False))
    text, want = actual, str(wanted)
    if not condition.case_exact:
        text, want = text.lower(), want.lower()
    return {
        "eq": text == want,
        "co": want in text,
        "sw": text.startswith(want),
        "ew": text.endswith(want),
        "gt": text > want,
        "ge": text >= want,
        "lt": text < want,
        "le": text <= want,
    }[op]
