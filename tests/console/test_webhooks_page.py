"""The console's Webhooks page in a real browser against a live example app: add an endpoint (its secret shown
once), see a failed delivery with its attempts, retry it and see it succeed. The receiver is a real HTTP server on
loopback, listed in `USERIO_WEBHOOK_PRIVATE_ORIGINS`; `USERIO_WEBHOOK_RETRY_DELAYS` is empty (no automatic retry)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from playwright.async_api import expect

from tests.console.browser import CHROMIUM_ARGS, LiveApp, chromium_path, live_app

pytestmark = pytest.mark.slow


class Receiver(ThreadingHTTPServer):
    status = 500
    bodies: list[bytes]


class Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        self.server.bodies.append(self.rfile.read(int(self.headers.get("content-length", "0"))))
        self.send_response(self.server.status)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    server = Receiver(("127.0.0.1", 0), Handler)
    server.bodies = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, receiver: Receiver) -> Iterator[LiveApp]:
    assert chromium_path()
    origin = f"http://127.0.0.1:{receiver.server_address[1]}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("USERIO_WEBHOOK_PRIVATE_ORIGINS", origin)
        patch.setenv("USERIO_WEBHOOK_RETRY_DELAYS", "")
        yield from live_app(tmp_path_factory.mktemp("webhooks-console") / "home")


@pytest.fixture(scope="module")
async def page(app: LiveApp) -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        context = await browser.new_context(ignore_https_errors=True)
        context.set_default_timeout(30_000)
        tab = await context.new_page()
        yield tab
        await browser.close()


async def test_adds_a_webhook_sees_a_failed_delivery_and_retries_it(app, page, receiver):
    link = app.userio("console-url", "--project", "demo").strip().splitlines()[-1]
    token = link.split("#token=")[1]
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    await page.goto(link)
    await page.locator("a[data-nav=webhooks]").click()
    await page.locator("#webhook-url").fill(url)
    await page.locator("#save-webhook").click()
    secret = await page.locator("#webhook-secret code").inner_text()
    await expect(page.locator("#webhooks tbody tr")).to_have_count(1)

    created = httpx.post(
        app.origin + "/_api/admin/users",
        json={"email": "hooked@example.com"},
        headers={"Authorization": f"Bearer {token}"},
        verify=False,
    )
    assert created.status_code == 201, created.text
    failed = page.locator("#deliveries tr[data-status=failed]")
    for _ in range(120):  # the delivery job runs in the app: refresh until its first (failing) attempt is listed
        await page.locator("#refresh-deliveries").click()
        if await failed.count():
            break
        await page.wait_for_timeout(250)
    await expect(failed).to_have_count(1)
    await expect(failed.locator(".delivery-attempts")).to_have_text("1")

    receiver.status = 204
    await failed.locator("button.retry").click()
    succeeded = page.locator("#deliveries tr[data-status=succeeded]")
    for _ in range(120):
        await page.locator("#refresh-deliveries").click()
        if await succeeded.count():
            break
        await page.wait_for_timeout(250)
    await expect(succeeded).to_have_count(1)
    await expect(succeeded.locator(".delivery-attempts")).to_have_text("2")

    assert len(secret) >= 44 and len(receiver.bodies) == 2
    assert b'"type":"user.created"' in receiver.bodies[-1]
    listed = httpx.get(app.origin + "/_api/admin/webhooks", headers={"Authorization": f"Bearer {token}"}, verify=False)
    assert "secret" not in listed.json()["result"]["webhooks"][0]
