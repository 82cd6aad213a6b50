"""One delivery attempt: a signed POST under the hooks' fetch address rules, bounded in time and in what is read.

The connection goes through `hooks.fetch.FetchClient` (`post_once`): the address dialled is checked when it is
dialled (a name that resolves to a loopback or private address is refused, whatever it resolved to at save time),
and only the operator's `WebhookConfig.allowed_private_origins` reach such an address. No redirect is followed (a
3xx is a failed attempt); at most `max_response_bytes` of the answer are read; the whole attempt, connect included,
ends at `timeout`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import httpcore
import httpx

from litestar_userio.hooks.fetch import FetchClient, FetchRefused, Origin, is_public_address, literal_address
from litestar_userio.webhooks.signing import signed_headers

__all__ = ["Attempt", "WebhookSender", "check_url", "private_origins"]

_MAX_ERROR = 500
"""Characters of an answer or an error kept as the delivery's `last_error`."""


def private_origins(entries: Iterable[str]) -> frozenset[Origin]:
    """The operator's private origins, parsed (a malformed entry fails the configuration at start)."""
    return frozenset(Origin.parse(entry, entry=True) for entry in entries)


def check_url(url: str, private: frozenset[Origin]) -> str:
    """`url` if a webhook may name it; `ValueError` saying why not.

    https only, unless the operator lists the URL's (http) origin; an address literal that is not public only when
    listed. A DNS name is checked again when each attempt dials it.
    """
    origin = Origin.parse(url)
    if urlsplit(url).fragment:
        raise ValueError(f"{url!r}: a webhook URL has no fragment")
    if origin in private:
        return url
    if origin.scheme != "https":
        raise ValueError(f"{url!r}: webhooks are https only (unless the operator lists the origin)")
    address = literal_address(origin.host)
    if address is not None and not is_public_address(address):
        raise ValueError(f"{url!r}: {origin.host} is a private address (the operator may list its origin)")
    if origin.host == "localhost" or origin.host.endswith(".localhost"):
        raise ValueError(f"{url!r}: localhost is a loopback address (the operator may list its origin)")
    return url


@dataclass(frozen=True)
class Attempt:
    """What one attempt came to."""

    ok: bool
    status_code: int | None
    error: str | None
    refused: bool
    """The address rules refused it (not the receiver)."""
    seconds: float


class WebhookSender:
    """Sends attempts through one pooled client (a connection per receiver kept alive)."""

    def __init__(
        self, *, timeout: timedelta, max_response_bytes: int, private: frozenset[Origin], ca_file: str | None
    ) -> None:
        self.timeout = timeout.total_seconds()
        self.max_response_bytes = max_response_bytes
        self.private = private
        # Enough connections that the attempts in flight of every project fit (each project's are capped, so a dead
        # receiver's never take the others' connections).
        self._client = FetchClient(timeout=self.timeout, ca_file=ca_file, max_connections=4096)

    async def close(self) -> None:
        """Close the pooled connections."""
        await self._client.close()

    async def send(self, url: str, secret: str, message_id: str, body: bytes) -> Attempt:
        """One signed POST of `body`; never raises for anything the receiver or the network does."""
        started = time.perf_counter()
        try:
            origin = Origin.parse(url)
            listed = (origin,) if origin in self.private else ()
            if not listed and origin.scheme != "https":
                raise FetchRefused(f"{origin} is not https")
            headers = signed_headers(secret, message_id, body, datetime.now(UTC))  # the receiver's clock, not ours
            async with asyncio.timeout(self.timeout):
                status, answer = await self._client.post_once(url, headers, body, listed, self.max_response_bytes)
        except TimeoutError:
            return self._failed(f"no answer within {self.timeout:g} s", started)
        except (FetchRefused, ValueError) as exc:
            return self._failed(f"refused: {exc}", started, refused=True)
        except (httpx.HTTPError, httpcore.NetworkError, httpcore.TimeoutException, httpcore.ProtocolError) as exc:
            return self._failed(f"connection failed: {type(exc).__name__}: {exc}"[:_MAX_ERROR], started)
        except OSError as exc:
            return self._failed(f"connection failed: {exc.strerror or exc}"[:_MAX_ERROR], started)
        seconds = time.perf_counter() - started
        if 200 <= status < 300:
            return Attempt(True, status, None, False, seconds)
        text = answer[:_MAX_ERROR].decode("utf-8", errors="replace")
        error = f"answered {status}" + (" (redirects are not followed)" if 300 <= status < 400 else "")
        return Attempt(False, status, f"{error}: {text}" if text else error, False, seconds)

    @staticmethod
    def _failed(error: str, started: float, *, refused: bool = False) -> Attempt:
        return Attempt(False, None, error, refused, time.perf_counter() - started)
