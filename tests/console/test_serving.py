"""The console's page and assets: off by default, served from the package with strict security headers."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from litestar import Litestar

from litestar_userio import ConsoleConfig, UserIOConfig, UserIOPlugin
from litestar_userio.web.console import STATIC_DIR

ROOT = Path(__file__).resolve().parents[2]

CONSOLE = "/_userio/console"


def _client(console: ConsoleConfig | None) -> httpx.AsyncClient:
    app = Litestar(plugins=[UserIOPlugin(UserIOConfig(console=console))])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="https://testserver")


@pytest.fixture
async def console_client():
    async with _client(ConsoleConfig()) as client:
        yield client


async def test_console_is_off_by_default():
    async with _client(None) as client:
        response = await client.get(f"{CONSOLE}/")

    assert response.status_code == 404


async def test_page_carries_strict_security_headers(console_client):
    response = await console_client.get(f"{CONSOLE}/")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    csp = {d.split()[0]: d.split()[1:] for d in response.headers["content-security-policy"].split("; ")}
    assert csp["script-src"] == ["'self'"]
    assert csp["default-src"] == ["'none'"]
    assert csp["frame-ancestors"] == ["'none'"]
    assert csp["connect-src"] == ["'self'"]
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["cache-control"] == "no-store"


async def test_page_has_no_inline_script(console_client):
    html = (await console_client.get(f"{CONSOLE}/")).text

    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, flags=re.S)
    assert scripts, "the page loads its module"
    assert all('src="' in attrs and not body.strip() for attrs, body in scripts)
    assert " on" not in re.sub(r"\s+", " ", html).lower().replace("one", "")  # no inline event handlers


async def test_path_without_slash_redirects_to_the_folder(console_client):
    response = await console_client.get(CONSOLE)

    assert response.status_code in {301, 302, 307, 308}
    assert response.headers["location"].endswith(f"{CONSOLE}/")


async def test_every_asset_the_page_names_is_served_and_gzipped_on_request(console_client):
    html = (await console_client.get(f"{CONSOLE}/")).text
    names = re.findall(r'(?:src|href)="\./assets/([^"]+)"', html)
    assert names

    for name in names:
        plain = await console_client.get(f"{CONSOLE}/assets/{name}", headers={"Accept-Encoding": "identity"})
        packed = await console_client.get(f"{CONSOLE}/assets/{name}", headers={"Accept-Encoding": "gzip"})
        assert plain.status_code == 200
        assert plain.content == (STATIC_DIR / "assets" / name).read_bytes()
        assert "immutable" in plain.headers["cache-control"]
        assert packed.headers.get("content-encoding") == "gzip"
        assert packed.content == plain.content  # httpx decodes gzip
        assert packed.headers["content-security-policy"] == plain.headers["content-security-policy"]


async def test_unknown_asset_and_path_tricks_are_404(console_client):
    for path in ("assets/nope.js", "assets/..%2Findex.html", "assets/%2e%2e%2f%2e%2e%2fconfig.py"):
        response = await console_client.get(f"{CONSOLE}/{path}")
        assert response.status_code == 404, path


async def test_hook_types_are_served_for_the_editor(console_client):
    response = await console_client.get(f"{CONSOLE}/hooks.d.ts")

    assert response.status_code == 200
    assert response.content == (ROOT / "plugins" / "hooks.d.ts").read_bytes()


async def test_console_path_is_configurable():
    async with _client(ConsoleConfig(path="/admin/console")) as client:
        moved = await client.get("/admin/console/")
        default = await client.get(f"{CONSOLE}/")

    assert moved.status_code == 200 and default.status_code == 404
