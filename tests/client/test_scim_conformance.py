"""`scim2-tester` (a conformance checker no one here wrote) against the example app, on both deployments (issue 44).

The example app runs in its own process (the deployments of `tests/client/conftest.py`); the checker discovers
what `/ServiceProviderConfig`, `/ResourceTypes` and `/Schemas` publish, then creates, reads, lists, searches,
replaces, patches and deletes Users and Groups with values it makes up from those schemas.
"""

from __future__ import annotations

import asyncio

import httpx
import httpx2
import pytest
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

from userio_core.admin_keys import sign_admin_token

pytestmark = [pytest.mark.engine, pytest.mark.slow]

KNOWN_DISAGREEMENT = {("check_remove_attribute", "User", "PATCH modify() did not remove attribute 'active'")}
"""Where the checker and RFC 7643 disagree (docs/scim.md#conformance): `active` has a default, and after a remove
the user is active again and says so (an unassigned boolean read as its default); the checker wants it absent."""

CHECKS_RUN = 88
"""How many checks ran (not skipped) on 2026-12-02, scim2-tester 0.5.2, on each deployment: 87 passed, the known
disagreement failed. A check that stops running (discovery no longer describing what it needs) makes fewer."""

FAILED = (Status.DEVIATION, Status.ERROR, Status.CRITICAL)
"""What the checker reports against the RFC: a SHOULD not followed, a MUST broken, a security risk."""


async def test_scim2_tester_reports_no_failure(deployment):
    project = await deployment.make_project()
    pem = (deployment.home / f"{project.id}-admin-key.pem").read_text()
    async with httpx.AsyncClient(verify=str(deployment.cacert)) as client:
        created = await client.post(
            deployment.url + "/_api/admin/scim/tokens",
            headers={"Authorization": "Bearer " + sign_admin_token(pem, project.id), "Host": project.host},
        )
    assert created.status_code == 201, created.text
    token = created.json()["result"]["token"]

    def check() -> list:
        with httpx2.Client(
            base_url=deployment.url + "/_api/scim/v2",
            headers={"Authorization": f"Bearer {token}", "Host": project.host},
            verify=str(deployment.cacert),
            timeout=60,
        ) as http:
            return check_server(SyncSCIMClient(http))

    results = await asyncio.to_thread(check)

    failed = {(r.title, r.resource_type, r.reason) for r in results if r.status in FAILED}
    assert failed == KNOWN_DISAGREEMENT  # exactly the failure docs/scim.md#conformance explains, and no other
    ran = [r for r in results if r.status != Status.SKIPPED]
    assert len(ran) >= CHECKS_RUN, f"{len(ran)} checks ran, {CHECKS_RUN} on 2026-12-02"
    skipped = {(r.title, r.resource_type) for r in results if r.status == Status.SKIPPED}
    assert skipped <= {("search_with_attributes", "User"), ("search_with_attributes", "Group")}  # POST /.search: 501
