"""A user's rows leave with it: login ids, authenticators and memberships follow a deleted user, role or group.

Deleting what a row belongs to removes it, on both engines: SQLite's foreign keys cascade, and on PostgreSQL
statement triggers do it for the tables an import fills in bulk (migration 2026-11-24), foreign keys for the rest.
"""

from __future__ import annotations

import time
import uuid

import pytest

from litestar_userio.projects.settings import ProjectSettings
from tests.helpers import HASH_2B, TOTP_SECRET, authenticators, identities, memberships, run_import

pytestmark = pytest.mark.engine

FULL = {
    "phone_number": "+14155550123",
    "preferred_username": "ada",
    "password": {"type": "bcrypt", "password_hash": HASH_2B},
    "mfa": {"totp": {"secret": TOTP_SECRET}, "email": "ada.otp@example.com"},
    "roles": ["admin"],
    "groups": ["staff"],
}


async def _two_users(project):
    body = await run_import(
        project, [{"email": "ada@example.com", **FULL}, {"email": "bob@example.com", "roles": ["admin"]}]
    )
    return [d["user_id"] for d in body["details"]]


async def _execute(project, sql, *args):
    async with project.env.services.db.transaction() as tx:
        await tx.execute(sql, *args)


async def _project(env):
    settings = ProjectSettings(create_unknown_roles_on_import=True, create_unknown_groups_on_import=True)
    return await env.make_project(settings)


async def test_deleting_a_user_deletes_its_login_ids_authenticators_and_memberships(env):
    project = await _project(env)
    ada, bob = await _two_users(project)
    assert len(await authenticators(project, ada)) == 3

    await _execute(project, "DELETE FROM userio_user WHERE id = $1", ada)

    assert await identities(project, ada) == {}
    assert await authenticators(project, ada) == []
    assert await memberships(project, ada, "role") == set()
    assert await memberships(project, ada, "group") == set()
    assert await identities(project, bob) == {"email": "bob@example.com"}
    assert await memberships(project, bob, "role") == {"admin"}


async def test_deleting_a_role_or_group_removes_it_from_its_users(env):
    project = await _project(env)
    ada, bob = await _two_users(project)

    await _execute(project, "DELETE FROM userio_role WHERE project_id = $1 AND key = 'admin'", project.id)
    await _execute(project, "DELETE FROM userio_group WHERE project_id = $1 AND key = 'staff'", project.id)

    assert await memberships(project, ada, "role") == set()
    assert await memberships(project, bob, "role") == set()
    assert await memberships(project, ada, "group") == set()
    for table in ("userio_user_role", "userio_user_group"):  # the rows themselves, not only what a join finds
        assert await project.fetch(f"SELECT user_id FROM {table} WHERE user_id = $1 OR user_id = $2", ada, bob) == []
    assert await identities(project, ada) == {"email": "ada@example.com", "phone": "+14155550123", "username": "ada"}


async def test_deleting_a_project_deletes_its_users_and_their_rows(env):
    project = await _project(env)
    ada, _ = await _two_users(project)

    await _execute(project, "DELETE FROM userio_project WHERE id = $1", project.id)

    assert await project.fetch("SELECT id FROM userio_user WHERE project_id = $1", project.id) == []
    assert await identities(project, ada) == {}
    assert await authenticators(project, ada) == []
    assert await project.fetch("SELECT user_id FROM userio_user_role WHERE user_id = $1", ada) == []


async def test_user_ids_are_time_ordered_uuids(project):
    body = await run_import(project, [{"email": "ada@example.com"}])

    user_id = uuid.UUID(body["details"][0]["user_id"])
    assert user_id.version == 7
    assert user_id.variant == uuid.RFC_4122
    assert abs(int.from_bytes(user_id.bytes[:6], "big") / 1000 - time.time()) < 3600
