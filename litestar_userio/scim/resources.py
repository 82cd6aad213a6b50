"""The SCIM User and Group resources (RFC 7643) to and from the plugin's users and groups (docs/scim.md).

One user is the user the export writes; a SCIM write becomes an import record that `UserAdminService` applies with
the import's validation and rules. Multi-valued attributes hold at most one value here (`emails`, `phoneNumbers`,
`addresses`, `photos`): on the way in, the primary one, else the first.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import msgspec

from litestar_userio.errors import ScimError

__all__ = [
    "ERROR_SCHEMA",
    "GROUP_SCHEMA",
    "LIST_SCHEMA",
    "PATCH_SCHEMA",
    "USER_SCHEMA",
    "UserInput",
    "group_resource",
    "user_input",
    "user_resource",
    "version_of",
]

USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
BULK_REQUEST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:BulkRequest"
BULK_RESPONSE_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:BulkResponse"

_NAME = {"givenName": "given_name", "familyName": "family_name", "middleName": "middle_name"}
_PLAIN = {
    "displayName": "name",
    "nickName": "nickname",
    "profileUrl": "profile",
    "locale": "locale",
    "timezone": "zoneinfo",
}
_ADDRESS = {
    "formatted": "formatted",
    "streetAddress": "street_address",
    "locality": "locality",
    "region": "region",
    "postalCode": "postal_code",
    "country": "country",
}
_MAPPED = ("preferred_username", *_NAME.values(), *_PLAIN.values(), "email", "phone_number", "address", "picture")
"""The user's attributes a SCIM resource holds: a PUT sets each, or removes it when the resource has none."""

_encode_sorted = msgspec.json.Encoder(order="sorted").encode


def version_of(resource: dict[str, Any]) -> str:
    """The resource's ETag (RFC 7644 3.14): a weak tag of its content, `meta.version` and `If-Match`."""
    content = {k: v for k, v in resource.items() if k != "meta"}
    return 'W/"' + hashlib.sha256(_encode_sorted(content)).hexdigest()[:20] + '"'


def _meta(resource: dict[str, Any], kind: str, created: Any, modified: Any, location: str) -> dict[str, Any]:
    resource["meta"] = {
        "resourceType": kind,
        "created": created,
        "lastModified": modified or created,
        "location": location,
        "version": version_of(resource),
    }
    return resource


def user_resource(
    document: dict[str, Any], external_id: str | None, groups: list[dict[str, str]], base_url: str
) -> dict[str, Any]:
    """The SCIM User of an exported user; `groups` are its groups as `{value, display, $ref}`."""
    user_id = document["sub"]
    resource: dict[str, Any] = {"schemas": [USER_SCHEMA], "id": user_id}
    if external_id is not None:
        resource["externalId"] = external_id
    resource["userName"] = (
        document.get("preferred_username") or document.get("email") or document.get("phone_number") or user_id
    )
    name = {scim: document[ours] for scim, ours in _NAME.items() if document.get(ours) is not None}
    if name:
        resource["name"] = name
    for scim, ours in _PLAIN.items():
        if document.get(ours) is not None:
            resource[scim] = document[ours]
    resource["active"] = not document.get("disabled", False)
    if document.get("email"):
        resource["emails"] = [{"value": document["email"], "type": "work"}]
    if document.get("phone_number"):
        resource["phoneNumbers"] = [{"value": document["phone_number"], "type": "work"}]
    address = document.get("address") or {}
    if address:
        resource["addresses"] = [
            {**{scim: address[ours] for scim, ours in _ADDRESS.items() if ours in address}, "type": "work"}
        ]
    if document.get("picture"):
        resource["photos"] = [{"value": document["picture"], "type": "photo"}]
    if groups:
        resource["groups"] = groups
    return _meta(
        resource, "User", document.get("created_at"), document.get("updated_at"), f"{base_url}/Users/{user_id}"
    )


def group_resource(
    group_id: str,
    name: str,
    external_id: str | None,
    members: list[dict[str, str]],
    created: Any,
    modified: Any,
    base_url: str,
) -> dict[str, Any]:
    """The SCIM Group; `members` as `{value, display, $ref, type}`."""
    resource: dict[str, Any] = {"schemas": [GROUP_SCHEMA], "id": group_id}
    if external_id is not None:
        resource["externalId"] = external_id
    resource["displayName"] = name
    resource["members"] = members
    return _meta(resource, "Group", created, modified, f"{base_url}/Groups/{group_id}")


@dataclass
class UserInput:
    """A SCIM User body as the plugin applies it: an import record and what the record does not carry."""

    record: dict[str, Any]
    """The import record: every mapped attribute the resource gives (with `replace`, the others as null)."""
    external_id: str | None
    password: str | None
    active: bool


def as_bool(value: Any, name: str) -> bool:
    """A SCIM boolean; Entra sends `"True"` and `"False"` as strings."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ScimError("invalidValue", f"{name} must be a boolean")


def _pick(values: Any, name: str) -> dict[str, Any] | None:
    """The primary value of a multi-valued attribute, else the first; None when it holds none."""
    if values is None:
        return None
    if not isinstance(values, list) or not all(isinstance(v, dict) for v in values):
        raise ScimError("invalidValue", f"{name} must be an array of objects")
    if not values:
        return None
    for value in values:
        if value.get("primary") is True or value.get("primary") == "true" or value.get("primary") == "True":
            return dict(value)
    return dict(values[0])


def _lower_keys(resource: dict[str, Any]) -> dict[str, Any]:
    """Attribute names are case-insensitive (RFC 7643 2.1): each top-level member under its schema's spelling."""
    spelled = {name.lower(): name for name in (*_NAME, *_PLAIN, *_ADDRESS, *_TOP)}
    out: dict[str, Any] = {}
    for key, value in resource.items():
        out[spelled.get(key.lower(), key)] = value
    return out


_TOP = (
    "schemas",
    "id",
    "externalId",
    "userName",
    "name",
    "emails",
    "phoneNumbers",
    "addresses",
    "photos",
    "active",
    "password",
    "groups",
    "meta",
    "displayName",
)


def user_input(resource: Any, *, replace: bool) -> UserInput:
    """The import record of a SCIM User body (POST, PUT, or a PATCH's result); 400 `invalidValue` when malformed.

    With `replace` (PUT), an attribute the resource lacks is removed (null); else it is left out.
    """
    if not isinstance(resource, dict):
        raise ScimError("invalidSyntax", "the body must be a JSON object")
    resource = _lower_keys(resource)
    record: dict[str, Any] = {}
    user_name = resource.get("userName")
    if not isinstance(user_name, str) or not user_name.strip():
        raise ScimError("invalidValue", "userName is required")
    record["preferred_username"] = user_name
    name = resource.get("name")
    if name is not None and not isinstance(name, dict):
        raise ScimError("invalidValue", "name must be an object")
    name = {{k.lower(): k for k in _NAME}.get(k.lower(), k): v for k, v in (name or {}).items()}
    for scim, ours in _NAME.items():
        if name.get(scim) is not None:
            record[ours] = name[scim]
    for scim, ours in _PLAIN.items():
        if resource.get(scim) is not None:
            record[ours] = resource[scim]
    for scim, ours in (("emails", "email"), ("phoneNumbers", "phone_number"), ("photos", "picture")):
        value = _pick(resource.get(scim), scim)
        if value is not None and value.get("value") is not None:
            record[ours] = value["value"]
    address = _pick(resource.get("addresses"), "addresses")
    if address is not None:
        parts = {ours: address[scim] for scim, ours in _ADDRESS.items() if address.get(scim) is not None}
        if parts:
            record["address"] = parts
    if replace:
        for attribute in _MAPPED:
            record.setdefault(attribute, None)
    external_id = resource.get("externalId")
    if external_id is not None and not isinstance(external_id, str):
        raise ScimError("invalidValue", "externalId must be a string")
    password = resource.get("password")
    if password is not None and (not isinstance(password, str) or not password):
        raise ScimError("invalidValue", "password must be a non-empty string")
    active = as_bool(resource.get("active", True), "active")
    return UserInput(record, external_id, password, active)
