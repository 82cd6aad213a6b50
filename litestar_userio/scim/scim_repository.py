"""SCIM's own rows: the projects' bearer tokens, and groups as SCIM sees them (name, externalId, members).

Ordinary queries, built with Piccolo's query builder on the caller's transaction. A group's members are written by
the users' own write path (`UserAdminService`), never here: a membership is a change of the user.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from litestar_userio.db.engine import Tx
from litestar_userio.db.tables import Group, ScimToken, User, UserGroup

__all__ = ["GroupRow", "ScimRepository", "TokenRow"]


@dataclass
class TokenRow:
    """A SCIM token as listed (never its secret)."""

    id: str
    created_at: datetime
    last_used_at: datetime | None


@dataclass
class GroupRow:
    """A group of a project with its members' ids."""

    id: str
    key: str
    name: str | None
    external_id: str | None
    created_at: datetime
    updated_at: datetime | None
    members: list[str] = field(default_factory=list)


def _group(row: Any) -> GroupRow:
    return GroupRow(
        id=row["id"],
        key=row["key"],
        name=row["name"],
        external_id=row["external_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class ScimRepository:
    """Tokens and groups inside a caller's transaction."""

    async def add_token(self, tx: Tx, project_id: str, token_id: str, token_hash: str, at: datetime) -> None:
        """Store a new token by its hash."""
        await tx.insert(ScimToken, {"id": token_id, "project": project_id, "token_hash": token_hash, "created_at": at})

    async def tokens(self, tx: Tx, project_id: str) -> list[TokenRow]:
        """The project's tokens, oldest first."""
        t = ScimToken
        rows = await tx.run(
            t.select(t.id, t.created_at, t.last_used_at).where(t.project == project_id).order_by(t.created_at, t.id)
        )
        return [TokenRow(r["id"], r["created_at"], r["last_used_at"]) for r in rows]

    async def delete_token(self, tx: Tx, project_id: str, token_id: str) -> bool:
        """Revoke: the row goes. False when the project has no such token."""
        t = ScimToken
        found = await tx.run(t.select(t.id).where((t.project == project_id) & (t.id == token_id)))
        if not found:
            return False
        await tx.run(t.delete().where((t.project == project_id) & (t.id == token_id)))
        return True

    async def token_by_hash(self, tx: Tx, project_id: str, token_hash: str) -> TokenRow | None:
        """The project's token of that hash; None for an unknown, revoked or another project's token."""
        t = ScimToken
        row = await tx.first(
            t.select(t.id, t.created_at, t.last_used_at).where((t.token_hash == token_hash) & (t.project == project_id))
        )
        return None if row is None else TokenRow(row["id"], row["created_at"], row["last_used_at"])

    async def touch_token(self, tx: Tx, token_id: str, at: datetime) -> None:
        """Record a use."""
        await tx.run(ScimToken.update({ScimToken.last_used_at: at}).where(ScimToken.id == token_id))

    # Groups.

    async def groups(self, tx: Tx, project_id: str, group_ids: list[str] | None = None) -> list[GroupRow]:
        """The project's groups (or those of `group_ids`) with their members, in creation order."""
        g = Group
        query = g.select(g.id, g.key, g.name, g.external_id, g.created_at, g.updated_at).where(g.project == project_id)
        if group_ids is not None:
            if not group_ids:
                return []
            query = query.where(g.id.is_in(group_ids))
        groups = [_group(r) for r in await tx.run(query.order_by(g.created_at, g.id))]
        if groups:
            by_id = {group.id: group for group in groups}
            m = UserGroup
            for row in await tx.run(
                m.select(m.group.id.as_alias("group_id"), m.user.id.as_alias("user_id"))
                .where(m.group.id.is_in(list(by_id)))
                .order_by(m.id)
            ):
                by_id[row["group_id"]].members.append(row["user_id"])
        return groups

    async def key_taken(self, tx: Tx, project_id: str, key: str) -> bool:
        """Whether the project has a group of that key."""
        return bool(await tx.run(Group.select(Group.id).where((Group.project == project_id) & (Group.key == key))))

    async def add_group(
        self, tx: Tx, project_id: str, group_id: str, key: str, name: str, external_id: str | None, at: datetime
    ) -> None:
        """A new group (no members yet)."""
        await tx.insert(
            Group,
            {
                "id": group_id,
                "project": project_id,
                "key": key,
                "name": name,
                "external_id": external_id,
                "created_at": at,
                "updated_at": at,
            },
        )

    async def update_group(
        self, tx: Tx, project_id: str, group_id: str, name: str, external_id: str | None, at: datetime
    ) -> None:
        """Rename the group (its key stays) and set its external id."""
        g = Group
        await tx.run(
            g.update({g.name: name, g.external_id: external_id, g.updated_at: at}).where(
                (g.project == project_id) & (g.id == group_id)
            )
        )

    async def touch_group(self, tx: Tx, group_id: str, at: datetime) -> None:
        """Its members changed."""
        await tx.run(Group.update({Group.updated_at: at}).where(Group.id == group_id))

    async def delete_group(self, tx: Tx, project_id: str, group_id: str) -> None:
        """The group goes (its memberships were removed by the users' write path first)."""
        await tx.run(UserGroup.delete().where(UserGroup.group == group_id))
        await tx.run(Group.delete().where((Group.project == project_id) & (Group.id == group_id)))

    async def users_in_project(self, tx: Tx, project_id: str, user_ids: list[str]) -> set[str]:
        """Those of `user_ids` that are users of the project."""
        if not user_ids:
            return set()
        rows = await tx.run(User.select(User.id).where((User.project == project_id) & User.id.is_in(user_ids)))
        return {r["id"] for r in rows}
