"""`ProjectService.by_host` reuses a project it found for `UserIOConfig.project_cache_ttl` (every token, admin API,
SCIM and JWKS request asks): a change through the same service is seen at once, a host no project has is never
remembered, and another process's change is seen once the time is up (docs/operations.md#caches)."""

from __future__ import annotations

import uuid
from datetime import timedelta

from litestar_userio.projects.project_service import ProjectService
from userio_core.clock import SystemClock

HOUR = timedelta(hours=1)
"""A cache time no test outlasts: what a test sees does not depend on how fast the machine is."""


def new_host() -> tuple[str, str]:
    project_id = f"c{uuid.uuid4().hex[:12]}"
    return project_id, f"{project_id}.example.test"


def process(env, cache_ttl: timedelta = HOUR) -> ProjectService:
    """The project service of a process of its own on the deployment's database."""
    return ProjectService(env.services.db, SystemClock(), cache_ttl)


async def test_the_deployment_reuses_what_it_found_for_two_seconds(env):
    assert env.services.projects.cache_ttl == 2.0


async def test_a_settings_change_in_this_process_is_seen_at_once(env):
    projects = process(env)
    project_id, host = new_host()
    await projects.create(project_id, [host])
    assert (await projects.by_host(host)).settings.export_rate_limit is None  # now remembered

    await projects.update_settings(project_id, export_rate_limit=7)

    assert (await projects.by_host(host.upper() + ":443")).settings.export_rate_limit == 7


async def test_a_host_no_project_has_is_not_remembered(env):
    projects = process(env)
    project_id, host = new_host()
    assert await projects.by_host(host) is None

    await process(env).create(project_id, [host])

    found = await projects.by_host(host)
    assert found is not None and found.id == project_id


async def test_another_process_change_is_seen_once_the_time_is_up(env):
    projects, no_cache = process(env), process(env, timedelta(0))
    project_id, host = new_host()
    await projects.create(project_id, [host])
    assert (await projects.by_host(host)).settings.export_rate_limit is None
    assert (await no_cache.by_host(host)).settings.export_rate_limit is None

    await process(env).update_settings(project_id, export_rate_limit=7)

    assert (await projects.by_host(host)).settings.export_rate_limit is None  # within its cache time
    assert (await no_cache.by_host(host)).settings.export_rate_limit == 7  # a cache of no time reads every time
