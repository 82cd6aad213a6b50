"""The console pickers' read of the project's clients (the users' search is `UserRepository`'s)."""

from __future__ import annotations

from litestar_userio.db.engine import Tx

__all__ = ["DirectoryRepository"]


class DirectoryRepository:
    """SQL of the directory's reads beyond the users; each method runs in the caller's reader."""

    async def applications(self, tx: Tx, project_id: str) -> list[tuple[str, str | None, bool]]:
        """(client id, name, issues JWT access tokens) of each client of the project, by client id."""
        rows = await tx.fetch(
            "SELECT client_id, name, issue_jwt_access_token FROM userio_application WHERE project_id = $1"
            " ORDER BY client_id",
            project_id,
        )
        return [(r["client_id"], r["name"], bool(r["issue_jwt_access_token"])) for r in rows]
