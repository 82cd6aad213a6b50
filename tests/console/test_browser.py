"""End to end in a real browser: the console against a live example app, as an admin uses it.

One module-scoped app and browser; the tests run in file order, each a step of the admin's session (sign in,
import, inspect, export, hooks, sign out). Every step saves screenshots into docs/console/ (docs/console.md).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import argon2
import httpx
import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout
from playwright.async_api import expect

from tests.console.browser import CHROMIUM_ARGS, SHOTS, LiveApp, axe_source, chromium_path, live_app
from tests.helpers import HASH_2B

pytestmark = pytest.mark.slow

RECORDS = 20_000
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
FLOW_TIMEOUT = 180_000
EDITOR_TIMEOUT = 120_000
"""The hook editor's first appearance (11 MB of JavaScript: Monaco and the TypeScript worker). The default 30 s
ran out in two full-suite runs on the 2-core machine (all three editor tests at once, then passing alone and in
other runs); its cause is not pinned down (see the issue note), so the wait is generous rather than tight."""


def bad_email(i: int) -> bool:
    return i % 100 == 0


def bad_phone(i: int) -> bool:
    return i % 250 == 0


def user_file() -> str:
    lines = []
    for i in range(RECORDS):
        record: dict[str, Any] = {
            "email": f"user{i:05d}-at-example.com" if bad_email(i) else f"user{i:05d}@example.com",
            "name": f"User {i}",
            "custom_attributes": {"plan": "pro" if i % 2 else "free"},
        }
        if bad_phone(i):
            record["phone_number"] = "12345"
        lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


FAILED = sum(1 for i in range(RECORDS) if bad_email(i) or bad_phone(i))

HOOK_WITH_TYPE_ERROR = """import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "./hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  const plan: number = e.payload.user.custom_attributes.plan;
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, plan } } } };
}
"""

HOOK_THE_SERVER_REFUSES = """import type { EventOIDCJWTPreCreate } from "./hooks.d.ts";

enum Plan { Free, Pro }
export default async function (e: EventOIDCJWTPreCreate) {
  return { is_allowed: true };
}
"""

HOOK_FIXED = """import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "./hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  const plan = String(e.payload.user.custom_attributes.plan ?? "free");
  console.log("plan of", e.payload.user.standard_attributes.email, "is", plan);
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, plan, email: e.payload.user.standard_attributes.email } } },
  };
}
"""

HOOK_CHANGING_A_SERVER_CLAIM = """import type { EventOIDCJWTPreCreate } from "./hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate) {
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, iss: "https://evil.example" } } } };
}
"""

HOOK_PROBE = """import type { EventOIDCJWTPreCreate } from "./hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate) {
  e.payload."""


_RAN: set[str] = set()
"""The steps that ran in this session without failing."""


@pytest.fixture(autouse=True)
def _in_order(request: pytest.FixtureRequest) -> Iterator[None]:
    """A step whose earlier steps did not all run without failing fails at once, naming the first.

    Without this, a step run alone (`-k hook`) or after a failed one waited two minutes for an editor behind the
    sign-in page, or for a user the skipped import would have made.
    """
    steps = [name for name in vars(request.module) if name.startswith("test_")]
    earlier = [name for name in steps[: steps.index(request.node.name)] if name not in _RAN]
    if earlier:
        pytest.fail(
            f"{earlier[0]} did not run without failing before this step of the admin's session: run the file whole"
        )
    failed = request.session.testsfailed
    yield
    if request.session.testsfailed == failed:
        _RAN.add(request.node.name)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApp]:
    executable = chromium_path()
    assert executable
    yield from live_app(tmp_path_factory.mktemp("console") / "home")


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    executable = chromium_path()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        await browser.close()


@pytest.fixture(scope="module")
async def session(app: LiveApp, browser: Any) -> AsyncIterator[dict[str, Any]]:
    """The admin's tab, and every request it sent to the admin API."""
    context = await browser.new_context(ignore_https_errors=True, viewport=DESKTOP, accept_downloads=True)
    await context.grant_permissions(["clipboard-read", "clipboard-write"])
    context.set_default_timeout(30_000)
    page = await context.new_page()
    api_requests: list[Any] = []
    page.on("request", lambda r: api_requests.append(r) if "/_api/admin/" in r.url else None)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    link = app.userio("console-url", "--project", "demo").strip().splitlines()[-1]
    yield {"page": page, "link": link, "app": app, "api_requests": api_requests, "errors": errors, "state": {}}
    await context.close()


async def shot(page: Any, name: str, *, full_page: bool = False) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)


async def serious_violations(page: Any) -> list[str]:
    if not await page.evaluate("typeof window.axe === 'object'"):
        await page.evaluate(axe_source() + "\n;0")  # through DevTools: the page's CSP allows no injected script
    result = await page.evaluate("async () => await axe.run(document, { resultTypes: ['violations'] })")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
        if v["impact"] in {"serious", "critical"}
    ]


async def fits_a_phone(page: Any, name: str) -> None:
    """Readable at 390x844: nothing wider than the screen, and a screenshot to look at."""
    await page.set_viewport_size(PHONE)
    await page.wait_for_timeout(300)  # a layout pass; nothing to await
    overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    await shot(page, f"{name}-phone", full_page=False)
    await page.set_viewport_size(DESKTOP)
    assert overflow <= 0, f"{name}: the page is {overflow}px wider than a phone screen"


async def set_editor_text(page: Any, text: str) -> None:
    """Paste, as an author brings a hook from elsewhere (typing would add the editor's auto-indentation).

    Returns once the editor shows the pasted lines: the paste reads the clipboard asynchronously, and a key
    pressed before it lands acts on the old text (a completion request opened there is closed by the paste).
    """
    await page.evaluate("text => navigator.clipboard.writeText(text)", text)
    await page.locator("#editor .view-lines").click()
    await page.keyboard.press("Control+A")
    await page.keyboard.press("Control+V")
    await page.wait_for_function(
        """lines => {
            const shown = [...document.querySelectorAll('#editor .view-lines .view-line')]
                .map(line => line.textContent.replace(/\u00a0/g, ' ').trimEnd());
            return JSON.stringify(shown.sort()) === JSON.stringify(lines);
        }""",
        arg=sorted(line.rstrip() for line in text.split("\n")),
        timeout=EDITOR_TIMEOUT,
    )


async def completions(page: Any) -> Any:
    """The editor's completion rows at the cursor.

    The TypeScript worker that answers them starts on first use: the widget says "Loading..." for about 8 s on a
    quiet machine. On the loaded 2-core machine a first request sometimes got no rows within 30 s (three full-suite
    runs of 2026-11-23/24), so the request is repeated, up to the editor's own first-appearance timeout, and a
    failure says what was on screen. With the page slowed through DevTools, a request sent before the paste had
    landed never showed rows; `set_editor_text` now waits for it.
    """
    rows = page.locator(".suggest-widget .monaco-list-row")
    deadline = time.monotonic() + EDITOR_TIMEOUT / 1000
    while True:
        await page.keyboard.press("Control+Space")
        try:
            await rows.first.wait_for(timeout=15_000)
            return rows
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                editor = await page.locator("#editor .view-lines").inner_text()
                widget = await page.locator(".suggest-widget").all_inner_texts()
                raise AssertionError(f"no completions; editor {editor!r}, suggest widget {widget!r}") from None
            await page.keyboard.press("Escape")


async def test_signs_in_from_the_printed_link_and_keeps_the_token_out_of_the_address(session):
    page = session["page"]

    response = await page.goto(session["link"])
    await page.wait_for_selector("#dropzone")

    assert response.headers["content-security-policy"].startswith("default-src 'none'; script-src 'self'")
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["referrer-policy"] == "no-referrer"
    assert "token" not in page.url
    stored = await page.evaluate("sessionStorage.getItem('userio.console.token')")
    assert stored and stored == session["link"].split("#token=")[1]
    assert await page.evaluate("document.cookie") == ""
    calls = [r for r in session["api_requests"] if "/_api/admin/users/import" in r.url]
    assert calls
    for request in calls:
        headers = await request.all_headers()
        assert headers["authorization"] == f"Bearer {stored}"
        assert "referer" not in headers and "cookie" not in headers
        assert "token" not in request.url
    await shot(page, "01-imports")
    assert await serious_violations(page) == []
    await fits_a_phone(page, "01-imports")


async def test_imports_a_dropped_20000_record_file_after_a_dry_run(session):
    page = session["page"]
    text = user_file()
    transfer = await page.evaluate_handle(
        """(text) => { const dt = new DataTransfer(); dt.items.add(new File([text], 'users.ndjson')); return dt; }""",
        text,
    )

    await page.dispatch_event("#dropzone", "drop", {"dataTransfer": transfer})
    await page.get_by_role("button", name="Dry run").click()
    await page.get_by_role("heading", name="Predicted outcomes").wait_for(timeout=FLOW_TIMEOUT)

    result = page.locator("#upload-result")
    assert await result.locator('dd[data-outcome="inserted"]').inner_text() == f"{RECORDS - FAILED:,}"
    assert await result.locator('dd[data-outcome="failed"]').inner_text() == f"{FAILED:,}"
    assert "Nothing was written" in await result.inner_text()
    await shot(page, "02-dry-run", full_page=True)
    sizes = []
    for request in session["api_requests"]:
        if request.method == "POST" and request.url.endswith("/users/import"):
            sizes.append(len(request.post_data_buffer))
    assert len(sizes) >= 3 and max(sizes) < 500_000

    await page.get_by_role("button", name="Run import").click()
    await result.filter(has_text=re.compile("records processed|finished")).wait_for()
    await shot(page, "03-import-progress")
    await page.get_by_role("heading", name="Outcomes", exact=True).wait_for(timeout=FLOW_TIMEOUT)

    assert await result.locator('dd[data-outcome="inserted"]').inner_text() == f"{RECORDS - FAILED:,}"
    assert await result.locator('dd[data-outcome="failed"]').inner_text() == f"{FAILED:,}"
    assert await result.get_by_role("progressbar").get_attribute("aria-valuenow") == "100"
    session["state"]["tasks"] = await result.locator("a[href^='#/imports/task_']").all_inner_texts()
    await shot(page, "04-import-done", full_page=True)


async def test_streams_a_json_array_file_and_refuses_a_record_too_large_for_one_request(session):
    page = session["page"]
    tricky = {"email": "arr1@example.com", "name": 'a, [b] {c} "d" \\', "custom_attributes": {"n": [1, {"b": "]"}]}}
    records = [tricky, {"email": "arr2@example.com"}, {"email": "arr3@example.com", "name": "x" * 600_000}]
    text = "[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n"
    transfer = await page.evaluate_handle(
        """(text) => { const dt = new DataTransfer(); dt.items.add(new File([text], 'users.json')); return dt; }""",
        text,
    )
    result = page.locator("#upload-result")

    await page.dispatch_event("#dropzone", "drop", {"dataTransfer": transfer})
    await page.get_by_role("button", name="Dry run").click()
    await page.get_by_role("heading", name="Predicted outcomes").wait_for(timeout=FLOW_TIMEOUT)

    assert await result.locator('dd[data-outcome="inserted"]').inner_text() == "2"
    alert = await result.get_by_role("alert").inner_text()
    assert alert.startswith("1 records were not sent: #2 larger than one request may be")
    sent = [r for r in session["api_requests"] if r.method == "POST" and r.url.endswith("/users/import")][-1]
    body = json.loads(sent.post_data_buffer)
    assert body["dry_run"] is True
    assert body["records"] == records[:2]  # each record as in the file, strings with brackets and quotes intact


async def test_inspects_failures_grouped_filters_details_and_downloads_failed_ones(session):
    page = session["page"]
    task = session["state"]["tasks"][0]

    await page.goto(session["link"].split("#")[0] + f"#/imports/{task}")
    await page.locator("#failure-groups").wait_for()

    groups = await page.locator("#failure-groups tbody tr").all_inner_texts()
    assert any("Invalid/ValidationFailed" in g and "/email (format)" in g for g in groups)
    assert any("/phone_number (format)" in g for g in groups)
    await page.locator("#detail-outcome").select_option("failed")
    await page.locator("#detail-search").fill("user00100")
    await expect(page.locator("#details tbody tr")).to_have_count(1)
    rows = await page.locator("#details tbody tr").all_inner_texts()
    assert len(rows) == 1 and "user00100-at-example.com" in rows[0] and "failed" in rows[0]
    await shot(page, "05-task-failures", full_page=True)
    assert await serious_violations(page) == []

    async with page.expect_download() as info:
        await page.locator("#download-failed").click()
    download = await info.value
    lines = Path(await download.path()).read_text().splitlines()
    failed_here = int((await page.locator('dd[data-outcome="failed"]').inner_text()).replace(",", ""))
    assert len(lines) == failed_here > 0
    assert all(json.loads(line)["outcome"] == "failed" for line in lines)
    await fits_a_phone(page, "05-task")


async def test_a_record_naming_thousands_of_unknown_roles_keeps_the_task_page_readable(session):
    page = session["page"]
    token = session["link"].split("#token=")[1]
    headers = {"Authorization": f"Bearer {token}"}
    roles = [f"role{i:04d}" for i in range(3000)]
    api = session["app"].origin + "/_api/admin/users/import"
    body = {"identifier": "email", "records": [{"email": "many-roles@example.com", "roles": roles}]}
    created = httpx.post(api, json=body, headers=headers, verify=False)
    assert created.status_code == 202, created.text
    task = created.json()["id"]
    for _ in range(600):
        if httpx.get(f"{api}/{task}", headers=headers, verify=False).json()["status"] == "completed":
            break
        await asyncio.sleep(0.1)

    await page.goto(session["link"].split("#")[0] + f"#/imports/{task}")
    await page.locator("#failure-groups").wait_for()
    (group,) = await page.locator("#failure-groups tbody tr").all_inner_texts()
    await page.locator("#detail-outcome").select_option("failed")
    cell = page.locator("#details tbody tr td").last
    shown, title = await cell.inner_text(), await cell.get_attribute("title")

    assert "keys role0000, role0001, role0002, role0003, role0004 and 2,995 more" in group
    assert "role0005" not in group
    assert len(shown) == 300 and shown.endswith("…")
    assert title.startswith(f"RoleUnknownKeys: unknown role keys: {', '.join(roles)}; define them with")
    assert title.startswith(shown[:-1])


async def test_builds_a_csv_export_refusing_duplicate_names_and_downloads_it(session):
    page = session["page"]
    await page.goto(session["link"].split("#")[0] + "#/exports")
    await page.locator("#export-history").wait_for()

    await page.get_by_label("Column name for /email", exact=True).fill("sub")
    error = page.locator("#field-error")
    await error.wait_for()
    assert '"sub"' in await error.inner_text()
    assert await page.locator("#start-export").is_disabled()
    await shot(page, "06-export-duplicate-name")

    await page.get_by_label("Column name for /email", exact=True).fill("mail")
    await page.get_by_label("/name", exact=True).uncheck()
    await page.locator("#custom-attribute").fill("plan")
    await page.locator("#add-custom").click()
    await page.get_by_label("Column name for /custom_attributes/plan", exact=True).fill("plan")
    await page.get_by_label("Escape spreadsheet formulas").check()
    await page.locator("#start-export").click()
    download_button = page.locator("#export-history tbody tr").first.get_by_role("button", name="Download")
    await download_button.wait_for(timeout=FLOW_TIMEOUT)
    sent = [r for r in session["api_requests"] if r.method == "POST" and r.url.endswith("/users/export")][-1]
    assert json.loads(sent.post_data_buffer)["csv"]["escape_formulas"] is True
    await page.locator("#history-title").scroll_into_view_if_needed()
    await shot(page, "07-export-history")
    assert await serious_violations(page) == []

    urls = []
    for _ in range(2):  # every click asks for a freshly signed URL
        async with page.expect_download() as info:
            await download_button.click()
        download = await info.value
        urls.append(download.url)
    content = Path(await download.path()).read_text().splitlines()
    assert content[0] == "sub,mail,plan"
    assert len(content) == 1 + RECORDS - FAILED
    assert any(line.endswith(",user00001@example.com,pro") for line in content)
    status_calls = [r for r in session["api_requests"] if "/users/export/userexport_" in r.url and r.method == "GET"]
    assert len(status_calls) >= 2
    await fits_a_phone(page, "07-exports")


async def test_hook_editor_completes_marks_errors_saves_and_tests_against_an_imported_user(session):
    page = session["page"]
    await page.goto(session["link"].split("#")[0] + "#/hooks")
    await page.locator("#editor .monaco-editor").wait_for(timeout=EDITOR_TIMEOUT)

    await set_editor_text(page, HOOK_PROBE)
    suggestions = await completions(page)
    labels = await suggestions.all_inner_texts()
    assert any(label.startswith("user") for label in labels) and any(label.startswith("jwt") for label in labels)
    await shot(page, "08-hook-completion")
    await page.keyboard.press("Escape")

    await set_editor_text(page, HOOK_WITH_TYPE_ERROR)
    problem = page.locator("#problems li").filter(has_text="not assignable to type 'number'")
    await problem.wait_for()
    assert (await problem.inner_text()).startswith("Line 4, column 9")
    assert await page.locator("#editor .squiggly-error").count() > 0
    await shot(page, "09-hook-type-error")

    await set_editor_text(page, HOOK_THE_SERVER_REFUSES)
    await page.locator("#save-hooks").click()
    server_problem = page.locator("#problems li.server")
    await server_problem.wait_for()
    assert (await server_problem.inner_text()).startswith("Line 3, column 1")
    assert "Not saved" in await page.locator("#save-result").inner_text()

    await set_editor_text(page, HOOK_FIXED)
    await page.locator("#problems li").first.wait_for(state="detached")
    await page.locator("#save-hooks").click()
    await page.locator("#save-result .ok").wait_for()

    await page.locator("#test-user").fill("user00001@")
    await page.locator("#test-user-match option").first.wait_for(state="attached")
    assert await page.locator("#test-user-match option").first.inner_text() == "user00001@example.com"
    await page.locator("#test-client").select_option("demo-app")
    await page.locator("#run-test").click()
    added = page.locator("#test-diff tr.added")
    await added.first.wait_for()
    added_rows = await added.all_inner_texts()
    assert any("plan" in row and '"pro"' in row for row in added_rows)
    assert any("email" in row and "user00001@example.com" in row for row in added_rows)
    assert "plan of user00001@example.com is pro" in await page.locator("#test-console").inner_text()
    assert "ms" in await page.locator("#test-timings").inner_text()
    await shot(page, "10-hook-test", full_page=True)
    assert await serious_violations(page) == []
    await fits_a_phone(page, "10-hooks")


async def test_hook_test_explains_a_refused_mutation(session):
    page = session["page"]
    await page.locator("#editor .monaco-editor").wait_for(timeout=EDITOR_TIMEOUT)

    await set_editor_text(page, HOOK_CHANGING_A_SERVER_CLAIM)
    await page.locator("#run-test").click()
    refusal = page.locator("#test-error")
    await refusal.wait_for()

    text = await refusal.inner_text()
    assert "InvalidJWTMutations" in text
    assert "never remove or change" in text and "Changed: iss" in text
    assert await page.locator("#test-diff tr.added").count() == 0
    await shot(page, "10b-hook-refused-mutation", full_page=True)


async def test_hook_versions_panel_lists_diffs_and_rolls_back_where_the_server_keeps_versions(session):
    page = session["page"]
    token = session["link"].split("#token=")[1]
    base = session["link"].split("#")[0]
    keeps_versions = (
        httpx.get(
            session["app"].origin + "/_api/admin/hooks/versions",
            headers={"Authorization": f"Bearer {token}"},
            verify=False,
        ).status_code
        == 200
    )
    if not keeps_versions:  # a server without hook versions (404): the console hides the panel
        await page.goto(base + "#/hooks")
        await page.locator("#editor .monaco-editor").wait_for(timeout=EDITOR_TIMEOUT)
        await expect(page.locator("#versions")).to_be_hidden()
        return

    await page.locator("#save-hooks").click()  # the editor holds the claim-changing hook: a second version
    await page.locator("#save-result .ok").wait_for()
    versions = page.locator("#versions li")
    await expect(versions).to_have_count(2)
    assert (await versions.first.inner_text()).startswith("#2")

    await page.get_by_role("button", name="Diff version 1").click()
    await page.locator("#version-diff .line-insert, #version-diff .char-insert").first.wait_for()
    await page.locator("#version-diff").scroll_into_view_if_needed()
    await shot(page, "10c-hook-versions")
    assert await serious_violations(page) == []

    page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await page.get_by_role("button", name="Roll back to version 1").click()
    await expect(page.locator("#versions li")).to_have_count(3)
    assert (await page.locator("#versions li").first.inner_text()).startswith("#3")
    assert "plan of" in (await page.locator("#editor .view-lines").inner_text()).replace("\xa0", " ")


async def test_a_new_hook_for_password_migration_starts_from_its_template_and_saves(session):
    page = session["page"]
    token = session["link"].split("#token=")[1]
    api = session["app"].origin + "/_api/admin/hooks"
    headers = {"Authorization": f"Bearer {token}"}
    await page.goto(session["link"].split("#")[0] + "#/hooks")
    await page.locator("#editor .monaco-editor").wait_for(timeout=EDITOR_TIMEOUT)
    tabs = await page.locator("[role=tab]").count()
    await page.locator("#add-hook").click()
    await expect(page.locator("[role=tab]")).to_have_count(tabs + 1)
    assert await page.locator("#event-help").is_hidden()

    await page.locator("#hook-event").select_option("user.password_migration")
    lines = page.locator("#editor .view-lines")
    await expect(lines).to_contain_text("EventUserPasswordMigration")
    assert await page.locator("#event-help").is_visible()
    # The Test panel runs token events against a user; a migration hook runs at sign-in.
    assert "user.password_migration" not in await page.locator("#test-event").inner_text()
    await page.locator("#save-hooks").click()
    await page.locator("#save-result .ok").wait_for()
    saved = httpx.get(api, headers=headers, verify=False).json()["result"]
    assert [hook["event"] for hook in saved["hooks"]][-1] == "user.password_migration"
    assert "EventUserPasswordMigration" in saved["hooks"][-1]["source"]
    await shot(page, "10d-hook-password-migration")

    restored = {**saved, "hooks": saved["hooks"][:-1]}  # the later pages see the hooks as before
    assert httpx.put(api, headers=headers, json=restored, verify=False).status_code == 200


async def test_saving_a_hook_that_answers_in_a_wrong_shape_shows_the_servers_warning(session):
    page = session["page"]
    token = session["link"].split("#token=")[1]
    api = session["app"].origin + "/_api/admin/hooks"
    headers = {"Authorization": f"Bearer {token}"}
    before = httpx.get(api, headers=headers, verify=False).json()["result"]
    await page.goto(session["link"].split("#")[0] + "#/hooks")
    await page.locator("#editor .monaco-editor").wait_for(timeout=EDITOR_TIMEOUT)

    await set_editor_text(
        page, 'export default async function (e: any): Promise<any> { return { is_allowed: "yes" }; }'
    )
    await page.locator("#save-hooks").click()
    warning = page.locator("#save-warnings li")
    await warning.first.wait_for()

    assert await page.locator("#save-result .ok").count() == 1
    assert 'is_allowed must be a boolean, got "yes"' in await warning.first.inner_text()
    assert httpx.put(api, headers=headers, json=before, verify=False).status_code == 200


async def test_finds_a_user_disables_enables_sets_a_password_and_deletes_with_a_confirmation(session):
    page = session["page"]
    await page.goto(session["link"].split("#")[0] + "#/users")
    await page.locator("#user-query").fill("user00002@")
    await page.locator("#find-user").click()
    await page.get_by_role("button", name="user00002@example.com", exact=True).click()
    state = page.locator("#user-state")
    await state.wait_for()
    assert await state.inner_text() == "Enabled"
    assert '"email": "user00002@example.com"' in await page.locator("#user-record").inner_text()
    assert await serious_violations(page) == []

    await page.locator("#disable-user").click()
    await page.locator("#enable-user").wait_for()
    assert await state.inner_text() == "Disabled"
    await page.locator("#enable-user").click()
    await page.locator("#disable-user").wait_for()
    assert await state.inner_text() == "Enabled"

    await page.locator("#new-password").fill("a console password")
    await page.locator("#set-password").click()
    await page.get_by_role("status").filter(has_text="Password set.").wait_for()
    sent = [r for r in session["api_requests"] if r.method == "PUT" and r.url.endswith("/password")]
    assert [json.loads(r.post_data_buffer) for r in sent] == [{"password": "a console password"}]

    await page.locator("#delete-confirmation").fill("someone else")
    await page.locator("#delete-user").click()
    await page.get_by_role("status").filter(has_text="to confirm the delete").wait_for()
    assert not [r for r in session["api_requests"] if r.method == "DELETE"]
    await page.locator("#delete-confirmation").fill("user00002@example.com")
    await page.locator("#delete-user").click()
    await page.get_by_role("status").filter(has_text="deleted.").wait_for()
    await page.get_by_text("No user's login id starts with this.").wait_for()
    await fits_a_phone(page, "12-users")


async def test_shows_the_password_migration_per_format_after_an_import_of_two_formats(session):
    page = session["page"]
    token = session["link"].split("#token=")[1]
    headers = {"Authorization": f"Bearer {token}"}
    api = session["app"].origin + "/_api/admin/users"
    hasher = argon2.PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    records = [
        {"email": f"argon{i}@example.com", "password": {"type": "argon2", "password_hash": hasher.hash("pw")}}
        for i in range(2)
    ] + [{"email": "bcrypt0@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}}]
    created = httpx.post(
        f"{api}/import", json={"identifier": "email", "records": records}, headers=headers, verify=False
    )
    assert created.status_code == 202, created.text
    for _ in range(600):
        if (
            httpx.get(f"{api}/import/{created.json()['id']}", headers=headers, verify=False).json()["status"]
            == "completed"
        ):
            break
        await asyncio.sleep(0.1)
    state = httpx.get(f"{api}/password-migration", headers=headers, verify=False).json()["result"]
    assert state["formats"]["argon2"] == {"users": 2, "never_signed_in": 2}

    await page.goto(session["link"].split("#")[0] + "#/imports")  # the last step left the tab on #/users
    await page.locator("#dropzone").wait_for()
    await page.get_by_role("link", name="Users").click()
    table = page.locator("#migration-formats")
    await table.wait_for()

    async def row(name: str) -> list[str]:
        return await table.locator(f'tr[data-format="{name}"] > *').all_inner_texts()

    assert await row("argon2") == ["argon2", "2", "2"]
    bcrypt = state["formats"]["bcrypt"]
    assert bcrypt["users"] >= 1 and await row("bcrypt") == [
        "bcrypt",
        str(bcrypt["users"]),
        str(bcrypt["never_signed_in"]),
    ]
    summary = await page.locator("#migration-summary").inner_text()
    assert summary.startswith(f"{state['awaiting_rehash']} of {state['users']} users await the re-hash to bcrypt")
    assert await serious_violations(page) == []
    await shot(page, "13-password-migration", full_page=True)


async def test_creates_a_scim_token_shows_it_once_and_revokes_it_with_a_confirmation(session):
    page = session["page"]
    app: LiveApp = session["app"]
    await page.goto(session["link"].split("#")[0] + "#/scim")
    await page.locator("#create-scim-token").wait_for()
    base_url = await page.locator("#scim-base-url").inner_text()
    assert base_url == app.origin + "/_api/scim/v2"

    await page.locator("#create-scim-token").click()
    token = await page.locator("#scim-token-value").inner_text()
    assert token.startswith("scim_")
    await page.locator("#copy-scim-token").click()
    await page.locator("#scim-token-copied").filter(has_text="Copied.").wait_for()
    assert await page.evaluate("navigator.clipboard.readText()") == token
    created = [r for r in session["api_requests"] if r.method == "POST" and r.url.endswith("/scim/tokens")]
    token_id = json.loads(await (await created[-1].response()).text())["result"]["id"]
    row = page.locator(f'tr[data-scim-token="{token_id}"]')
    assert await row.locator(".scim-last-used").inner_text() == "never"
    assert await serious_violations(page) == []
    await shot(page, "14-scim-token-created")

    users = base_url + "/Users"
    headers = {"Authorization": f"Bearer {token}"}
    answer = httpx.get(users, headers=headers, verify=False)
    assert answer.status_code == 200, answer.text
    assert answer.json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:ListResponse"]

    await page.reload()
    await row.wait_for()
    assert await row.locator(".scim-last-used").inner_text() != "never"  # the use above is recorded
    assert await page.locator("#scim-token-value").count() == 0  # shown once: gone after a reload

    dismissed: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def dismiss(dialog: Any) -> None:
        await dialog.dismiss()
        dismissed.set_result(dialog.message)

    page.once("dialog", dismiss)
    await row.get_by_role("button", name=f"Revoke {token_id}").click()
    assert token_id in await dismissed
    await page.reload()  # a dismissed confirmation revokes nothing: still listed, still accepted
    await row.wait_for()
    assert not [r for r in session["api_requests"] if r.method == "DELETE" and "/scim/tokens/" in r.url]
    assert httpx.get(users, headers=headers, verify=False).status_code == 200

    page.once("dialog", lambda dialog: dialog.accept())
    await row.get_by_role("button", name=f"Revoke {token_id}").click()
    await page.get_by_role("status").filter(has_text=f"Token {token_id} revoked.").wait_for()
    assert await row.count() == 0
    refused = httpx.get(users, headers=headers, verify=False)
    assert refused.status_code == 401, refused.text
    assert await serious_violations(page) == []
    await fits_a_phone(page, "14-scim")


async def test_is_usable_by_keyboard(session):
    page = session["page"]
    await page.goto(session["link"].split("#")[0] + "#/imports")
    await page.locator("#dropzone").wait_for()
    focused = "document.activeElement.id || document.activeElement.textContent"

    assert await page.evaluate(focused) == "main"  # a page change moves focus to its content
    for name in ("sign-out", "Users", "SCIM", "Webhooks", "Hooks", "Exports"):
        await page.keyboard.press("Shift+Tab")
        assert await page.evaluate(focused) == name
    await page.keyboard.press("Enter")
    await page.locator("#export-history").wait_for()
    await page.keyboard.press("Tab")
    assert await page.evaluate(focused) == "format-csv"
    await page.keyboard.press("ArrowDown")
    assert await page.locator("#fields").is_hidden()  # ndjson chosen: no column picker
    for name in ("sign-out", "Users", "SCIM", "Webhooks", "Hooks", "Exports", "Imports", "Skip to content"):
        await page.keyboard.press("Shift+Tab")
        assert await page.evaluate(focused) == name
    assert page.url.endswith("#/exports")


async def test_signs_out_and_forgets_the_token(session):
    page = session["page"]
    await page.goto(session["link"].split("#")[0] + "#/imports")
    await page.locator("#dropzone").wait_for()
    calls_before = len(session["api_requests"])

    await page.get_by_role("button", name="Sign out").click()
    await page.get_by_role("heading", name="Signed out").wait_for()

    assert await page.evaluate("sessionStorage.getItem('userio.console.token')") is None
    await page.goto(session["link"].split("#")[0] + "#/exports")
    await page.get_by_role("heading", name="Signed out").wait_for()
    assert len(session["api_requests"]) == calls_before
    await shot(page, "11-signed-out")
    assert await serious_violations(page) == []
    await fits_a_phone(page, "11-signed-out")
    assert session["errors"] == []
