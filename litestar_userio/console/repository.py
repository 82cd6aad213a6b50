"""The console pickers' read of the project's clients (the users' search is `UserRepository`'s)."""

from __future__ import annotations

from litestar_userio.db.engine import Tx
from litestar_userio.db.tables import Application

__all__ = ["DirectoryRepository"]


class DirectoryRepository:
    """Queries of the directory's reads beyond the users; each method runs in the caller's reader."""

    async def applications(self, tx: Tx, project_id: str) -> list[tuple[str, str | None, bool]]:
        """(client id, name, issues JWT access tokens) of each client of the project, by client id."""
        app = Application
        rows = await tx.run(
            app.select(app.client_id, app.name, app.issue_jwt_access_token)
            .where(app.project == project_id)
            .order_by(app.client_id)
        )
        return [(r["client_id"], r["name"], bool(r["issue_jwt_access_token"])) for r in rows]
