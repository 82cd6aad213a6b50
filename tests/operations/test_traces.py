"""Issue 30.2: one trace shows the admin request and then its chunks (on whichever process ran them), and hook runs;
no attribute carries a secret, a password, a token or a login id. Checked through the SDK's in-memory exporter."""

from __future__ import annotations

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from litestar_userio import TracingConfig
from tests.exports.helpers import EXPORT, download, export_and_wait
from tests.helpers import HASH_2B, IMPORT, PASSWORD, run_import

ALLOW = "export default (e: any) => ({ is_allowed: true });"


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def tracing(exporter) -> TracingConfig:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return TracingConfig(tracer_provider=provider)


def request_span(spans, method: str, path: str):
    """The server span Litestar's OpenTelemetry middleware made for a request."""
    found = [s for s in spans if s.kind.name == "SERVER" and s.name.startswith(method) and path in s.name]
    assert found, [s.name for s in spans]
    return found[0]


@pytest.mark.engine
async def test_chunk_spans_continue_the_trace_of_the_import_request(observed, tracing, exporter):
    world = await observed(tracing=tracing, imports={"chunk_size": 2})
    world.env.hold_jobs()
    records = [{"email": f"user{i}@example.com"} for i in range(5)]

    response = await world.project.post(IMPORT, {"identifier": "email", "records": records})
    await world.env.drain()

    spans = exporter.get_finished_spans()
    request = request_span(spans, "POST", IMPORT)
    chunks = [s for s in spans if s.name == "userio.import.chunk"]
    assert response.status_code == 202
    assert len(chunks) == 3
    assert {s.context.trace_id for s in chunks} == {request.context.trace_id}
    assert {s.attributes["userio.task_id"] for s in chunks} == {response.json()["id"]}


@pytest.mark.engine
async def test_export_span_continues_the_trace_of_the_export_request(observed, tracing, exporter):
    world = await observed(tracing=tracing)
    world.env.hold_jobs()

    response = await world.project.post(EXPORT, {"format": "ndjson"})
    await world.env.drain()

    spans = exporter.get_finished_spans()
    request = request_span(spans, "POST", EXPORT)
    exports = [s for s in spans if s.name == "userio.export"]
    assert response.status_code == 202, response.text
    assert [s.context.trace_id for s in exports] == [request.context.trace_id]


async def test_the_download_urls_signature_is_in_no_span(observed, tracing, exporter):
    world = await observed(tracing=tracing)
    result = await export_and_wait(world.project, {"format": "ndjson"})
    url = httpx.URL(result["download_url"])

    downloaded = await download(world.project, str(url))

    attributes = [str(v) for s in exporter.get_finished_spans() for v in (s.attributes or {}).values()]
    assert downloaded.status_code == 200
    assert url.params["signature"]
    assert not [a for a in attributes if url.params["signature"] in a]


async def test_hook_runs_have_spans_and_no_attribute_carries_a_secret(observed, tracing, exporter):
    world = await observed(tracing=tracing)
    await run_import(
        world.project, [{"email": "ada@example.com", "password": {"type": "bcrypt", "password_hash": HASH_2B}}]
    )
    await world.put_hooks(("oidc.jwt.pre_create", ALLOW))

    signed_in = await world.sign_in()

    spans = exporter.get_finished_spans()
    token_trace = request_span(spans, "POST", "/oauth2/token").context.trace_id
    # The save ran the hook once on a sample event too, in the PUT's own trace.
    runs = [s for s in spans if s.name == "userio.hook.run" and s.context.trace_id == token_trace]
    assert signed_in.status_code == 200, signed_in.text
    assert [(s.attributes["userio.hook.event"], s.attributes["userio.project_id"]) for s in runs] == [
        ("oidc.jwt.pre_create", world.project.id)
    ]
    access_token = signed_in.json()["access_token"]
    attributes = " ".join(str(v) for s in spans for v in (s.attributes or {}).values())
    for forbidden in ("ada@example.com", PASSWORD, HASH_2B, access_token, world.project.token()):
        assert forbidden not in attributes
