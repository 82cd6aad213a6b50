"""`"dry_run": true` reports what a real run would do at that moment, and writes nothing (issue 5)."""

from __future__ import annotations

from litestar_userio.projects.settings import ProjectSettings
from tests.helpers import HASH_2B, run_import

TABLES = [
    "userio_user",
    "userio_identity",
    "userio_authenticator",
    "userio_user_role",
    "userio_user_group",
    "userio_role",
    "userio_group",
]


async def snapshot(project) -> dict:
    state = {}
    for table in TABLES:
        column = (
            "project_id"
            if table in {"userio_user", "userio_identity", "userio_authenticator", "userio_role", "userio_group"}
            else None
        )
        if column:
            rows = await project.fetch(f"SELECT * FROM {table} WHERE {column} = $1 ORDER BY id", project.id)
        else:
            rows = await project.fetch(
                f"SELECT m.* FROM {table} m JOIN userio_user u ON u.id = m.user_id WHERE u.project_id = $1 ORDER BY m.id",
                project.id,
            )
        state[table] = rows
    return state


def as_dry_run_reports(dry_details, real_details):
    """The real details, minus the ids of users that the dry run could only have imagined."""
    return [
        {k: v for k, v in r.items() if k != "user_id" or "user_id" in d}
        for d, r in zip(dry_details, real_details, strict=True)
    ]


async def test_dry_run_writes_nothing_and_reports_what_the_real_run_does(env):
    project = await env.make_project(ProjectSettings(create_unknown_roles_on_import=True))
    await run_import(project, [{"email": "old@example.com", "name": "Old", "phone_number": "+14155550123"}])
    records = [
        {"email": "old@example.com", "name": "New", "phone_number": None, "roles": ["fresh"]},
        {
            "email": "a@example.com",
            "phone_number": "+14155550123",
            "password": {"type": "bcrypt", "password_hash": HASH_2B},
        },
        {"email": "A@example.com", "name": "again", "email_verified": True},
        {"email": "bad"},
        {"email": "b@example.com", "preferred_username": "b", "mfa": {"email": "m@example.com"}, "groups": ["nope"]},
    ]
    before = await snapshot(project)

    dry = await run_import(project, records, upsert=True, dry_run=True)

    assert await snapshot(project) == before
    real = await run_import(project, records, upsert=True)
    assert [d["outcome"] for d in dry["details"]] == ["updated", "inserted", "updated", "failed", "failed"]
    assert "user_id" not in dry["details"][1]
    assert "user_id" not in dry["details"][2], "the user the dry run would create does not exist"
    assert dry["details"][0]["user_id"] == real["details"][0]["user_id"]
    assert dry["summary"] == real["summary"]
    assert dry["details"] == as_dry_run_reports(dry["details"], real["details"])
    assert await snapshot(project) != before


async def test_dry_run_flag_must_be_boolean(project):
    from tests.helpers import IMPORT

    response = await project.post(IMPORT, {"identifier": "email", "records": [{}], "dry_run": "yes"})

    assert response.status_code == 400
