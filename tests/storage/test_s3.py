from __future__ import annotations

import base64
import dataclasses
import hashlib
import logging
import os
import zlib
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from litestar_userio.config import S3StorageConfig
from litestar_userio.storage import S3Storage, Storage, StoredFile, build_storage
from userio_core.clock import FrozenClock

KEY = "proj_1/userexport_ABC/proj_1-userexport_ABC-20261103093000Z.csv"
FILENAME = "proj_1-userexport_ABC-20261103093000Z.csv"
MIB = 1024 * 1024
WRITE = 64 * 1024


@pytest.fixture
async def s3_storage(s3_config: S3StorageConfig) -> AsyncIterator[S3Storage]:
    storage = build_storage(dataclasses.replace(s3_config, part_size=5 * MIB), FrozenClock())
    assert isinstance(storage, S3Storage)
    yield storage
    await storage.close()


async def write_all(writer: Any, data: bytes) -> None:
    for start in range(0, len(data), WRITE):
        await writer.write(data[start : start + WRITE])


async def store_file(storage: Storage, data: bytes, key: str = KEY) -> StoredFile:
    """Open a writer, write `data` and complete the file, as the export does."""
    writer = await storage.open_writer(key, content_type="text/csv", filename=FILENAME)
    await write_all(writer, data)
    return await writer.complete()


def object_key(config: S3StorageConfig, key: str = KEY) -> str:
    return config.prefix + key


def pending_uploads(s3_client: Any, bucket: str) -> list[dict[str, Any]]:
    return s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])


def stored_keys(s3_client: Any, bucket: str) -> list[str]:
    return [item["Key"] for item in s3_client.list_objects_v2(Bucket=bucket).get("Contents", [])]


async def test_large_file_goes_up_in_parts(s3_storage: S3Storage, s3_config: S3StorageConfig, s3_client: Any):
    data = os.urandom(12 * MIB + 12_345)
    writer = await s3_storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
    await write_all(writer, data)

    assert len(pending_uploads(s3_client, s3_config.bucket)) == 1
    assert stored_keys(s3_client, s3_config.bucket) == []
    assert not await s3_storage.exists(KEY)

    stored = await writer.complete()

    assert stored == StoredFile(key=KEY, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    obj = s3_client.get_object(Bucket=s3_config.bucket, Key=object_key(s3_config))
    assert obj["Body"].read() == data
    assert obj["ContentType"] == "text/csv"
    assert obj["ContentDisposition"] == f'attachment; filename="{FILENAME}"'
    assert obj["ETag"].endswith('-3"')
    assert pending_uploads(s3_client, s3_config.bucket) == []
    assert await s3_storage.exists(KEY)


async def test_exact_multiple_of_the_part_size_has_no_empty_last_part(
    s3_storage: S3Storage, s3_config: S3StorageConfig, s3_client: Any
):
    data = os.urandom(10 * MIB)
    await store_file(s3_storage, data)

    obj = s3_client.get_object(Bucket=s3_config.bucket, Key=object_key(s3_config))
    assert obj["Body"].read() == data
    assert obj["ETag"].endswith('-2"')


async def test_small_file_goes_up_in_one_put(s3_storage: S3Storage, s3_config: S3StorageConfig, s3_client: Any):
    data = b"sub,email\nuser_1,a@example.com\n"
    writer = await s3_storage.open_writer(KEY, content_type="application/x-ndjson", filename="exporté.ndjson")
    await writer.write(data[:10])

    assert pending_uploads(s3_client, s3_config.bucket) == []
    assert stored_keys(s3_client, s3_config.bucket) == []

    await writer.write(data[10:])
    stored = await writer.complete()

    assert stored == StoredFile(key=KEY, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    obj = s3_client.get_object(Bucket=s3_config.bucket, Key=object_key(s3_config))
    assert obj["Body"].read() == data
    assert obj["ContentType"] == "application/x-ndjson"
    assert obj["ContentDisposition"] == "attachment; filename=\"export_.ndjson\"; filename*=UTF-8''export%C3%A9.ndjson"
    assert "-" not in obj["ETag"]
    assert pending_uploads(s3_client, s3_config.bucket) == []


async def test_empty_file_is_stored(s3_storage: S3Storage, s3_config: S3StorageConfig, s3_client: Any):
    writer = await s3_storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)

    stored = await writer.complete()

    assert stored.size == 0
    assert s3_client.get_object(Bucket=s3_config.bucket, Key=object_key(s3_config))["Body"].read() == b""


async def test_abort_removes_the_multipart_upload(s3_storage: S3Storage, s3_config: S3StorageConfig, s3_client: Any):
    writer = await s3_storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
    await write_all(writer, os.urandom(12 * MIB))
    assert len(pending_uploads(s3_client, s3_config.bucket)) == 1

    await writer.abort()
    await writer.abort()

    assert pending_uploads(s3_client, s3_config.bucket) == []
    assert stored_keys(s3_client, s3_config.bucket) == []
    assert not await s3_storage.exists(KEY)
    with pytest.raises(RuntimeError):
        await writer.write(b"more")
    with pytest.raises(RuntimeError):
        await writer.complete()


async def test_abort_before_any_part_leaves_nothing(s3_storage: S3Storage, s3_config: S3StorageConfig, s3_client: Any):
    writer = await s3_storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
    await writer.write(b"a,b\n")

    await writer.abort()

    assert pending_uploads(s3_client, s3_config.bucket) == []
    assert stored_keys(s3_client, s3_config.bucket) == []


async def test_abort_after_complete_keeps_the_object(s3_storage: S3Storage, s3_config: S3StorageConfig, s3_client: Any):
    writer = await s3_storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
    await writer.write(b"a,b\n")
    await writer.complete()

    await writer.abort()

    assert stored_keys(s3_client, s3_config.bucket) == [object_key(s3_config)]


async def test_failed_complete_discards_the_upload(s3_config: S3StorageConfig, s3_client: Any):
    config = dataclasses.replace(s3_config, part_size=5 * MIB)
    storage = S3Storage(config)
    # Parts under S3's 5 MiB minimum make CompleteMultipartUpload itself fail (EntityTooSmall).
    config.part_size = MIB
    try:
        writer = await storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
        await write_all(writer, os.urandom(3 * MIB))
        assert len(pending_uploads(s3_client, s3_config.bucket)) == 1

        with pytest.raises(Exception, match="EntityTooSmall"):
            await writer.complete()

        await writer.abort()
        assert pending_uploads(s3_client, s3_config.bucket) == []
        assert stored_keys(s3_client, s3_config.bucket) == []
    finally:
        await storage.close()


async def test_presigned_url_points_at_the_storage_and_serves_the_file(
    s3_storage: S3Storage, s3_config: S3StorageConfig, moto_endpoint: str
):
    data = b"sub,email\nuser_1,a@example.com\n"
    await store_file(s3_storage, data)

    url = await s3_storage.signed_url(
        KEY, expires_in=timedelta(seconds=60), request_base_url="https://auth.example.com"
    )

    parts = urlsplit(url)
    query = parse_qs(parts.query)
    assert f"{parts.scheme}://{parts.netloc}" == moto_endpoint
    assert parts.path == f"/{s3_config.bucket}/{object_key(s3_config)}"
    assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
    assert query["X-Amz-Expires"] == ["60"]
    assert query["X-Amz-Signature"][0]
    assert query["X-Amz-Credential"][0].startswith("testing/")
    async with httpx.AsyncClient() as client:
        response = await client.get(url)
    assert response.status_code == 200
    assert response.content == data
    assert response.headers["content-type"] == "text/csv"
    assert response.headers["content-disposition"] == f'attachment; filename="{FILENAME}"'


async def test_each_signed_url_is_fresh(s3_storage: S3Storage):
    first = await s3_storage.signed_url(KEY, expires_in=timedelta(seconds=60))
    second = await s3_storage.signed_url(KEY, expires_in=timedelta(seconds=120))

    assert parse_qs(urlsplit(first).query)["X-Amz-Signature"] != parse_qs(urlsplit(second).query)["X-Amz-Signature"]


async def test_delete_and_exists(s3_storage: S3Storage, s3_config: S3StorageConfig, s3_client: Any):
    await store_file(s3_storage, b"a\n")
    assert await s3_storage.exists(KEY)

    await s3_storage.delete(KEY)
    await s3_storage.delete(KEY)

    assert not await s3_storage.exists(KEY)
    assert stored_keys(s3_client, s3_config.bucket) == []


async def test_storage_can_be_used_again_after_close(s3_storage: S3Storage):
    await s3_storage.close()

    assert not await s3_storage.exists(KEY)


@pytest.mark.parametrize("key", ["", "/abs.csv", "proj/../x.csv", "proj\\x.csv", "proj/x\x00.csv", "proj//x.csv"])
async def test_invalid_keys_raise_value_error(s3_storage: S3Storage, key: str):
    with pytest.raises(ValueError, match="storage key"):
        await s3_storage.open_writer(key, content_type="text/csv", filename=FILENAME)
    with pytest.raises(ValueError, match="storage key"):
        await s3_storage.signed_url(key, expires_in=timedelta(seconds=60))
    with pytest.raises(ValueError, match="storage key"):
        await s3_storage.exists(key)
    with pytest.raises(ValueError, match="storage key"):
        await s3_storage.delete(key)


def test_part_size_below_the_s3_minimum_is_refused(s3_config: S3StorageConfig):
    with pytest.raises(ValueError, match="part_size"):
        S3Storage(dataclasses.replace(s3_config, part_size=5 * MIB - 1))


async def test_a_part_failing_in_the_background_fails_the_file(s3_config: S3StorageConfig, s3_client: Any):
    config = dataclasses.replace(s3_config, part_size=5 * MIB, bucket=f"{s3_config.bucket}-missing")
    storage = S3Storage(config)
    try:
        writer = await storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)

        async def write_and_complete() -> None:
            await write_all(writer, os.urandom(11 * MIB))
            await writer.complete()

        with pytest.raises(Exception, match="NoSuchBucket"):
            await write_and_complete()

        await writer.abort()
        with pytest.raises(RuntimeError, match="aborted"):
            await writer.write(b"more")
        assert stored_keys(s3_client, s3_config.bucket) == []
    finally:
        await storage.close()


def crc32(data: bytes) -> bytes:
    return zlib.crc32(data).to_bytes(4, "big")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_each_part_goes_up_with_its_crc32_and_the_file_carries_their_composite(
    s3_storage: S3Storage, s3_config: S3StorageConfig, s3_client: Any
):
    data = os.urandom(12 * MIB + 12_345)
    await store_file(s3_storage, data)

    parts = [data[start : start + 5 * MIB] for start in range(0, len(data), 5 * MIB)]
    head = s3_client.head_object(Bucket=s3_config.bucket, Key=object_key(s3_config), ChecksumMode="ENABLED")
    # S3 adds the number of parts (`...-3`); moto leaves it out.
    assert head["ChecksumCRC32"].removesuffix("-3") == b64(crc32(b"".join(crc32(part) for part in parts)))
    assert s3_client.get_object(Bucket=s3_config.bucket, Key=object_key(s3_config))["Body"].read() == data


async def test_a_file_of_one_part_goes_up_with_its_crc32(
    s3_storage: S3Storage, s3_config: S3StorageConfig, s3_client: Any
):
    data = b"sub,email\nuser_1,a@example.com\n"
    await store_file(s3_storage, data)

    head = s3_client.head_object(Bucket=s3_config.bucket, Key=object_key(s3_config), ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == b64(crc32(data))


async def test_without_a_checksum_the_file_carries_none(s3_config: S3StorageConfig, s3_client: Any):
    storage = build_storage(dataclasses.replace(s3_config, part_size=5 * MIB, checksum=None), FrozenClock())
    data = os.urandom(6 * MIB)
    try:
        await store_file(storage, data)
    finally:
        await storage.close()

    head = s3_client.head_object(Bucket=s3_config.bucket, Key=object_key(s3_config), ChecksumMode="ENABLED")
    assert "ChecksumCRC32" not in head
    assert s3_client.get_object(Bucket=s3_config.bucket, Key=object_key(s3_config))["Body"].read() == data


class _Stopped(Exception):
    pass


@pytest.mark.parametrize(
    ("endpoint_url", "checksum", "signed"),
    [
        (None, "CRC32", False),  # AWS itself, over HTTPS: TLS and the CRC32 guard the bytes
        ("https://storage.example.test", "CRC32", False),
        ("https://storage.example.test", None, True),
        ("http://127.0.0.1:9", "CRC32", True),  # no TLS: the signature covers the bytes
    ],
)
async def test_the_payload_is_signed_unless_tls_and_a_checksum_guard_it(
    s3_config: S3StorageConfig, endpoint_url: str | None, checksum: str | None, signed: bool
):
    storage = S3Storage(dataclasses.replace(s3_config, endpoint_url=endpoint_url, checksum=checksum))
    data = b"x" * 1000
    sent: list[str] = []

    def stop(request: Any, **_: Any) -> None:  # the request as it would leave; nothing is sent
        sent.append(request.headers["X-Amz-Content-SHA256"].decode())
        raise _Stopped

    try:
        (await storage._get_client()).meta.events.register("before-send.s3.PutObject", stop)
        writer = await storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
        await writer.write(data)
        with pytest.raises(_Stopped):
            await writer.complete()
    finally:
        await storage.close()

    assert sent == [hashlib.sha256(data).hexdigest() if signed else "UNSIGNED-PAYLOAD"]


_NOT_IMPLEMENTED = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code>'
    b"<Message>A header you provided implies functionality that is not implemented</Message></Error>"
)
_HOP_BY_HOP = {"host", "content-length", "transfer-encoding", "connection", "content-encoding", "date", "server"}


@dataclasses.dataclass
class RefusingStore:
    """An S3-compatible store in front of moto that refuses some checksum headers (501 NotImplemented, as some do)."""

    endpoint: str
    refuse: tuple[str, ...] = ("x-amz-checksum", "x-amz-sdk-checksum")
    """Header name prefixes (lower case) that make it refuse a request."""
    refuse_body: bytes | None = None
    """A request whose body holds these bytes is refused too."""
    refused: list[str] = dataclasses.field(default_factory=list)
    """The requests it refused, as `METHOD path?query`."""
    with_checksum: list[str] = dataclasses.field(default_factory=list)
    """Every request that carried a checksum header, refused or not."""


@pytest.fixture
async def refusing_store(moto_endpoint: str) -> AsyncIterator[RefusingStore]:
    from aiohttp import ClientSession, web

    store = RefusingStore(endpoint="")

    async def handle(request: web.Request) -> web.Response:
        names = [name.lower() for name in request.headers]
        if any(name.startswith(("x-amz-checksum", "x-amz-sdk-checksum")) for name in names):
            store.with_checksum.append(f"{request.method} {request.path_qs}")
        body = await request.read()
        if any(name.startswith(store.refuse) for name in names) or (
            store.refuse_body is not None and store.refuse_body in body
        ):
            store.refused.append(f"{request.method} {request.path_qs}")
            return web.Response(status=501, body=_NOT_IMPLEMENTED, content_type="application/xml")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        async with session.request(
            request.method, moto_endpoint + request.path_qs, headers=headers, data=body
        ) as upstream:
            body = await upstream.read()
            kept = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP_BY_HOP}
            return web.Response(status=upstream.status, body=body, headers=kept)

    app = web.Application(client_max_size=64 * MIB)
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    async with ClientSession(auto_decompress=False) as session:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        store.endpoint = f"http://127.0.0.1:{runner.addresses[0][1]}"
        try:
            yield store
        finally:
            await runner.cleanup()


async def store_through(
    refusing_store: RefusingStore, s3_config: S3StorageConfig, files: dict[str, bytes], caplog: pytest.LogCaptureFixture
) -> list[str]:
    """Store each file through the refusing store (5 MiB parts), checking what the writer says it stored; the
    storage's warnings."""
    config = dataclasses.replace(s3_config, endpoint_url=refusing_store.endpoint, part_size=5 * MIB)
    storage = build_storage(config, FrozenClock())
    try:
        with caplog.at_level(logging.WARNING, logger="litestar_userio.storage"):
            for key, data in files.items():
                stored = await store_file(storage, data, key)
                assert stored == StoredFile(key=key, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    finally:
        await storage.close()
    return [r.getMessage() for r in caplog.records if r.name == "litestar_userio.storage"]


_REFUSED_WARNING = (
    "the S3 store refused the CRC32 checksum (NotImplemented: A header you provided implies functionality that"
    " is not implemented): export files go up without one from now on; set S3StorageConfig.checksum=None for"
    " such a store"
)


async def test_a_store_refusing_checksums_is_asked_once_and_gets_every_file_whole(
    s3_config: S3StorageConfig, s3_client: Any, refusing_store: RefusingStore, caplog: pytest.LogCaptureFixture
):
    files = {KEY: os.urandom(11 * MIB), "proj_1/userexport_DEF/small.csv": b"sub,email\n", "proj_1/a/b.csv": b"x\n"}
    warnings = await store_through(refusing_store, s3_config, files, caplog)

    for key, data in files.items():
        assert s3_client.get_object(Bucket=s3_config.bucket, Key=object_key(s3_config, key))["Body"].read() == data
    first_request = f"POST /{s3_config.bucket}/{object_key(s3_config)}?uploads"  # the first file's
    assert refusing_store.refused == refusing_store.with_checksum == [first_request]
    assert warnings == [_REFUSED_WARNING]
    assert pending_uploads(s3_client, s3_config.bucket) == []


async def test_a_refusal_that_is_not_about_the_checksum_fails_the_file(
    s3_config: S3StorageConfig, refusing_store: RefusingStore, caplog: pytest.LogCaptureFixture
):
    config = dataclasses.replace(s3_config, endpoint_url=refusing_store.endpoint, bucket="userio-no-such-bucket")
    storage = S3Storage(config)
    try:
        writer = await storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
        await writer.write(b"a,b\n")
        with pytest.raises(Exception, match="NoSuchBucket"):
            await writer.complete()
    finally:
        await storage.close()

    assert len(refusing_store.refused) == 1  # asked with the checksum, refused, asked again without: no bucket
    assert "refused the CRC32 checksum" not in caplog.text


async def test_a_store_refusing_only_the_parts_checksum_gets_the_file_in_an_upload_started_anew(
    s3_config: S3StorageConfig, s3_client: Any, refusing_store: RefusingStore, caplog: pytest.LogCaptureFixture
):
    """A store that takes `ChecksumAlgorithm` when an upload starts but refuses the part's `x-amz-checksum-crc32`."""
    refusing_store.refuse = ("x-amz-checksum-crc32",)
    files = {KEY: os.urandom(11 * MIB), "proj_1/a/b.csv": os.urandom(6 * MIB), "proj_1/c/d.csv": b"x\n"}
    warnings = await store_through(refusing_store, s3_config, files, caplog)

    for key, data in files.items():
        response = s3_client.get_object(Bucket=s3_config.bucket, Key=object_key(s3_config, key))
        assert response["Body"].read() == data
        assert response["ContentType"] == "text/csv"
    path = f"/{s3_config.bucket}/{object_key(s3_config)}"
    assert [r.split("?")[0] for r in refusing_store.with_checksum] == [f"POST {path}", f"PUT {path}"]
    assert refusing_store.refused == refusing_store.with_checksum[1:]
    assert "partNumber=1" in refusing_store.refused[0]
    assert warnings == [_REFUSED_WARNING]
    assert pending_uploads(s3_client, s3_config.bucket) == []  # the upload the refusal left was aborted


async def _write_or_abort(writer: Any, data: bytes) -> None:
    """Write and complete the file; on failure abort it, as the export does."""
    try:
        await write_all(writer, data)
        await writer.complete()
    except BaseException:
        await writer.abort()
        raise


async def test_a_part_refused_with_and_without_its_checksum_fails_the_file_and_leaves_no_upload(
    s3_config: S3StorageConfig, s3_client: Any, refusing_store: RefusingStore, caplog: pytest.LogCaptureFixture
):
    refusing_store.refuse = ("content-md5",)  # refused for another header, whether the checksum is there or not
    storage = S3Storage(dataclasses.replace(s3_config, endpoint_url=refusing_store.endpoint, part_size=5 * MIB))
    try:
        writer = await storage.open_writer(KEY, content_type="text/csv", filename=FILENAME)
        client = await storage._get_client()
        client.meta.events.register(
            "before-sign.s3.UploadPart", lambda request, **_: request.headers.__setitem__("Content-MD5", "x")
        )
        with pytest.raises(Exception, match="NotImplemented"):
            await _write_or_abort(writer, os.urandom(11 * MIB))
    finally:
        await storage.close()

    assert [r.split("?")[0].split()[0] for r in refusing_store.refused] == ["PUT", "PUT"]  # with, then without
    assert "refused the CRC32 checksum" not in caplog.text
    assert pending_uploads(s3_client, s3_config.bucket) == []


@pytest.mark.parametrize("checksum", ["SHA256", "crc32", ""])
def test_a_checksum_the_writer_cannot_compute_is_refused_when_configured(checksum: str):
    with pytest.raises(ValueError, match=f"S3StorageConfig.checksum must be 'CRC32' or None, got '{checksum}'"):
        S3StorageConfig(bucket="b", checksum=checksum)  # type: ignore[arg-type]


async def test_a_store_refusing_the_parts_checksums_in_the_completion_gets_it_without_them(
    s3_config: S3StorageConfig, s3_client: Any, refusing_store: RefusingStore, caplog: pytest.LogCaptureFixture
):
    refusing_store.refuse, refusing_store.refuse_body = (), b"<ChecksumCRC32>"
    files = {KEY: os.urandom(11 * MIB), "proj_1/a/b.csv": os.urandom(6 * MIB)}
    warnings = await store_through(refusing_store, s3_config, files, caplog)

    for key, data in files.items():
        assert s3_client.get_object(Bucket=s3_config.bucket, Key=object_key(s3_config, key))["Body"].read() == data
    path = f"/{s3_config.bucket}/{object_key(s3_config)}"
    assert [r.split("?")[0] for r in refusing_store.refused] == [f"POST {path}"]
    assert "uploadId=" in refusing_store.refused[0]
    assert [r.split("?")[0] for r in refusing_store.with_checksum] == [f"POST {path}"] + [f"PUT {path}"] * 3
    assert warnings == [_REFUSED_WARNING]
    assert pending_uploads(s3_client, s3_config.bucket) == []
