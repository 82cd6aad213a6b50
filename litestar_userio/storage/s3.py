"""Export files in S3-compatible object storage (AWS, MinIO, R2, ...), downloaded through presigned URLs.

A file streams up as a multipart upload of `config.part_size` parts, so at most one part is held in memory;
a file smaller than one part goes up in a single `PutObject`. S3 shows an object only once the upload
completes, which gives the atomic publish the storage contract asks for.

Each part carries its CRC32 (`S3StorageConfig.checksum`), computed here and sent as a header: the store refuses a
part whose bytes changed on the way. Over HTTPS the payload is then left out of the signature (TLS and the CRC32
guard it, botocore's own rule for uploads with a checksum) instead of hashed with SHA-256: 24 parts of 8 MiB took
0.10 s of SHA-256 and 0.04 s of CRC32, measured in one process. On `bench/export.py` (moto) the file was also put
together in about half the time: the file's checksum is built from the parts' CRC32s, where without one moto
copies the whole file to compute a full-object checksum. A store that refuses checksum headers (`NotImplemented`,
`InvalidArgument`) is asked once: the file goes up without, a warning names the setting, and no later file asks. A
store that takes `ChecksumAlgorithm` when an upload starts but refuses the first part's CRC32 is treated the same,
in an upload started anew; one that refuses the parts' CRC32s in the completion gets it without them.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import hashlib
import logging
import zlib
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import timedelta
from typing import Any

from aiobotocore.config import AioConfig
from aiobotocore.session import AioSession
from botocore.exceptions import ClientError
from botocore.loaders import Loader, create_loader

from litestar_userio.config import S3StorageConfig
from litestar_userio.storage.storage_protocol import StoredFile, check_content_type, content_disposition, validate_key

__all__ = ["MIN_PART_SIZE", "S3FileWriter", "S3Storage"]

logger = logging.getLogger("litestar_userio.storage")

MIN_PART_SIZE = 5 * 1024 * 1024
"""S3's minimum for every multipart part but the last."""
_MAX_PRESIGN_SECONDS = 7 * 24 * 3600
"""SigV4's limit on a presigned URL's lifetime."""


@functools.cache
def _models() -> Loader:
    """The reader of botocore's service models, shared by every store of the process.

    It caches what it parsed: with a reader of its own, each session parsed S3's model and endpoint rules again,
    0.15 s of CPU at each app start.
    """
    return create_loader()


def _session() -> AioSession:
    session = AioSession()
    session.register_component("data_loader", _models())
    return session


_REFUSALS = frozenset({"InvalidArgument", "InvalidRequest", "NotImplemented", "XNotImplemented"})
"""Error codes of stores that do not support a header (with any 501): how they refuse `x-amz-checksum-*`."""


def _error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def _refuses_header(error: ClientError) -> bool:
    return _error_code(error) in _REFUSALS or error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 501


class S3FileWriter:
    """One object being uploaded: a multipart upload started lazily once a full part has gathered."""

    def __init__(
        self,
        client: Any,
        *,
        bucket: str,
        object_key: str,
        key: str,
        part_size: int,
        content_type: str,
        content_disposition: str,
        checksum: str | None = None,
        on_checksum_refused: Callable[[ClientError], None] | None = None,
    ) -> None:
        self._client = client
        self._bucket = bucket
        self._object_key = object_key
        self._key = key
        self._part_size = part_size
        self._headers = {"ContentType": content_type, "ContentDisposition": content_disposition}
        self._checksum = checksum
        self._on_checksum_refused = on_checksum_refused
        self._buffer = bytearray()
        self._sha256 = hashlib.sha256()
        self._size = 0
        self._upload_id: str | None = None
        self._parts: list[dict[str, Any]] = []
        self._uploading: asyncio.Task[None] | None = None
        self._state = "open"

    async def write(self, data: bytes) -> None:
        """Append `data`; whenever `part_size` bytes have gathered, upload them as a part in the background.

        One part is in flight while the caller produces the next (measured on the export benchmark: the job
        otherwise waited for each 8 MiB part's round trip before encoding on); memory stays at two parts.
        """
        if self._uploading is not None and self._uploading.done():
            await self._settle_upload()  # a failed part fails this write with its own error
        self._check_open()
        self._sha256.update(data)
        self._size += len(data)
        self._buffer += data
        if len(self._buffer) >= self._part_size:
            await self._settle_upload()
            body, self._buffer = self._buffer, bytearray()
            self._uploading = asyncio.ensure_future(self._upload_part(body))

    async def _settle_upload(self) -> None:
        """Wait for the part in flight; its failure fails the writer."""
        uploading, self._uploading = self._uploading, None
        if uploading is not None:
            await uploading

    async def complete(self) -> StoredFile:
        """Complete the multipart upload (or put a small file whole); on failure abort it and re-raise."""
        if self._uploading is not None and self._uploading.done():
            await self._settle_upload()
        self._check_open()
        self._state = "completing"
        try:
            await self._settle_upload()
            if self._upload_id is None:
                body, self._buffer = self._buffer, bytearray()
                await self._with_checksum(
                    self._client.put_object,
                    {"Bucket": self._bucket, "Key": self._object_key, "Body": body, **self._headers},
                    {**self._algorithm(), **self._crc32(body)},
                )
            else:
                if self._buffer:
                    body, self._buffer = self._buffer, bytearray()
                    await self._upload_part(body)
                bare = [{"ETag": part["ETag"], "PartNumber": part["PartNumber"]} for part in self._parts]
                await self._with_checksum(
                    self._client.complete_multipart_upload,
                    {
                        "Bucket": self._bucket,
                        "Key": self._object_key,
                        "UploadId": self._upload_id,
                        "MultipartUpload": {"Parts": bare},
                    },
                    {"MultipartUpload": {"Parts": self._parts}} if self._parts[0].get("ChecksumCRC32") else {},
                )
        except Exception:
            with contextlib.suppress(Exception):
                await self.abort()
            raise
        self._state = "completed"
        return StoredFile(key=self._key, size=self._size, sha256=self._sha256.hexdigest())

    async def abort(self) -> None:
        """Abort the multipart upload so S3 frees its parts. Idempotent; a no-op after `complete()`."""
        if self._state in ("aborted", "completed"):
            return
        self._state = "failed"
        self._buffer = bytearray()
        uploading, self._uploading = self._uploading, None
        if uploading is not None:
            uploading.cancel()
            await asyncio.wait({uploading})
            if not uploading.cancelled():
                uploading.exception()  # retrieved: the caller is already handling a failure
        if self._upload_id is not None:
            try:
                await self._client.abort_multipart_upload(
                    Bucket=self._bucket, Key=self._object_key, UploadId=self._upload_id
                )
            except ClientError as error:
                if _error_code(error) != "NoSuchUpload":
                    raise
            self._upload_id = None
        self._state = "aborted"

    def _check_open(self) -> None:
        if self._state != "open":
            raise RuntimeError(f"writer for {self._key!r} is {self._state}")

    async def _upload_part(self, body: bytearray) -> None:
        try:
            if self._upload_id is None:
                response = await self._with_checksum(
                    self._client.create_multipart_upload,
                    {"Bucket": self._bucket, "Key": self._object_key, **self._headers},
                    self._algorithm(),
                )
                self._upload_id = str(response["UploadId"])
            number = len(self._parts) + 1
            checksum = self._crc32(body)
            try:
                response = await self._client.upload_part(
                    Bucket=self._bucket,
                    Key=self._object_key,
                    UploadId=self._upload_id,
                    PartNumber=number,
                    Body=body,
                    **checksum,
                )
            except ClientError as error:
                if not (checksum and number == 1 and _refuses_header(error)):
                    raise
                response = await self._restart_without_checksum(body, error)
                checksum = {}
        except BaseException:
            # The part's bytes are gone: a later write would leave a hole in the file.
            self._state = "failed"
            raise
        self._parts.append({"ETag": response["ETag"], "PartNumber": number, **checksum})

    async def _restart_without_checksum(self, body: bytearray, refusal: ClientError) -> Any:
        """The first part again, in an upload started anew without a checksum; the refused upload is aborted.

        For a store that took `ChecksumAlgorithm` when the upload started but refuses the part's checksum header:
        an upload started with an algorithm may ask every part for its checksum, so it is not reused.
        """
        assert self._upload_id is not None
        with contextlib.suppress(ClientError):
            await self._client.abort_multipart_upload(
                Bucket=self._bucket, Key=self._object_key, UploadId=self._upload_id
            )
        self._upload_id = None
        response = await self._client.create_multipart_upload(
            Bucket=self._bucket, Key=self._object_key, **self._headers
        )
        self._upload_id = str(response["UploadId"])
        response = await self._client.upload_part(
            Bucket=self._bucket, Key=self._object_key, UploadId=self._upload_id, PartNumber=1, Body=body
        )
        self._checksum_refused(refusal)
        return response

    async def _with_checksum(
        self, call: Callable[..., Awaitable[Any]], arguments: dict[str, Any], checksum: dict[str, Any]
    ) -> Any:
        """`call` with the checksum's arguments; if the store refuses them, the same call without and none after.

        `checksum` adds arguments or replaces some of `arguments` (the completion's parts, with their CRC32s). Should
        the call without fail too, that failure is not the checksum's: it propagates and nothing changes.
        """
        if not checksum:
            return await call(**arguments)
        try:
            return await call(**(arguments | checksum))
        except ClientError as error:
            if not _refuses_header(error):
                raise
            refusal = error
        response = await call(**arguments)
        self._checksum_refused(refusal)
        return response

    def _checksum_refused(self, refusal: ClientError) -> None:
        """Once the file went up without: no checksum on its remaining requests, and the storage told."""
        self._checksum = None
        if self._on_checksum_refused is not None:
            self._on_checksum_refused(refusal)

    def _algorithm(self) -> dict[str, str]:
        """The `ChecksumAlgorithm` argument of a request that starts a file (none without a checksum)."""
        return {"ChecksumAlgorithm": self._checksum} if self._checksum else {}

    def _crc32(self, body: bytes | bytearray) -> dict[str, str]:
        """The `ChecksumCRC32` argument for `body` (none without a checksum): given, botocore sends it as is."""
        if not self._checksum:
            return {}
        return {"ChecksumCRC32": base64.b64encode(zlib.crc32(body).to_bytes(4, "big")).decode()}


class S3Storage:
    """The production store: one aiobotocore client, opened on first use and closed by `close()`.

    The client belongs to the event loop that opened it: build one store per process (and per loop).
    """

    def __init__(self, config: S3StorageConfig) -> None:
        if config.part_size < MIN_PART_SIZE:
            raise ValueError(f"S3StorageConfig.part_size must be at least {MIN_PART_SIZE} bytes")
        if config.prefix:
            validate_key(config.prefix.rstrip("/") or ".")
        self._config = config
        self._checksum = config.checksum
        """None from the first time the store refused it on."""
        self._stack = AsyncExitStack()
        self._client: Any = None
        self._client_lock = asyncio.Lock()

    async def open_writer(self, key: str, *, content_type: str, filename: str) -> S3FileWriter:
        """Start an object under `prefix + key`; see `Storage.open_writer`. Nothing is sent before a part fills."""
        object_key = self._object_key(key)
        check_content_type(content_type)
        disposition = content_disposition(filename)
        return S3FileWriter(
            await self._get_client(),
            bucket=self._config.bucket,
            object_key=object_key,
            key=key,
            part_size=self._config.part_size,
            content_type=content_type,
            content_disposition=disposition,
            checksum=self._checksum,
            on_checksum_refused=self._checksum_refused,
        )

    def _checksum_refused(self, error: ClientError) -> None:
        """A store that refused a checksum refuses it every time: stop asking, and say so once."""
        if self._checksum is None:
            return
        self._checksum = None
        logger.warning(
            "the S3 store refused the %s checksum (%s: %s): export files go up without one from now on;"
            " set S3StorageConfig.checksum=None for such a store",
            self._config.checksum,
            _error_code(error),
            error.response.get("Error", {}).get("Message", ""),
        )

    async def signed_url(self, key: str, *, expires_in: timedelta, request_base_url: str | None = None) -> str:
        """A presigned SigV4 `GetObject` URL on the storage's own host; `request_base_url` is not used."""
        seconds = int(expires_in.total_seconds())
        if not 1 <= seconds <= _MAX_PRESIGN_SECONDS:
            raise ValueError(f"expires_in must be between 1 second and {_MAX_PRESIGN_SECONDS} seconds")
        object_key = self._object_key(key)
        client = await self._get_client()
        url: str = await client.generate_presigned_url(
            "get_object", Params={"Bucket": self._config.bucket, "Key": object_key}, ExpiresIn=seconds
        )
        return url

    async def delete(self, key: str) -> None:
        """Delete the object; S3 answers success for a missing one too."""
        object_key = self._object_key(key)
        client = await self._get_client()
        await client.delete_object(Bucket=self._config.bucket, Key=object_key)

    async def exists(self, key: str) -> bool:
        """Whether the object exists (a `HeadObject`)."""
        object_key = self._object_key(key)
        client = await self._get_client()
        try:
            await client.head_object(Bucket=self._config.bucket, Key=object_key)
        except ClientError as error:
            if _error_code(error) in ("404", "NoSuchKey", "NotFound"):
                return False
            raise
        return True

    async def close(self) -> None:
        """Close the client and its connection pool; a later call opens a new one."""
        async with self._client_lock:
            self._client = None
            stack, self._stack = self._stack, AsyncExitStack()
            await stack.aclose()

    def _object_key(self, key: str) -> str:
        return self._config.prefix + validate_key(key)

    async def _get_client(self) -> Any:
        if self._client is not None:
            return self._client
        async with self._client_lock:
            if self._client is None:
                config = self._config
                # Path style for custom endpoints (MinIO, moto, ...), which rarely have per-bucket DNS; AWS itself
                # is deprecating it, so there the SDK's default applies.
                s3: dict[str, Any] = {"addressing_style": "path" if config.endpoint_url else "auto"}
                if config.checksum and (config.endpoint_url or "https:").startswith("https:"):
                    s3["payload_signing_enabled"] = False  # see the module's docstring
                self._client = await self._stack.enter_async_context(
                    _session().create_client(
                        "s3",
                        endpoint_url=config.endpoint_url,
                        region_name=config.region,
                        aws_access_key_id=config.access_key_id,
                        aws_secret_access_key=config.secret_access_key,
                        config=AioConfig(
                            signature_version="s3v4",
                            s3=s3,
                            # Newer botocore sends CRC32 checksum headers by default, which several
                            # S3-compatible stores reject; send them only where the API requires them (the
                            # writer sends its own, which `S3StorageConfig.checksum` turns off).
                            request_checksum_calculation="when_required",
                            response_checksum_validation="when_required",
                        ),
                    )
                )
            return self._client
