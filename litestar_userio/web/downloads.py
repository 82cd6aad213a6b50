"""The public download route of the local store (docs/reference.md#export-download).

A signed URL carries its own authority, so the route has no guards and asks for no bearer token; it must not
sit behind the admin controllers' guard. Every refusal is a 403 in the export error envelope.
"""

from litestar import Controller, get
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery
from litestar.response import Stream

from litestar_userio.storage.local import LocalStorage
from litestar_userio.web.error_responses import export_error_handler

__all__ = ["DownloadController"]


class DownloadController(Controller):
    """Streams an export file to whoever holds a valid signed URL: `GET /{key}`.

    Mount it with a Router at the `LocalStorageConfig.route_path` the store signs for; the store arrives by
    dependency injection as `userio_storage` (the plugin provides it).
    """

    exception_handlers = {Exception: export_error_handler}
    include_in_schema = False
    opt = {"exclude_from_auth": True}

    @get("/{key:path}", name="userio-download")
    async def download(
        self,
        key: FromPath[str],
        userio_storage: NamedDependency[LocalStorage],
        expires: FromQuery[str | None] = None,
        signature: FromQuery[str | None] = None,
    ) -> Stream:
        """The file's bytes with its stored `Content-Type` and `Content-Disposition: attachment`."""
        download = await userio_storage.open_signed(key.lstrip("/"), expires=expires, signature=signature)
        return Stream(
            download.chunks(),
            media_type=download.content_type,
            headers={
                # Set here, not only through media_type, so Litestar does not append a charset to text/*.
                "content-type": download.content_type,
                "content-disposition": download.content_disposition,
                "content-length": str(download.size),
                "cache-control": "private, no-store",
                "x-content-type-options": "nosniff",
            },
        )
