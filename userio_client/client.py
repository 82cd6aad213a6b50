"""The CLI's side of the admin API: HTTPS with the right trust, admin tokens, retries and error messages.

Why one module: every command must turn the same failures (a refused token, a full rate limit, a server
error, no server at all, a certificate the machine does not trust) into the same one-line message and exit
code 2, and must never send the admin token anywhere but the API (a download URL may be on a storage host).
"""

from __future__ import annotations

import ssl
import sys
import time
from collections.abc import AsyncIterator, Callable, Generator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Final

import httpx
import msgspec

from userio_core.clock import Clock, SystemClock
from userio_core.retry import Backoff, retrying

__all__ = [
    "EXPORT_PATH",
    "IMPORT_PATH",
    "AdminClient",
    "Connection",
    "ImportStatus",
    "TokenSource",
    "TransferError",
    "describe_transport_error",
    "error_for",
    "ssl_context",
]

IMPORT_PATH: Final = "/_api/admin/users/import"
EXPORT_PATH: Final = "/_api/admin/users/export"

TOKEN_TTL: Final = timedelta(minutes=10)
TOKEN_RENEW_BEFORE: Final = timedelta(minutes=2)
"""A signed token lives 10 minutes and is replaced when 2 are left: long runs never send an expired one."""

_RETRIES: Final = 6
"""Attempts of an idempotent request (a status GET) through transient failures, about 30 s in all."""
_MAX_RETRY_AFTER: Final = 60.0
"""A 429 asking to wait longer than this ends the command with a message instead of a silent wait."""
_BACKOFF: Final = Backoff(0.5, cap=8.0)


class ImportStatus(msgspec.Struct):
    """What the importer reads of `GET /_api/admin/users/import/{id}`.

    `details` stays undecoded (its bytes as sent): decoding the records' echo into Python objects, only to
    encode them again into the report, cost 10 of the CLI's 75 us of CPU per record (bench/cli_import.py).
    """

    status: Any = None
    progress: Any = None
    details: msgspec.Raw = msgspec.Raw()


_status_decoder = msgspec.json.Decoder(ImportStatus)


class TransferError(Exception):
    """A failure the CLI reports as one line on stderr; `exit_code` 2 unless said otherwise."""

    def __init__(
        self, message: str, *, exit_code: int = 2, status: int | None = None, retry_after: float | None = None
    ) -> None:
        self.message = message
        self.exit_code = exit_code
        self.status = status
        """The HTTP status of a refused request."""
        self.retry_after = retry_after
        super().__init__(message)


class TokenSource:
    """Admin API JWTs: a fixed one (`--token`), or signed from the admin key and renewed before expiry."""

    def __init__(
        self, *, token: str | None = None, private_pem: str | None = None, project: str, clock: Clock | None = None
    ) -> None:
        if (token is None) == (private_pem is None):
            raise ValueError("give exactly one of token and private_pem")
        self._fixed = token
        self._pem = private_pem
        self._project = project
        self._clock = clock or SystemClock()
        self._token: str | None = None
        self._renew_at = 0.0
        self.signed = 0
        """How many tokens were signed (renewals show here)."""

    def current(self) -> str:
        """The token to send now."""
        if self._fixed is not None:
            return self._fixed
        now = self._clock.now().timestamp()
        if self._token is None or now >= self._renew_at:
            from userio_core.admin_keys import sign_admin_token  # jwt and cryptography: only with a key

            assert self._pem is not None
            self._token = sign_admin_token(self._pem, self._project, ttl=TOKEN_TTL, clock=self._clock)
            self._renew_at = now + (TOKEN_TTL - TOKEN_RENEW_BEFORE).total_seconds()
            self.signed += 1
        return self._token


class _BearerAuth(httpx.Auth):
    """Puts the current admin token on each request of the API client (and only there)."""

    def __init__(self, tokens: TokenSource) -> None:
        self._tokens = tokens

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._tokens.current()}"
        yield request


def ssl_context(cacert: Path | None, insecure: bool) -> ssl.SSLContext | bool:
    """The public CAs plus `cacert` (the demo's self-signed certificate), or no verification at all."""
    if insecure:
        return False
    import certifi

    context = ssl.create_default_context(cafile=certifi.where())
    if cacert is not None:
        try:
            context.load_verify_locations(cafile=str(cacert))
        except (OSError, ssl.SSLError) as exc:
            raise TransferError(f"cannot use {cacert} as a CA certificate: {exc}") from exc
    return context


@dataclass
class Connection:
    """Where the server is and how to prove we are its admin."""

    url: str
    project: str
    tokens: TokenSource
    verify: ssl.SSLContext | bool
    host: str | None = None
    """The Host header (selects the project); None: the URL's host."""
    timeout: float = 120.0
    key_path: Path | None = None
    """The admin key given (flag, variable, profile); None: the default path, or a token."""
    cacert: Path | None = None
    """The CA certificate given; None: the default one, if any."""
    insecure: bool = False
    token: str | None = None
    """A token given on the command line (one from the environment stays there)."""

    def args(self) -> list[str]:
        """The flags that reach this server and project again, for commands the CLI prints."""
        args = ["--url", self.url, "--project", self.project]
        if self.host:
            args += ["--host", self.host]
        if self.key_path is not None:
            args += ["--key", str(self.key_path)]
        if self.token is not None:
            args += ["--token", self.token]
        if self.cacert is not None:
            args += ["--cacert", str(self.cacert)]
        if self.insecure:
            args.append("--insecure")
        return args


def _find_cause(error: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first exception of type `kind` among `error`, its causes, contexts and exception arguments."""
    seen: set[int] = set()
    stack: list[BaseException] = [error]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        linked = [current.__cause__, current.__context__, *current.args]
        stack.extend(item for item in linked if isinstance(item, BaseException))
    return None


def describe_transport_error(error: httpx.TransportError, url: str) -> str:
    """One line for a request that got no HTTP answer."""
    if isinstance(error, httpx.TimeoutException):
        return f"the server at {url} did not answer in time ({type(error).__name__})"
    verification = _find_cause(error, ssl.SSLCertVerificationError)
    text = str(error)
    if verification is not None or "CERTIFICATE_VERIFY_FAILED" in text:
        reason = getattr(verification, "verify_message", None) or text
        return (
            f"TLS verification failed for {url}: {reason} "
            "(pass --cacert FILE with the server's certificate, or --insecure)"
        )
    if isinstance(error, httpx.ConnectError):
        if _find_cause(error, ConnectionRefusedError) is not None or "refused" in text.lower():
            return f"cannot connect to {url}: connection refused (is the server running?)"
        return f"cannot connect to {url}: {text or type(error).__name__}"
    return f"the connection to {url} failed: {text or type(error).__name__}"


def _retryable(error: BaseException, *, idempotent: bool) -> bool:
    """Whether another attempt may succeed and cannot do harm.

    Idempotent calls retry connection failures and 5xx. A POST retries only when the request certainly created
    nothing: it could not connect, or the server answered 429. An untrusted certificate is never retried.
    """
    if not isinstance(error, TransferError):
        return False
    cause = error.__cause__
    if isinstance(cause, httpx.TransportError):
        verification = _find_cause(cause, ssl.SSLCertVerificationError) is not None
        if verification or "CERTIFICATE_VERIFY_FAILED" in str(cause):
            return False
        return idempotent or isinstance(cause, httpx.ConnectError)
    if error.status == 429:
        return error.retry_after is None or error.retry_after <= _MAX_RETRY_AFTER
    return error.status is not None and error.status >= 500 and idempotent


def _error_message(response: httpx.Response) -> tuple[str, str | None]:
    """The server's message and, for the export envelope, the error's reason."""
    try:
        body = msgspec.json.decode(response.content)
    except msgspec.DecodeError:
        return response.text.strip()[:200] or response.reason_phrase, None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str):
        return error, None
    if isinstance(error, dict):
        return str(error.get("message", "")), str(error.get("reason", "")) or None
    return response.text.strip()[:200], None


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _describe_wait(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {secs} s" if minutes else f"{secs} s"


def error_for(response: httpx.Response, *, action: str) -> TransferError:
    """The one-line error for a refused request; `action` says what was attempted."""
    error = _error_for(response, action)
    error.status = response.status_code
    return error


def _error_for(response: httpx.Response, action: str) -> TransferError:
    status = response.status_code
    message, reason = _error_message(response)
    if status == 403:
        lowered = message.lower()
        if reason in ("UnknownHost",) or "host header" in lowered:
            return TransferError(f"the server serves no project on this host (403): {message} (check --url or --host)")
        if reason in ("HTTPSRequired",) or "https" in lowered:
            return TransferError(f"the server refused the request (403): {message}")
        return TransferError(f"the server refused the admin token (403): {message}")
    if status == 413:
        size = len(response.request.content) if response.request is not None else 0
        return TransferError(
            f"the server refused a request of {size} bytes as too large (413): {message} "
            "(lower --max-request-bytes to the server's limit)"
        )
    if status == 429 and reason == "MaximumConcurrentJobLimitExceeded":
        return TransferError(f"the server is busy (429): {message}")
    if status == 429:
        wait = _retry_after(response)
        when = f"; retry after {_describe_wait(wait)}" if wait is not None else ""
        return TransferError(f"rate limited by the server (429): {message}{when}", retry_after=wait)
    if status == 404:
        return TransferError(f"{action}: not found (404): {message}")
    if reason == "UserExportDisabled":  # the reference's 500 for a setting, not a crash
        return TransferError(
            f"exports are disabled for this project ({status} UserExportDisabled): an operator turns them on with "
            "`litestar userio project configure --project ID --set export_enabled=true` (and a storage configured)"
        )
    if status >= 500:
        return TransferError(f"server error ({status}) while trying to {action}: {message}")
    return TransferError(f"the server refused to {action} ({status}): {message}")


class AdminClient:
    """The admin API as the CLI uses it; `async with AdminClient.open(connection) as client`."""

    def __init__(self, connection: Connection, http: httpx.AsyncClient, notify: Callable[[str], None]) -> None:
        self.connection = connection
        self._http = http
        self._notify = notify

    @classmethod
    @asynccontextmanager
    async def open(
        cls, connection: Connection, *, notify: Callable[[str], None] | None = None, max_connections: int = 16
    ) -> AsyncIterator[AdminClient]:
        """A client for `connection`; `notify` receives one-line notes (waits, retries)."""
        headers = {"User-Agent": "litestar-userio-cli"}
        if connection.host:
            headers["Host"] = connection.host
        http = httpx.AsyncClient(
            base_url=connection.url.rstrip("/"),
            verify=connection.verify,
            headers=headers,
            auth=_BearerAuth(connection.tokens),
            timeout=httpx.Timeout(connection.timeout, connect=15.0),
            limits=httpx.Limits(max_connections=max_connections),
            follow_redirects=False,
        )
        try:
            yield cls(connection, http, notify or (lambda _message: None))
        finally:
            await http.aclose()

    async def _send(
        self,
        method: str,
        path: str,
        *,
        action: str,
        content: bytes | None = None,
        idempotent: bool,
        attempts: int = _RETRIES,
        extra_headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """One API call, retried with backoff while `_retryable`; the response is 2xx or a `TransferError` is raised."""
        headers = {"Content-Type": "application/json"} if content is not None else {}
        headers.update(extra_headers or {})
        retries = retrying(
            attempts=attempts,
            on=lambda error: _retryable(error, idempotent=idempotent),
            backoff=_BACKOFF,
            on_retry=self._note_retry,
            asked_wait=lambda error: error.retry_after if isinstance(error, TransferError) else None,
        )
        async for attempt in retries:
            with attempt:
                try:
                    response = await self._http.request(method, path, content=content, headers=headers)
                except httpx.TransportError as exc:
                    raise TransferError(describe_transport_error(exc, self.connection.url)) from exc
                if not response.is_success:
                    raise error_for(response, action=action)
                return response
        raise AssertionError("unreachable")

    def _note_retry(self, error: BaseException, attempt: int, wait: float) -> None:
        assert isinstance(error, TransferError)
        if error.status == 429:
            self._notify(f"{error.message}; waiting {_describe_wait(wait)}")
        elif attempt > 1 or not isinstance(error.__cause__, httpx.ConnectError):
            self._notify(f"{error.message}; retrying in {wait:.0f} s")

    async def get_json(self, path: str, *, action: str) -> dict[str, Any]:
        """GET a JSON object (with retries)."""
        response = await self._send("GET", path, action=action, idempotent=True)
        return _json_object(response)

    async def post_json(
        self, path: str, body: bytes, *, action: str, idempotency_key: str | None = None
    ) -> tuple[dict[str, Any], httpx.Response]:
        """POST a JSON body.

        With an `Idempotency-Key` it is retried like a GET (the server answers a replay with the same task);
        without one, only when it certainly created nothing.
        """
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        response = await self._send(
            "POST", path, action=action, content=body, idempotent=idempotency_key is not None, extra_headers=headers
        )
        return _json_object(response), response

    async def put_json(self, path: str, body: bytes, *, action: str) -> dict[str, Any]:
        """PUT a JSON body (idempotent: retried like a GET).

        The answer's `warnings` (beside `result`: a hook that answered a sample event in a wrong shape) go to
        standard error, one `warning: ...` line each, whichever command saved.
        """
        response = await self._send("PUT", path, action=action, content=body, idempotent=True)
        answer = _json_object(response) if response.content else {}
        warnings = answer.get("warnings")
        for warning in warnings if isinstance(warnings, list) else ():
            sys.stderr.write(f"warning: {warning}\n")
        return answer

    async def delete(self, path: str, *, action: str) -> None:
        """DELETE (idempotent)."""
        await self._send("DELETE", path, action=action, idempotent=True)

    async def check_access(self) -> None:
        """Fail early, before anything is written, on a wrong URL, host, certificate or token.

        Asks for a task that cannot exist: a 404 proves the server is there and accepted the token.
        """
        try:
            await self._send("GET", f"{IMPORT_PATH}/task_0", action="check the connection", idempotent=True, attempts=1)
        except TransferError as exc:
            if exc.status != 404:
                raise

    async def import_status(self, task_id: str) -> ImportStatus:
        """`GET /_api/admin/users/import/{id}`."""
        path = f"{IMPORT_PATH}/{task_id}"
        response = await self._send("GET", path, action=f"read the status of import task {task_id}", idempotent=True)
        try:
            return _status_decoder.decode(response.content)
        except msgspec.ValidationError as exc:
            raise TransferError(f"the server answered {response.request.url} with unexpected JSON") from exc
        except msgspec.DecodeError as exc:
            raise TransferError(f"the server answered {response.request.url} with invalid JSON: {exc}") from exc

    async def export_status(self, task_id: str) -> dict[str, Any]:
        """`GET /_api/admin/users/export/{id}`: the task inside `result`."""
        body = await self.get_json(f"{EXPORT_PATH}/{task_id}", action=f"read the status of export task {task_id}")
        return _result(body)


def _json_object(response: httpx.Response) -> dict[str, Any]:
    try:
        body = msgspec.json.decode(response.content)
    except msgspec.DecodeError as exc:
        raise TransferError(f"the server answered {response.request.url} with invalid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise TransferError(f"the server answered {response.request.url} with unexpected JSON")
    return body


def _result(body: dict[str, Any]) -> dict[str, Any]:
    result = body.get("result")
    if not isinstance(result, dict):
        raise TransferError("the server's export answer has no `result`")
    return result
