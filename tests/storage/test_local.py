from __future__ import annotations

import hashlib
import os
import stat
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from litestar import Litestar, Router
from litestar.di import Provide
from litestar.testing import AsyncTestClient

from litestar_userio.config import LocalStorageConfig
from litestar_userio.storage import LocalStorage, StoredFile
from litestar_userio.web.downloads import DownloadController
from userio_core.clock import FrozenClock

from .conftest import BASE_URL

KEY = "proj_1/userexport_ABC/proj_1-userexport_ABC-20261103093000Z.csv"
FILENAME = "proj_1-userexport_ABC-20261103093000Z.csv"
TTL = timedelta(seconds=60)


def payload(size: int) -> bytes:
    return (b"sub,email\n" + b"".join(b"user_%08d,u%d@example.com\n" % (i, i) for i in range(size // 30 + 1)))[:size]


async def store(storage: LocalStorage, data: bytes, key: str = KEY, piece: int = 64 * 1024) -> StoredFile:
    writer = await storage.open_writer(key, content_type="text/csv", filename=key.rsplit("/", 1)[-1])
    for start in range(0, len(data), piece):
        await writer.write(data[start : start + piece])
    return await writer.complete()


def visible_files(root: Path) -> list[str]:
    return sorted(
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)
    )


def all_files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())


async def signed(storage: LocalStorage, key: str = KEY) -> str:
    return await storage.signed_url(key, expires_in=TTL, request_base_url=BASE_URL)


def with_query(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = {name: values[0] for name, values in parse_qs(parts.query).items()}
    query.update(changes)
    query = {name: value for name, value in query.items() if value != ""}
    return parts._replace(query=urlencode(query)).geturl()


def assert_forbidden(response, message: str | None = None) -> None:
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["name"] == "Forbidden"
    assert error["code"] == 403
    assert error["reason"]
    if message is not None:
        assert error["message"] == message


async def test_complete_reports_and_stores_the_bytes_written_in_pieces(local_storage: LocalStorage):
    data = payload(3 * 1024 * 1024 + 12_345)

    stored = await store(local_storage, data, piece=50_000)

    assert stored == StoredFile(key=KEY, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    assert (local_storage.root / KEY).read_bytes() == data
    assert await local_storage.exists(KEY)


async def test_empty_file_can_be_stored(local_storage: LocalStorage):
    stored = await store(local_storage, b"")

    assert stored == StoredFile(key=KEY, size=0, sha256=hashlib.sha256(b"").hexdigest())
    assert await local_storage.exists(KEY)


async def test_nothing_is_visible_before_complete(local_storage: LocalStorage):
    writer = await local_storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
    for _ in range(40):
        await writer.write(b"x" * 64 * 1024)

    assert not await local_storage.exists(KEY)
    assert visible_files(local_storage.root) == []

    await writer.complete()
    assert visible_files(local_storage.root) == [KEY]


async def test_abort_leaves_nothing_and_is_idempotent(local_storage: LocalStorage):
    writer = await local_storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
    await writer.write(b"x" * 3 * 1024 * 1024)

    await writer.abort()
    await writer.abort()

    assert not await local_storage.exists(KEY)
    assert all_files(local_storage.root) == [".signing-key"]
    with pytest.raises(RuntimeError):
        await writer.write(b"more")
    with pytest.raises(RuntimeError):
        await writer.complete()


async def test_abort_after_complete_keeps_the_file(local_storage: LocalStorage):
    writer = await local_storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
    await writer.write(b"a,b\n")
    await writer.complete()

    await writer.abort()

    assert (local_storage.root / KEY).read_bytes() == b"a,b\n"


async def test_rewriting_a_key_replaces_the_file(local_storage: LocalStorage):
    await store(local_storage, b"old\n")
    await store(local_storage, b"new\n")

    assert (local_storage.root / KEY).read_bytes() == b"new\n"


async def test_download_streams_the_exact_bytes_with_stored_headers(
    local_storage: LocalStorage, download_client: AsyncTestClient[Litestar]
):
    data = payload(2 * 1024 * 1024 + 7)
    await store(local_storage, data)

    response = await download_client.get(await signed(local_storage))

    assert response.status_code == 200
    assert response.content == data
    assert response.headers["content-type"] == "text/csv"
    assert response.headers["content-disposition"] == f'attachment; filename="{FILENAME}"'
    assert response.headers["content-length"] == str(len(data))
    assert "no-store" in response.headers["cache-control"]


async def test_download_needs_no_authorization_header(
    local_storage: LocalStorage, download_client: AsyncTestClient[Litestar]
):
    await store(local_storage, b"a\n")

    response = await download_client.get(await signed(local_storage), headers={"Authorization": "Bearer nonsense"})

    assert response.status_code == 200


async def test_non_ascii_filename_is_sent_as_filename_star(
    local_storage: LocalStorage, download_client: AsyncTestClient[Litestar]
):
    key = "proj_1/task/utilisateurs exportés.ndjson"
    writer = await local_storage.open_writer(
        key, content_type="application/x-ndjson", filename="utilisateurs exportés.ndjson"
    )
    await writer.write(b'{"sub":"u1"}\n')
    await writer.complete()

    url = await signed(local_storage, key)
    response = await download_client.get(url)

    assert "/proj_1/task/utilisateurs%20export%C3%A9s.ndjson?" in url
    assert response.status_code == 200
    assert response.content == b'{"sub":"u1"}\n'
    assert response.headers["content-type"] == "application/x-ndjson"
    assert response.headers["content-disposition"] == (
        "attachment; filename=\"utilisateurs export_s.ndjson\"; filename*=UTF-8''utilisateurs%20export%C3%A9s.ndjson"
    )


async def test_signed_url_shape(local_storage: LocalStorage, clock: FrozenClock):
    url = await signed(local_storage)

    parts = urlsplit(url)
    query = parse_qs(parts.query)
    assert f"{parts.scheme}://{parts.netloc}" == BASE_URL
    assert parts.path == f"/_userio/downloads/{KEY}"
    assert int(query["expires"][0]) == int(clock.now().timestamp()) + 60
    assert len(query["signature"][0]) == 43


async def test_configured_base_url_wins_over_the_request_origin(tmp_path: Path, clock: FrozenClock):
    config = LocalStorageConfig(directory=tmp_path, base_url="https://files.example.com/", route_path="/dl/")
    storage = LocalStorage(config, clock)

    url = await storage.signed_url(KEY, expires_in=TTL, request_base_url="https://localhost:8443")

    assert url.startswith(f"https://files.example.com/dl/{KEY}?")


async def test_signed_url_without_any_base_is_refused(local_storage: LocalStorage):
    with pytest.raises(ValueError, match="base_url"):
        await local_storage.signed_url(KEY, expires_in=TTL)


async def test_url_is_valid_for_60_seconds(
    local_storage: LocalStorage, download_client: AsyncTestClient[Litestar], clock: FrozenClock
):
    await store(local_storage, b"a\n")
    url = await signed(local_storage)

    clock.advance(timedelta(seconds=59))
    assert (await download_client.get(url)).status_code == 200

    clock.advance(timedelta(seconds=2))
    assert_forbidden(await download_client.get(url), "download URL expired")


async def test_a_fresh_url_works_after_the_old_one_expired(
    local_storage: LocalStorage, download_client: AsyncTestClient[Litestar], clock: FrozenClock
):
    await store(local_storage, b"a\n")
    old = await signed(local_storage)
    clock.advance(timedelta(seconds=61))

    assert_forbidden(await download_client.get(old))
    assert (await download_client.get(await signed(local_storage))).status_code == 200


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda url: with_query(url, signature="A" * 43), id="altered-signature"),
        pytest.param(lambda url: with_query(url, signature=""), id="missing-signature"),
        pytest.param(
            lambda url: with_query(url, expires=str(int(parse_qs(urlsplit(url).query)["expires"][0]) + 3600)),
            id="extended-expiry",
        ),
        pytest.param(lambda url: with_query(url, expires=""), id="missing-expiry"),
        pytest.param(lambda url: with_query(url, expires="soon"), id="malformed-expiry"),
        pytest.param(lambda url: url.replace("093000Z.csv", "093001Z.csv"), id="altered-key"),
        pytest.param(lambda url: url.replace("/proj_1/", "/proj_2/", 1), id="other-project"),
    ],
)
async def test_tampered_urls_are_refused(
    local_storage: LocalStorage, download_client: AsyncTestClient[Litestar], tamper
):
    await store(local_storage, b"a\n")
    await store(local_storage, b"other project\n", key=KEY.replace("proj_1", "proj_2"))
    await store(local_storage, b"other task\n", key=KEY.replace("093000Z.csv", "093001Z.csv"))
    url = await signed(local_storage)
    assert (await download_client.get(url)).status_code == 200

    assert_forbidden(await download_client.get(tamper(url)), "invalid download URL")


@pytest.mark.parametrize(
    "path",
    [
        "proj_1/%2E%2E/%2E%2E/outside.txt",
        "proj_1/userexport_ABC/..%2F..%2F..%2Foutside.txt",
        "%2E%2E/outside.txt",
        "proj_1/%2E%2E%5C%2E%2E%5Coutside.txt",
        "/%2Fetc/passwd",
        ".signing-key",
        "proj_1/userexport_ABC/.proj_1-userexport_ABC-20261103093000Z.csv.meta.json",
    ],
)
async def test_traversal_and_helper_files_are_refused(
    local_storage: LocalStorage, download_client: AsyncTestClient[Litestar], path: str
):
    (local_storage.root.parent / "outside.txt").write_text("secret")
    await store(local_storage, b"a\n")
    query = urlsplit(await signed(local_storage)).query

    response = await download_client.get(f"{BASE_URL}/_userio/downloads/{path}?{query}")

    assert_forbidden(response, "invalid download URL")


async def test_deleted_file_is_refused_and_leaves_no_trace(
    local_storage: LocalStorage, download_client: AsyncTestClient[Litestar]
):
    await store(local_storage, b"a\n")
    url = await signed(local_storage)

    await local_storage.delete(KEY)
    await local_storage.delete(KEY)

    assert not await local_storage.exists(KEY)
    assert_forbidden(await download_client.get(url), "the file no longer exists")
    assert sorted(p.name for p in local_storage.root.iterdir()) == [".signing-key"]


async def test_delete_removes_leftovers_of_an_interrupted_write(local_storage: LocalStorage):
    crashed = await local_storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
    await crashed.write(b"x" * 2 * 1024 * 1024)
    await store(local_storage, b"a\n")
    await store(local_storage, b"b\n", key=KEY + ".bak")

    await local_storage.delete(KEY)

    assert all_files(local_storage.root) == sorted(
        [".signing-key", KEY + ".bak", str(Path(KEY).parent / f".{Path(KEY).name}.bak.meta.json")]
    )


async def test_urls_survive_a_restart(
    local_config: LocalStorageConfig, local_storage: LocalStorage, clock: FrozenClock
):
    await store(local_storage, b"a\n")
    url = await signed(local_storage)

    restarted = LocalStorage(local_config, clock)
    app = Litestar(
        route_handlers=[Router(restarted.route_path, route_handlers=[DownloadController])],
        dependencies={"userio_storage": Provide(lambda: restarted, sync_to_thread=False)},
    )
    async with AsyncTestClient(app=app, base_url=BASE_URL) as client:
        response = await client.get(url)

    assert response.status_code == 200
    assert response.content == b"a\n"
    key_file = local_storage.root / ".signing-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert len(key_file.read_bytes()) == 32


async def test_urls_of_another_signing_key_are_refused(tmp_path: Path, clock: FrozenClock):
    first = LocalStorage(LocalStorageConfig(directory=tmp_path / "a"), clock)
    second = LocalStorage(LocalStorageConfig(directory=tmp_path / "b"), clock)
    await store(first, b"a\n")
    await store(second, b"a\n")

    app = Litestar(
        route_handlers=[Router(second.route_path, route_handlers=[DownloadController])],
        dependencies={"userio_storage": Provide(lambda: second, sync_to_thread=False)},
    )
    async with AsyncTestClient(app=app, base_url=BASE_URL) as client:
        assert_forbidden(await client.get(await signed(first)))
        assert (await client.get(await signed(second))).status_code == 200


async def test_configured_secret_is_used_and_no_key_file_is_made(tmp_path: Path, clock: FrozenClock):
    secret = os.urandom(32)
    first = LocalStorage(LocalStorageConfig(directory=tmp_path, secret=secret), clock)
    second = LocalStorage(LocalStorageConfig(directory=tmp_path, secret=secret), clock)
    await store(first, b"a\n")

    app = Litestar(
        route_handlers=[Router(second.route_path, route_handlers=[DownloadController])],
        dependencies={"userio_storage": Provide(lambda: second, sync_to_thread=False)},
    )
    async with AsyncTestClient(app=app, base_url=BASE_URL) as client:
        assert (await client.get(await signed(first))).status_code == 200
    assert not (tmp_path / ".signing-key").exists()


@pytest.mark.parametrize(
    "key",
    [
        "",
        "/proj/task/file.csv",
        "proj/../file.csv",
        "..",
        "proj/./file.csv",
        "proj//file.csv",
        "proj/task/",
        "proj\\task\\file.csv",
        "proj/task/file\x00.csv",
        "proj/task/file\n.csv",
        "proj/task/file\x7f.csv",
        ".signing-key",
        "proj/.hidden.csv",
        "k" * 1025,
    ],
)
async def test_invalid_keys_raise_value_error(local_storage: LocalStorage, key: str):
    with pytest.raises(ValueError, match="storage key"):
        await local_storage.open_writer(key, content_type="text/csv", filename=FILENAME)
    with pytest.raises(ValueError, match="storage key"):
        await local_storage.signed_url(key, expires_in=TTL, request_base_url=BASE_URL)
    with pytest.raises(ValueError, match="storage key"):
        await local_storage.exists(key)
    with pytest.raises(ValueError, match="storage key"):
        await local_storage.delete(key)


@pytest.mark.parametrize(
    ("content_type", "filename"),
    [
        ("text/csv\r\nX-Evil: 1", FILENAME),
        ("", FILENAME),
        ("text/csv", "a\r\nX-Evil: 1.csv"),
        ("text/csv", "../a.csv"),
        ("text/csv", ""),
    ],
)
async def test_header_injection_is_refused(local_storage: LocalStorage, content_type: str, filename: str):
    with pytest.raises(ValueError, match=r"content type|filename"):
        await local_storage.open_writer(KEY, content_type=content_type, filename=filename)
    assert all_files(local_storage.root) == [".signing-key"]


def test_short_configured_secret_is_refused(tmp_path: Path, clock: FrozenClock):
    with pytest.raises(ValueError, match="secret"):
        LocalStorage(LocalStorageConfig(directory=tmp_path, secret=b"short"), clock)
