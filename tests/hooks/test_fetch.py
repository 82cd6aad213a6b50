"""`fetch` in hooks (issue 14): performed by the server, to allowlisted origins only, bounded in every way.

Real V8 workers and real HTTP servers on loopback, started by the fixtures: an allowlisted one (which also redirects,
answers slowly or hugely on request) and another that is not on the allowlist.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from litestar_userio.hooks.fetch import FetchClient, FetchLimits, FetchSession, parse_allowlist
from litestar_userio.hooks.v8_runtime import HookRunResult, HookRuntime, RuntimeLimits
from tests.hooks.test_runtime import EVENT_JSON, hook


class Servers:
    """The loopback servers and what the allowlisted one has seen."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.allowed = self._start()
        self.other = self._start()

    def _start(self) -> ThreadingHTTPServer:
        servers = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 65536  # one write per answer

            def _answer(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                for name, value in {"content-type": "application/json", **(headers or {})}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length).decode() if length else None
                servers.seen.append(
                    {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
                )
                if self.path == "/redirect-in":
                    self._answer(302, b"", {"location": "/echo?redirected=1"})
                elif self.path == "/redirect-out":
                    self._answer(302, b"", {"location": f"{servers.origin(servers.other)}/echo"})
                elif self.path == "/slow":
                    servers.release.wait(30)
                    self._answer(200, b"{}")
                elif self.path == "/huge":
                    self._answer(200, b"x" * ((1 << 20) + 1), {"content-type": "text/plain"})
                else:
                    echo = {
                        "method": self.command,
                        "path": self.path,
                        "body": body,
                        "auth": self.headers["authorization"],
                    }
                    self._answer(200, json.dumps(echo).encode(), {"x-served-by": "allowed"})

            do_GET = do_POST = do_PUT = _handle

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    @staticmethod
    def origin(server: ThreadingHTTPServer, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{server.server_address[1]}"

    def close(self) -> None:
        self.release.set()
        for server in (self.allowed, self.other):
            server.shutdown()
            server.server_close()


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    started = Servers()
    yield started
    started.close()


@pytest.fixture(scope="module")
async def runtime() -> AsyncIterator[HookRuntime]:
    rt = HookRuntime(RuntimeLimits(pool_size=2, hook_timeout=2.0))
    await rt.start()
    yield rt
    await rt.close()


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[FetchClient]:
    fetch_client = FetchClient(timeout=5.0)
    yield fetch_client
    await fetch_client.close()


async def run_with_fetch(
    runtime: HookRuntime,
    client: FetchClient,
    source: str,
    allowlist: list[str],
    *,
    limits: FetchLimits | None = None,
    timeout: float | None = None,
    secrets: dict[str, str] | None = None,
) -> HookRunResult:
    session = FetchSession(client, allowlist, limits or FetchLimits(), (secrets or {}).values())
    return await runtime.run(hook(source), EVENT_JSON, timeout=timeout, secrets=secrets, fetcher=session)


def catching(call: str) -> str:
    """A hook that answers the outcome of one fetch call, or the error it threw."""
    return f"""
    export default async () => {{
      try {{
        const response = await {call};
        return {{ status: response.status, text: await response.text() }};
      }} catch (error) {{
        return {{ error: `${{(error as Error).name}}: ${{(error as Error).message}}` }};
      }}
    }}
    """


async def test_hook_posts_json_with_a_secret_header_and_reads_the_answer(runtime, client, servers) -> None:
    origin = Servers.origin(servers.allowed)
    source = f"""
    export default async function (e: any, ctx: any) {{
      const response = await fetch("{origin}/entitlements?user=" + e.payload.user.id, {{
        method: "POST",
        headers: {{ "Content-Type": "application/json", Authorization: `Bearer ${{ctx.secrets.CRM_KEY}}` }},
        body: JSON.stringify({{ email: e.payload.user.standard_attributes.email }}),
      }});
      const body = await response.json();
      return {{ status: response.status, ok: response.ok, served: response.headers.get("X-Served-By"),
               redirected: response.redirected, body }};
    }}
    """
    result = await run_with_fetch(runtime, client, source, [origin], secrets={"CRM_KEY": "k-123456"})
    assert result.ok, result.error_message
    assert result.response["status"] == 200 and result.response["ok"] is True
    assert result.response["served"] == "allowed" and result.response["redirected"] is False
    body = result.response["body"]
    assert body["method"] == "POST" and body["auth"] == "Bearer k-123456"
    assert json.loads(body["body"]) == {
        "email": json.loads(EVENT_JSON)["payload"]["user"]["standard_attributes"]["email"]
    }


async def test_origin_not_on_the_allowlist_is_a_type_error_the_hook_can_catch(runtime, client, servers) -> None:
    allowed, other = Servers.origin(servers.allowed), Servers.origin(servers.other)
    result = await run_with_fetch(runtime, client, catching(f'fetch("{other}/echo")'), [allowed])
    assert result.ok
    assert result.response == {"error": f"TypeError: fetch refused: {other} is not on the project's fetch allowlist"}


async def test_https_only_unless_the_http_origin_is_listed(runtime, client, servers) -> None:
    port = servers.allowed.server_address[1]
    result = await run_with_fetch(
        runtime, client, catching(f'fetch("http://127.0.0.1:{port}/echo")'), [f"https://127.0.0.1:{port}"]
    )
    assert "is not on the project's fetch allowlist" in result.response["error"]


async def test_a_name_that_resolves_to_a_private_address_is_refused_even_when_listed(runtime, client, servers) -> None:
    by_name = Servers.origin(servers.allowed, host="localhost")
    count = len(servers.seen)
    result = await run_with_fetch(runtime, client, catching(f'fetch("{by_name}/echo")'), [by_name])
    assert result.response["error"].startswith("TypeError: fetch refused: localhost resolves to a private address")
    assert len(servers.seen) == count, "nothing reached the server"


async def test_redirects_are_followed_only_within_the_allowlist(runtime, client, servers) -> None:
    allowed = Servers.origin(servers.allowed)
    inside = await run_with_fetch(
        runtime,
        client,
        f'export default async () => {{ const r = await fetch("{allowed}/redirect-in"); '
        f"return {{ url: r.url, redirected: r.redirected, body: await r.json() }}; }}",
        [allowed],
    )
    outside = await run_with_fetch(runtime, client, catching(f'fetch("{allowed}/redirect-out")'), [allowed])
    assert inside.ok and inside.response["redirected"] is True
    assert inside.response["url"] == f"{allowed}/echo?redirected=1"
    assert inside.response["body"]["path"] == "/echo?redirected=1"
    other = Servers.origin(servers.other)
    assert outside.response == {"error": f"TypeError: fetch refused: {other} is not on the project's fetch allowlist"}


CREDENTIALS = (
    '{ headers: { authorization: "Bearer t0k3n", cookie: "sid=abc", "proxy-authorization": "Basic cA==",'
    ' "x-api-key": ctx.secrets.CRM_KEY, "x-trace": "kept" } }'
)


@pytest.mark.parametrize("path", ["/redirect-in", "/redirect-out"])
async def test_a_redirect_to_another_origin_drops_credentials_and_secret_headers(
    runtime, client, servers, path
) -> None:
    """Issue 29: the Fetch standard drops `Authorization` across origins; so do we, with cookies and secrets."""
    allowed, other = Servers.origin(servers.allowed), Servers.origin(servers.other)
    count = len(servers.seen)
    result = await run_with_fetch(
        runtime,
        client,
        f"export default async (e: any, ctx: any) => {{ const r = await fetch('{allowed}{path}', {CREDENTIALS});"
        " return { status: r.status, url: r.url }; }",
        [allowed, other],
        secrets={"CRM_KEY": "sk_live_redirected"},
    )
    assert result.ok and result.response["status"] == 200, result
    first, sent = ({k.lower(): v for k, v in seen["headers"].items()} for seen in servers.seen[count:])
    assert first["authorization"] == "Bearer t0k3n" and first["x-api-key"] == "sk_live_redirected"
    credentials = {"authorization", "cookie", "proxy-authorization", "x-api-key"}
    if path == "/redirect-in":  # same origin: everything goes along
        assert credentials <= set(sent)
    else:
        assert result.response["url"] == f"{other}/echo"
        assert not credentials & set(sent), sent
        assert sent["x-trace"] == "kept"


async def test_a_response_over_the_body_cap_is_refused(runtime, client, servers) -> None:
    allowed = Servers.origin(servers.allowed)
    result = await run_with_fetch(runtime, client, catching(f'fetch("{allowed}/huge")'), [allowed])
    assert result.response == {"error": "TypeError: fetch refused: the response body is too large (over 1048576 bytes)"}


async def test_calls_per_run_are_capped(runtime, client, servers) -> None:
    allowed = Servers.origin(servers.allowed)
    source = f"""
    export default async () => {{
      const outcomes = [];
      for (let i = 0; i < 4; i++) {{
        try {{ outcomes.push((await fetch("{allowed}/echo")).status); }}
        catch (error) {{ outcomes.push(String(error)); }}
      }}
      return outcomes;
    }}
    """
    result = await run_with_fetch(runtime, client, source, [allowed], limits=FetchLimits(max_calls=3))
    assert result.response == [200, 200, 200, "TypeError: fetch refused: too many fetch calls in one run (at most 3)"]


async def test_a_slow_server_is_cut_at_the_hooks_deadline(runtime, client, servers) -> None:
    allowed = Servers.origin(servers.allowed)
    result = await run_with_fetch(runtime, client, catching(f'fetch("{allowed}/slow")'), [allowed], timeout=0.5)
    assert result.error_kind == "timeout"
    assert result.error_message == "the hook did not finish within 0.5 s"
    assert (await run_with_fetch(runtime, client, "export default () => 'next'", [allowed])).response == "next"


async def test_concurrent_fetches_of_one_run_are_answered_together(runtime, client, servers) -> None:
    allowed = Servers.origin(servers.allowed)
    source = f"""
    export default async () => {{
      const paths = ["/a", "/b", "/c"];
      const answers = await Promise.all(paths.map((p) => fetch("{allowed}" + p).then((r) => r.json())));
      return answers.map((a: any) => a.path);
    }}
    """
    result = await run_with_fetch(runtime, client, source, [allowed])
    assert result.response == ["/a", "/b", "/c"]


async def test_without_a_fetcher_every_call_is_refused(runtime, servers) -> None:
    result = await runtime.run(hook(catching(f'fetch("{Servers.origin(servers.allowed)}/echo")')), EVENT_JSON)
    assert result.response == {"error": "TypeError: fetch is not available to this hook"}


async def test_request_and_response_objects_behave_like_the_standard_ones(runtime) -> None:
    source = """
    export default async () => {
      const h = new Headers({ "X-One": "1" });
      h.append("x-one", "2");
      const request = new Request("https://api.example.com/x", { method: "post", headers: h, body: "{}" });
      const response = new Response('{"a":1}', { status: 201, headers: [["content-type", "application/json"]] });
      let reused = "";
      const copy = response.clone();
      await response.json();
      try { await response.text(); } catch (e) { reused = String(e); }
      let badBody = "";
      try { await fetch("https://api.example.com", { method: "POST", body: {} as any }); } catch (e) { badBody = String(e); }
      return { one: h.get("x-one"), method: request.method, text: await request.text(), status: response.status,
               ok: response.ok, type: response.headers.get("Content-Type"), copy: await copy.json(), reused, badBody };
    }
    """
    result = await runtime.run(hook(source), EVENT_JSON)
    assert result.response == {
        "one": "1, 2",
        "method": "POST",
        "text": "{}",
        "status": 201,
        "ok": True,
        "type": "application/json",
        "copy": {"a": 1},
        "reused": "TypeError: Response: the body was already read",
        "badBody": "TypeError: fetch: a body must be a string (JSON.stringify it)",
    }


def test_allowlist_entries_are_canonical_origins() -> None:
    assert parse_allowlist(["HTTPS://API.Example.com:443/", "http://127.0.0.1:8080", "https://[::1]:8443"]) == [
        "https://api.example.com",
        "http://127.0.0.1:8080",
        "https://[::1]:8443",
    ]
    for bad, reason in [
        ("ftp://x", "only http and https"),
        ("https://x/path", "without a path"),
        ("https://user:pw@x", "credentials"),
        ("api.example.com", "only http and https"),
        ("https://x?q=1", "without a path"),
    ]:
        with pytest.raises(ValueError, match=reason):
            parse_allowlist([bad])


def _self_signed_certificate() -> tuple[bytes, bytes]:
    """A certificate for 127.0.0.1 that is its own CA, and its key (PEM)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """An HTTPS server on 127.0.0.1 with a certificate of its own; yields its origin and the CA file to trust."""
    import ssl

    folder = tmp_path_factory.mktemp("tls")
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    certificate, key = _self_signed_certificate()
    cert_file.write_bytes(certificate)
    key_file.write_bytes(key)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        wbufsize = 65536

        def do_GET(self) -> None:
            body = json.dumps({"tls": True, "path": self.path}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{server.server_address[1]}", str(cert_file)
    server.shutdown()
    server.server_close()


async def test_https_origin_is_fetched_with_its_certificate_verified(runtime, tls_server) -> None:
    origin, ca_file = tls_server
    trusting, untrusting = FetchClient(timeout=5.0, ca_file=ca_file), FetchClient(timeout=5.0)
    try:
        verified = await run_with_fetch(
            runtime, trusting, f'export default async () => (await fetch("{origin}/secure")).json()', [origin]
        )
        refused = await run_with_fetch(runtime, untrusting, catching(f'fetch("{origin}/secure")'), [origin])
    finally:
        await trusting.close()
        await untrusting.close()
    assert verified.response == {"tls": True, "path": "/secure"}
    assert refused.response["error"].startswith("TypeError: fetch failed: ConnectError")
    assert "CERTIFICATE_VERIFY_FAILED" in refused.response["error"]


async def test_a_ca_file_replaced_on_disk_is_trusted_by_the_next_client(runtime, tls_server, tmp_path) -> None:
    """Clients share a TLS context per CA file content, so an operator's new CA file is read at the next start."""
    origin, server_ca = tls_server
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(_self_signed_certificate()[0])  # another CA: the server's certificate is not trusted
    before = FetchClient(timeout=5.0, ca_file=str(ca_file))
    ca_file.write_bytes(Path(server_ca).read_bytes())
    after = FetchClient(timeout=5.0, ca_file=str(ca_file))
    try:
        refused = await run_with_fetch(runtime, before, catching(f'fetch("{origin}/secure")'), [origin])
        verified = await run_with_fetch(
            runtime, after, f'export default async () => (await fetch("{origin}/secure")).json()', [origin]
        )
    finally:
        await before.close()
        await after.close()
    assert "CERTIFICATE_VERIFY_FAILED" in refused.response["error"]
    assert verified.response == {"tls": True, "path": "/secure"}


async def test_large_request_bodies_go_out_in_batches_and_an_oversized_one_is_refused(runtime, client, servers) -> None:
    allowed = Servers.origin(servers.allowed)
    source = f"""
    export default async () => {{
      const big = "x".repeat(900 * 1024);
      const sizes = await Promise.all([1, 2, 3].map(() =>
        fetch("{allowed}/echo", {{ method: "POST", body: big }}).then((r) => r.json()).then((a: any) => a.body.length)));
      let refused = "";
      try {{ await fetch("{allowed}/echo", {{ method: "POST", body: "y".repeat(2 * 1024 * 1024) }}); }}
      catch (error) {{ refused = String(error); }}
      return {{ sizes, refused }};
    }}
    """
    result = await run_with_fetch(
        runtime, client, source, [allowed], limits=FetchLimits(max_body_bytes=4 << 20), timeout=2.0
    )
    assert result.ok, result.error_message
    assert result.response == {
        "sizes": [900 * 1024] * 3,
        "refused": "TypeError: fetch refused: the request body is too large (over 1048576 characters)",
    }


@pytest.mark.parametrize(
    "addresses",
    [
        ["93.184.216.34", "127.0.0.1"],  # a public answer mixed with a loopback one (a rebinding attempt)
        ["169.254.169.254"],  # link-local: a cloud metadata service
        ["::ffff:10.0.0.1"],  # a private address written as IPv6
        ["100.64.0.1"],  # shared address space
    ],
    ids=["mixed", "link-local", "ipv4-mapped", "shared"],
)
async def test_a_name_is_resolved_once_and_refused_if_any_address_is_not_global(runtime, addresses) -> None:
    asked: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return addresses

    client = FetchClient(timeout=5.0, resolver=resolver)
    try:
        result = await run_with_fetch(
            runtime, client, catching('fetch("https://crm.example.com/v1")'), ["https://crm.example.com"]
        )
    finally:
        await client.close()
    assert result.response["error"].startswith(
        "TypeError: fetch refused: crm.example.com resolves to a private address"
    )
    assert asked == ["crm.example.com"], "resolved once, by the connection that would use the answer"
