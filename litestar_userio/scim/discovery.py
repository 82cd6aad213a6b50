"""`/ServiceProviderConfig`, `/ResourceTypes`, `/Schemas` (RFC 7643 5-7): exactly what this server supports.

Only the attributes a user or group keeps are published; `canonicalValues` of `locale` and `timezone` list a few of
the values the import's validation accepts (any BCP 47 tag, any IANA zone is accepted).
"""

from __future__ import annotations

from typing import Any

from litestar_userio.config import ScimConfig
from litestar_userio.scim.resources import GROUP_SCHEMA, USER_SCHEMA

__all__ = ["resource_types", "schemas", "service_provider_config"]

_SCHEMA_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema"


def _attr(
    name: str,
    kind: str = "string",
    *,
    multi: bool = False,
    required: bool = False,
    case_exact: bool = False,
    mutability: str = "readWrite",
    returned: str = "default",
    uniqueness: str = "none",
    sub: list[dict[str, Any]] | None = None,
    canonical: list[str] | None = None,
    references: list[str] | None = None,
    description: str = "",
) -> dict[str, Any]:
    attribute: dict[str, Any] = {
        "name": name,
        "type": kind,
        "multiValued": multi,
        "description": description or name,
        "required": required,
        "caseExact": case_exact,
        "mutability": mutability,
        "returned": returned,
        "uniqueness": uniqueness,
    }
    if sub is not None:
        attribute["subAttributes"] = sub
    if canonical is not None:
        attribute["canonicalValues"] = canonical
    if references is not None:
        attribute["referenceTypes"] = references
    return attribute


def _one_valued(
    value_kind: str = "string", *, references: list[str] | None = None, canonical: list[str] | None = None
) -> list[dict[str, Any]]:
    """Sub-attributes of our multi-valued attributes: each holds at most one value, its type fixed."""
    return [
        _attr("value", value_kind, references=references, canonical=canonical),
        _attr("type", canonical=["work"], description="Always work: one value is kept"),
    ]


_LOCALES = ["en-US", "en-GB", "fr-FR", "de-DE", "ja-JP"]
_ZONES = ["Europe/Paris", "America/New_York", "Asia/Tokyo", "UTC"]
_PHONES = ["+14155550123", "+442071838750", "+33142685300"]

USER_ATTRIBUTES = [
    _attr("userName", required=True, uniqueness="server", description="preferred_username; case-insensitive"),
    _attr(
        "name",
        "complex",
        sub=[_attr("givenName"), _attr("familyName"), _attr("middleName")],
        description="given_name, family_name, middle_name",
    ),
    _attr("displayName", description="name"),
    _attr("nickName", description="nickname"),
    _attr("profileUrl", "reference", references=["external"], description="profile"),
    _attr("locale", canonical=_LOCALES, description="locale: a BCP 47 tag"),
    _attr("timezone", canonical=_ZONES, description="zoneinfo: an IANA time zone"),
    _attr("active", "boolean", description="not disabled"),
    _attr("password", mutability="writeOnly", returned="never", description="hashed with the project's algorithm"),
    _attr("emails", "complex", multi=True, sub=_one_valued(), description="email: the primary, else the first"),
    _attr(
        "phoneNumbers",
        "complex",
        multi=True,
        sub=_one_valued(canonical=_PHONES),
        description="phone_number (E.164): the primary, else the first",
    ),
    _attr(
        "addresses",
        "complex",
        multi=True,
        sub=[
            _attr("formatted"),
            _attr("streetAddress"),
            _attr("locality"),
            _attr("region"),
            _attr("postalCode"),
            _attr("country"),
            _attr("type", canonical=["work"], description="Always work: one value is kept"),
        ],
        description="address: the primary, else the first",
    ),
    _attr(
        "photos",
        "complex",
        multi=True,
        sub=[
            _attr("value", "reference", references=["external"]),
            _attr("type", canonical=["photo"], description="Always photo: one value is kept"),
        ],
        description="picture",
    ),
    _attr(
        "groups",
        "complex",
        multi=True,
        mutability="readOnly",
        sub=[
            _attr("value", mutability="readOnly", case_exact=True),
            _attr("$ref", "reference", mutability="readOnly", references=["Group"]),
            _attr("display", mutability="readOnly"),
        ],
        description="the groups the user belongs to (change them through Groups)",
    ),
]

GROUP_ATTRIBUTES = [
    _attr("displayName", required=True, description="the group's name; its key is derived once and kept"),
    _attr(
        "members",
        "complex",
        multi=True,
        sub=[
            _attr("value", mutability="immutable", case_exact=True),
            _attr("$ref", "reference", mutability="immutable", references=["User"]),
            _attr("display", mutability="readOnly"),
        ],
        description="users of the project",
    ),
]


def service_provider_config(config: ScimConfig, base_url: str) -> dict[str, Any]:
    """RFC 7643 5."""
    return {
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
        "documentationUri": "https://github.com/litestar-org/litestar-userio/blob/main/docs/scim.md",
        "patch": {"supported": True},
        "bulk": {"supported": True, "maxOperations": config.max_operations, "maxPayloadSize": config.max_payload_size},
        "filter": {"supported": True, "maxResults": config.max_results},
        "changePassword": {"supported": True},
        "sort": {"supported": True},
        "etag": {"supported": True},
        "authenticationSchemes": [
            {
                "type": "oauthbearertoken",
                "name": "OAuth Bearer Token",
                "description": "A SCIM token of the project (POST /_api/admin/scim/tokens), as Authorization: Bearer",
                "primary": True,
            }
        ],
        "meta": {"resourceType": "ServiceProviderConfig", "location": f"{base_url}/ServiceProviderConfig"},
    }


def resource_types(base_url: str) -> list[dict[str, Any]]:
    """RFC 7643 6."""
    return [
        {
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
            "id": name,
            "name": name,
            "endpoint": f"/{name}s",
            "description": name,
            "schema": schema,
            "meta": {"resourceType": "ResourceType", "location": f"{base_url}/ResourceTypes/{name}"},
        }
        for name, schema in (("User", USER_SCHEMA), ("Group", GROUP_SCHEMA))
    ]


def schemas(base_url: str) -> list[dict[str, Any]]:
    """RFC 7643 7: the User and Group schemas, with only the attributes kept."""
    return [
        {
            "schemas": [_SCHEMA_SCHEMA],
            "id": schema,
            "name": name,
            "description": f"{name} Account" if name == "User" else name,
            "attributes": attributes,
            "meta": {"resourceType": "Schema", "location": f"{base_url}/Schemas/{schema}"},
        }
        for name, schema, attributes in (
            ("User", USER_SCHEMA, USER_ATTRIBUTES),
            ("Group", GROUP_SCHEMA, GROUP_ATTRIBUTES),
        )
    ]
