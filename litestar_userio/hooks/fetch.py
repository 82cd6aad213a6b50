"""`fetch` for hooks, performed by the server on a hook's behalf, never from inside V8 (issue 14).

Only origins on the project's allowlist (scheme, host and port exactly as listed; `http` only where an origin says
so). The host is always the one httpx sends and dials (IDNA / UTS 46, numeric IPv4 forms read as addresses), for
the allowlist as for the connection (issue 29). Names are resolved here and refused when any address is not global
(private, loopback, link-local, shared, multicast...); the connection then goes to the address that was checked,
so a second DNS answer cannot point it elsewhere (DNS rebinding). An address literal is dialled only when global or
named by an entry that spells it. Redirects are followed only to allowlisted origins, dropping credentials and
secret-bearing headers when the origin changes; bodies are capped, calls per run are capped, and the runtime stops
everything at the hook's deadline. A refusal reaches the hook as a `TypeError` naming the reason.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import logging
import re
import socket
import ssl
import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx

from litestar_userio.observability import telemetry

__all__ = [
    "FetchClient",
    "FetchLimits",
    "FetchRefused",
    "FetchSession",
    "Origin",
    "Resolver",
    "is_public_address",
    "literal_address",
    "parse_allowlist",
    "system_resolver",
]

logger = logging.getLogger(__name__)

_DEFAULT_PORTS = {"http": 80, "https": 443}
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DROPPED_REQUEST_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer"}
    | {"accept-encoding"}  # bodies come uncompressed, so the cap counts what the hook gets (no zip bombs)
)
_CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})
"""Dropped when a redirect leaves the origin (the Fetch standard's "CORS non-wildcard request-header name" and
its cookie and proxy kin)."""
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_LABEL = re.compile(r"[a-z0-9_-]{1,63}")  # what httpx leaves of a DNS name after IDNA (letters, digits, -, _)
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]*|[0-9]+")
_LISTED_LITERALS: ContextVar[frozenset[IPAddress]] = ContextVar("listed_literals", default=frozenset())
"""The address literals of the allowlist of the fetch in progress: the only non-global addresses it may dial."""


class FetchRefused(Exception):
    """A fetch the policy does not allow; its message reaches the hook in a `TypeError`."""


@dataclass(frozen=True)
class Origin:
    """Scheme, host and port, as an allowlist entry names them."""

    scheme: str
    host: str
    """Lower case; an IPv6 literal without brackets."""
    port: int

    @classmethod
    def parse(cls, text: str, *, entry: bool = False) -> Origin:
        """The origin of a URL (or, with `entry`, of an allowlist entry, which must be only an origin).

        The host is the one the HTTP client sends and dials (`dialled_host`). An entry whose host only maps to an
        address literal (`127。0。0。1`, `2130706433`) is refused: private addresses are reached only through an
        entry that spells the address.
        """
        try:
            parts = urlsplit(text)
            port = parts.port
        except ValueError as exc:
            raise ValueError(f"{text!r} is not a URL: {exc}") from None
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            raise ValueError(f"{text!r}: only http and https URLs")
        if not parts.hostname:
            raise ValueError(f"{text!r} has no host")
        if parts.username is not None or parts.password is not None:
            raise ValueError(f"{text!r}: credentials in a URL are not allowed")
        if entry and (parts.path not in ("", "/") or parts.query or parts.fragment):
            raise ValueError(f"{text!r}: an allowlist entry is an origin (scheme, host, port), without a path")
        host = dialled_host(text)
        address = literal_address(host)
        if address is not None:
            host = str(address)
            if entry and _standard_address(parts.hostname) != address:
                raise ValueError(f"{text!r}: the host is the address {host}; an entry for it must spell the address")
        return cls(scheme, host.removesuffix("."), port if port is not None else _DEFAULT_PORTS[scheme])

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = _DEFAULT_PORTS[self.scheme] == self.port
        return f"{self.scheme}://{host}" + ("" if default else f":{self.port}")


def parse_allowlist(entries: Iterable[str]) -> list[str]:
    """The entries as canonical origins, in order, without duplicates; `ValueError` names a bad one."""
    seen: dict[str, None] = {}
    for text in entries:
        seen[str(Origin.parse(text, entry=True))] = None
    return list(seen)


def dialled_host(url: str) -> str:
    """The host of `url` as httpx sends and dials it; `ValueError` when it is not a DNS name or an address.

    IDNA / UTS 46 mapped (every Unicode full stop is a dot), lower case, an IPv6 literal without brackets.
    """
    try:
        host = httpx.URL(url).raw_host.decode("ascii")
    except (httpx.InvalidURL, UnicodeError) as exc:
        raise ValueError(f"{url!r}: {exc}") from None
    if literal_address(host) is None:
        labels = host.removesuffix(".").split(".")
        if len(host) > 254 or not all(_LABEL.fullmatch(label) for label in labels):
            raise ValueError(f"{url!r}: the host {host!r} is not a DNS name or an address")
        if _NUMBER.fullmatch(labels[-1]):  # the URL standard: such a host is an IPv4 address or nothing
            raise ValueError(f"{url!r}: the host {host!r} is not a valid IPv4 address")
    return host


def _standard_address(host: str) -> IPAddress | None:
    """The address `host` spells in the standard notation (dotted quad, RFC 4291), or None."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def literal_address(host: str) -> IPAddress | None:
    """The address a host names by itself, or None for a name.

    Every form a resolver reads as an address counts (`2130706433`, `0x7f.1`, `127.1`, `127.0.0.1.`: the WHATWG
    URL standard's IPv4 parser).
    """
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    labels = host.split(".")
    if len(labels) > 1 and labels[-1] == "":
        labels.pop()
    if not labels or not _NUMBER.fullmatch(labels[-1]):
        return None  # a name (the standard: only a host whose last label is a number is an IPv4 address)
    try:
        numbers = [_ipv4_number(label) for label in labels]
    except ValueError:
        return None
    if len(numbers) > 4 or any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _ipv4_number(label: str) -> int:
    if label[:2].lower() == "0x":
        return int(label[2:] or "0", 16)
    if len(label) > 1 and label.startswith("0"):
        return int(label[1:], 8)
    if not label.isdigit():
        raise ValueError(label)
    return int(label)


def is_public_address(address: IPAddress) -> bool:
    """Whether `address` may be dialled without an allowlist entry naming it: global and not multicast."""
    return _is_public(address)


def _is_public(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


@dataclass(frozen=True)
class FetchLimits:
    """Bounds of a hook's fetches."""

    max_calls: int = 10
    """Calls per run; the next one is refused."""
    max_body_bytes: int = 1 << 20
    """Response bodies larger than this are refused (and so are request bodies)."""
    max_redirects: int = 5
    """Redirects followed per call (each within the allowlist)."""


Resolver = Callable[[str, int], Awaitable[list[str]]]
"""A host and port to the addresses it resolves to (the system resolver unless a `FetchClient` is given another)."""


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system resolver gives for `host`."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Resolves names itself, refuses addresses that are not global, and connects to the address it checked."""

    def __init__(self, resolve: Resolver, inner: httpcore.AsyncNetworkBackend) -> None:
        self._inner = inner
        self._resolve = resolve

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        # The address dialled is checked here, whatever the URL looked like: a literal (in any spelling a resolver
        # reads) only when global or an entry of the allowlist, a name only when every address it has is global.
        address = literal_address(host)
        if address is not None:
            if not _is_public(address) and address not in _LISTED_LITERALS.get():
                raise FetchRefused(f"{host} is a private address not named by an allowlist entry")
            host = str(address)
        else:
            addresses = [ipaddress.ip_address(a) for a in await self._resolve(host, port)]
            refused = [a for a in addresses if not _is_public(a)]
            if not addresses or refused:
                raise FetchRefused(f"{host} resolves to a private address ({refused[0] if refused else 'none'})")
            host = str(addresses[0])
        return await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise FetchRefused("unix sockets are not reachable")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _Body(httpx.AsyncByteStream):
    def __init__(self, stream: typing.AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield chunk

    async def aclose(self) -> None:
        closer = getattr(self._stream, "aclose", None)
        if closer is not None:
            await closer()


class _PinnedTransport(httpx.AsyncBaseTransport):
    """httpx over an httpcore pool whose connections go only to checked addresses."""

    def __init__(
        self,
        verify: ssl.SSLContext,
        resolve: Resolver,
        network: httpcore.AsyncNetworkBackend | None,
        max_connections: int = 100,
    ) -> None:
        backend = _PinnedBackend(resolve, network or httpcore.AnyIOBackend())
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=verify, max_connections=max_connections, keepalive_expiry=30.0, network_backend=backend
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        response = await self._pool.handle_async_request(core)
        assert not isinstance(response.stream, typing.Iterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def _verifying_context(ca_file: str | None) -> ssl.SSLContext:
    """The TLS context that verifies origins' certificates against the system's CAs or `ca_file`.

    Built once per process and CA file content: loading the CA certificates took ~40 ms of CPU at each app start. A
    file replaced on disk is read again by the next app start; the system's store, once per process.
    """
    return _context_for(ca_file, Path(ca_file).read_bytes() if ca_file else None)


@functools.lru_cache(maxsize=8)
def _context_for(ca_file: str | None, content: bytes | None) -> ssl.SSLContext:
    """`content` is only the cache's key: a file's bytes (a few KB), so a replaced file is another entry."""
    return ssl.create_default_context(cafile=ca_file)


class FetchClient:
    """One pooled HTTP client per process for every hook's fetches."""

    def __init__(
        self,
        *,
        timeout: float,
        ca_file: str | None = None,
        resolver: Resolver = system_resolver,
        network: httpcore.AsyncNetworkBackend | None = None,
        max_connections: int = 100,
    ) -> None:
        """`network` is what dials the checked addresses (AnyIO's sockets; tests record what would be dialled)."""
        self._client = httpx.AsyncClient(
            transport=_PinnedTransport(_verifying_context(ca_file), resolver, network, max_connections),
            timeout=timeout,
            follow_redirects=False,
            trust_env=False,
        )

    async def close(self) -> None:
        """Close the pooled connections."""
        await self._client.aclose()

    async def perform(
        self,
        request: dict[str, Any],
        allowlist: frozenset[Origin],
        limits: FetchLimits,
        secrets: Iterable[str] = (),
    ) -> dict[str, Any]:
        """One request of a hook, redirects within the allowlist followed; `FetchRefused` when not allowed.

        A redirect to another origin drops the credentials (`Authorization`, `Cookie`, `Proxy-Authorization`, as
        the Fetch standard does) and every header carrying one of `secrets`: they stay with the origin the hook
        sent them to.
        """
        url, method = str(request.get("url")), str(request.get("method") or "GET").upper()
        body = request.get("body")
        content = None if body is None else str(body).encode()
        if content is not None and len(content) > limits.max_body_bytes:
            raise FetchRefused(f"the request body is too large (over {limits.max_body_bytes} bytes)")
        headers = [
            (str(name), str(value))
            for name, value in request.get("headers") or []
            if str(name).lower() not in _DROPPED_REQUEST_HEADERS
        ]
        headers.append(("accept-encoding", "identity"))
        secret_values = [value for value in secrets if value]
        listed = _LISTED_LITERALS.set(frozenset(a for o in allowlist if (a := literal_address(o.host)) is not None))
        try:
            return {
                "i": request.get("i"),
                **await self._follow(url, method, headers, content, allowlist, limits, secret_values),
            }
        finally:
            _LISTED_LITERALS.reset(listed)

    async def post_once(
        self, url: str, headers: Sequence[tuple[str, str]], content: bytes, listed: Iterable[Origin], max_bytes: int
    ) -> tuple[int, bytes]:
        """POST `content` to `url` once, no redirect followed; the status and at most `max_bytes` of the answer.

        The address rules of every fetch hold at connect time (a name resolving to a private address is refused, as
        is a private literal), except for an address literal that one of the `listed` origins spells: the
        operator's private origins (webhooks, `WebhookConfig.allowed_private_origins`). `FetchRefused` when the
        rules refuse it; httpx's and httpcore's errors when the connection fails. The rest of a longer answer is not
        read: the connection is closed.
        """
        literals = frozenset(a for o in listed if (a := literal_address(o.host)) is not None)
        token = _LISTED_LITERALS.set(literals)
        try:
            request = self._client.build_request("POST", url, headers=list(headers), content=content)
            response = await self._client.send(request, stream=True, follow_redirects=False)
            try:
                data = bytearray()
                async for chunk in response.aiter_raw():
                    data += chunk
                    if len(data) >= max_bytes:
                        break
                return response.status_code, bytes(data[:max_bytes])
            finally:
                await response.aclose()
        finally:
            _LISTED_LITERALS.reset(token)

    async def _follow(
        self,
        url: str,
        method: str,
        headers: list[tuple[str, str]],
        content: bytes | None,
        allowlist: frozenset[Origin],
        limits: FetchLimits,
        secret_values: list[str],
    ) -> dict[str, Any]:
        first: Origin | None = None
        for hop in range(limits.max_redirects + 1):
            try:
                origin = Origin.parse(url)
            except ValueError as exc:
                raise FetchRefused(str(exc)) from None
            if origin not in allowlist:
                raise FetchRefused(f"{origin} is not on the project's fetch allowlist")
            if first is None:
                first = origin
            elif origin != first:
                headers = [
                    (k, v)
                    for k, v in headers
                    if k.lower() not in _CREDENTIAL_HEADERS and not any(secret in v for secret in secret_values)
                ]
            outgoing = self._client.build_request(method, url, headers=headers, content=content)
            response = await self._client.send(outgoing, stream=True)
            try:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location:
                    url = urljoin(url, location)
                    if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
                        method, content = "GET", None
                        headers = [(k, v) for k, v in headers if k.lower() != "content-type"]
                    continue
                data = bytearray()
                async for chunk in response.aiter_raw():
                    data += chunk
                    if len(data) > limits.max_body_bytes:
                        raise FetchRefused(f"the response body is too large (over {limits.max_body_bytes} bytes)")
                return {
                    "ok": True,
                    "status": response.status_code,
                    "statusText": response.reason_phrase,
                    "headers": [[k.lower(), v] for k, v in response.headers.multi_items()],
                    "url": url,
                    "redirected": hop > 0,
                    "body": data.decode("utf-8", errors="replace"),
                }
            finally:
                await response.aclose()
        raise FetchRefused(f"more than {limits.max_redirects} redirects")


def _stored_entries(entries: Iterable[str]) -> Iterable[Origin]:
    """The entries saved before a rule refused them (`127。0。0。1`) count for nothing; the others as saved."""
    for entry in entries:
        try:
            yield Origin.parse(entry, entry=True)
        except ValueError as exc:
            logger.warning("a stored fetch allowlist entry is ignored: %s", exc)


class FetchSession:
    """The fetches of one run: the project's allowlist and the cap on calls (a `hooks.v8_runtime.Fetcher`)."""

    def __init__(
        self, client: FetchClient, allowlist: Sequence[str], limits: FetchLimits, secrets: Iterable[str] = ()
    ) -> None:
        self.client = client
        self.secrets = tuple(secrets)
        self.allowlist = frozenset(_stored_entries(allowlist))
        self.limits = limits
        self.calls = 0
        self.errors: list[str] = []
        """Each refusal and failure of the run, as the hook got it: the run log keeps them beside its console, so a
        run that died of one (or swallowed it) still names the origin refused."""

    async def __call__(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Perform a batch of the run's requests at once; each answer is a response or a refusal."""
        with telemetry.span("userio.hook.fetch", {"userio.fetch.calls": len(requests)}):
            answers = list(await asyncio.gather(*(self._one(request) for request in requests)))
        telemetry.hook_fetches(answers)
        self.errors.extend(str(answer["error"]) for answer in answers if not answer.get("ok") and "error" in answer)
        return answers

    async def _one(self, request: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        try:
            if self.calls > self.limits.max_calls:
                raise FetchRefused(f"too many fetch calls in one run (at most {self.limits.max_calls})")
            return await self.client.perform(request, self.allowlist, self.limits, self.secrets)
        except FetchRefused as exc:
            return {"i": request.get("i"), "ok": False, "error": f"fetch refused: {exc}"}
        except (httpx.HTTPError, httpcore.NetworkError, httpcore.TimeoutException, httpcore.ProtocolError) as exc:
            return {"i": request.get("i"), "ok": False, "error": f"fetch failed: {type(exc).__name__}: {exc}"}
        except OSError as exc:
            return {"i": request.get("i"), "ok": False, "error": f"fetch failed: {exc.strerror or exc}"}
        except Exception:
            logger.exception("a hook's fetch failed unexpectedly")
            return {"i": request.get("i"), "ok": False, "error": "fetch failed"}
