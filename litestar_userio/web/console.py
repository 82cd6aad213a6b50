"""Serves the console's built assets (committed in `static/`, built from `console/` at the repo root).

No Node.js on the server: the wheel carries the files. Every answer carries strict security headers: the
page runs only its own scripts (no inline script), cannot be framed, and sends no referrer, so the admin
token it keeps in sessionStorage (it arrives in the URL fragment, which no request carries) leaks nowhere.
"""

import gzip
import mimetypes
from functools import cache
from pathlib import Path
from typing import Any

from litestar import Controller, Request, Response, Router, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Redirect

__all__ = ["SECURITY_HEADERS", "STATIC_DIR", "ConsoleController", "hooks_types_path"]

STATIC_DIR = Path(__file__).parent.parent / "console" / "static"
"""The built console (index.html, assets/)."""

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        # The editor sets element styles at run time; scripts stay 'self' only.
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "worker-src 'self'",
        "manifest-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "object-src 'none'",
    )
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}

_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".ttf": "font/ttf",
    ".woff2": "font/woff2",
    ".svg": "image/svg+xml",
}


def hooks_types_path() -> Path | None:
    """`plugins/hooks.d.ts`: shipped next to this module in the wheel, read from the repo in a checkout."""
    for candidate in (STATIC_DIR.parent / "hooks.d.ts", Path(__file__).parents[2] / "plugins" / "hooks.d.ts"):
        if candidate.is_file():
            return candidate
    return None


def _assets() -> dict[str, Path]:
    folder = STATIC_DIR / "assets"
    return {p.name: p for p in folder.iterdir() if p.is_file()} if folder.is_dir() else {}


@cache
def _compressed(file: Path) -> bytes:
    """Gzip once per process: the editor's TypeScript worker is 7 MB, 1.5 MB gzipped."""
    return gzip.compress(file.read_bytes(), compresslevel=6, mtime=0)


def _accepts_gzip(request: Request[Any, Any, Any]) -> bool:
    return any(part.split(";")[0].strip() == "gzip" for part in request.headers.get("accept-encoding", "").split(","))


class ConsoleController(Controller):
    """The console's page, its fingerprinted assets, and the hook types the editor completes from.

    Static files only: every call the page makes goes to the admin API with the admin token. Mounted under
    `ConsoleConfig.path` by a Router; the assets are listed once per mount.
    """

    path = "/"
    include_in_schema = False
    assets: dict[str, Path]

    def __init__(self, owner: Router) -> None:
        super().__init__(owner)
        self.assets = _assets()

    @get("/", sync_to_thread=False)
    def page(self, request: Request[Any, Any, Any]) -> Response[bytes] | Redirect:
        raw_path = request.scope.get("raw_path") or request.scope["path"].encode()
        if not raw_path.endswith(b"/"):  # the assets are relative to the page's folder
            return Redirect(f"{request.scope['path_template'].rstrip('/')}/", headers=SECURITY_HEADERS)
        return Response(
            (STATIC_DIR / "index.html").read_bytes(),
            media_type="text/html; charset=utf-8",
            headers={**SECURITY_HEADERS, "Cache-Control": "no-store"},
        )

    @get("/assets/{name:str}", sync_to_thread=False)
    def asset(self, request: Request[Any, Any, Any], name: FromPath[str]) -> Response[bytes]:
        file = self.assets.get(name)
        if file is None:
            raise NotFoundException()
        media_type = _TYPES.get(file.suffix) or mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        headers = {
            **SECURITY_HEADERS,
            "Cache-Control": "public, max-age=31536000, immutable",
            "Vary": "Accept-Encoding",
        }
        if file.suffix in {".js", ".css", ".ttf"} and _accepts_gzip(request):
            return Response(_compressed(file), media_type=media_type, headers={**headers, "Content-Encoding": "gzip"})
        return Response(file.read_bytes(), media_type=media_type, headers=headers)

    @get("/hooks.d.ts", sync_to_thread=False)
    def hook_types(self) -> Response[bytes]:
        file = hooks_types_path()
        if file is None:
            raise NotFoundException()
        return Response(
            file.read_bytes(),
            media_type="text/plain; charset=utf-8",
            headers={**SECURITY_HEADERS, "Cache-Control": "no-cache"},
        )
