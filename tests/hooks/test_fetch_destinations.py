"""Issue 29: one notion of where a hook's fetch goes, for the allowlist, the address check and the connection.

The host is taken as httpx sends it (IDNA / UTS 46, so every Unicode full stop is a dot; numeric IPv4 forms are
addresses); the property test drives `FetchClient.perform` with a network that records what would be dialled.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import httpcore
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litestar_userio.hooks.fetch import FetchClient, FetchLimits, FetchRefused, FetchSession, Origin, parse_allowlist
from tests.hooks.test_fetch import catching, client, runtime, servers  # noqa: F401 (fixtures)
from tests.hooks.test_runtime import EVENT_JSON, hook

# Every character UTS 46 maps to a full stop: ideographic, fullwidth and halfwidth ideographic full stops.
FULL_STOPS = ["\u3002", "\uff0e", "\uff61"]


@pytest.mark.parametrize("dot", FULL_STOPS, ids=["U+3002", "U+FF0E", "U+FF61"])
@pytest.mark.parametrize("address", ["127.0.0.1", "169.254.169.254", "10.0.0.5"])
def test_an_entry_spelling_an_address_with_unicode_full_stops_is_refused(dot: str, address: str) -> None:
    with pytest.raises(ValueError, match=f"the host is the address {address}; an entry for it must spell"):
        parse_allowlist([f"http://{address.replace('.', dot)}:8080"])


@pytest.mark.parametrize("spelling", ["2130706433", "0x7f.1", "127.1", "0177.1", "127.0.0.1."])
def test_an_entry_naming_an_address_in_a_numeric_form_is_refused(spelling: str) -> None:
    with pytest.raises(ValueError, match=r"the host is the address 127\.0\.0\.1"):
        parse_allowlist([f"http://{spelling}:8080"])


def test_entries_are_saved_as_the_client_sends_them() -> None:
    assert parse_allowlist(
        ["https://B\u00fccher.de", "https://api.example.com.", "https://API\u3002example\uff0ecom"]
    ) == ["https://xn--bcher-kva.de", "https://api.example.com"]


@pytest.mark.parametrize("dot", FULL_STOPS, ids=["U+3002", "U+FF0E", "U+FF61"])
async def test_a_stored_entry_with_unicode_full_stops_reaches_nothing(runtime, client, servers, dot) -> None:  # noqa: F811
    """An entry saved before the rule (its row still holds it) counts for nothing, by name or by address."""
    port = servers.allowed.server_address[1]
    entry = f"http://127{dot}0{dot}0{dot}1:{port}"
    count = len(servers.seen)
    session = FetchSession(client, [entry], FetchLimits())
    by_entry = await runtime.run(hook(catching(f'fetch("{entry}/echo")')), EVENT_JSON, fetcher=session)
    by_address = await runtime.run(
        hook(catching(f'fetch("http://127.0.0.1:{port}/echo")')),
        EVENT_JSON,
        fetcher=FetchSession(client, [entry], FetchLimits()),
    )
    assert by_entry.response["error"].startswith("TypeError: fetch refused: http://127.0.0.1:")
    assert by_address.response["error"].endswith("is not on the project's fetch allowlist")
    assert len(servers.seen) == count, "nothing reached the loopback server"


async def test_a_listed_address_is_reached_in_any_spelling(runtime, client, servers) -> None:  # noqa: F811
    port = servers.allowed.server_address[1]
    session = FetchSession(client, [f"http://127.0.0.1:{port}"], FetchLimits())
    result = await runtime.run(
        hook(catching(f'fetch("http://127\u30020\u30020\u30021:{port}/echo")')), EVENT_JSON, fetcher=session
    )
    assert result.response["status"] == 200


# -- the property: nothing outside the allowlist, no private address outside an IP-literal entry, is dialled ------


class Dialled(Exception):
    """Raised by the recording network instead of connecting."""


class RecordingNetwork(httpcore.AsyncNetworkBackend):
    """Records each (address, port) the pinned backend would connect to, and connects nowhere."""

    def __init__(self) -> None:
        self.dialled: list[tuple[str, int]] = []

    async def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        self.dialled.append((host, port))
        raise httpcore.ConnectError("recorded")

    async def sleep(self, seconds: float) -> None:
        pass


ADDRESSES = ["127.0.0.1", "10.1.2.3", "169.254.169.254", "100.64.0.1", "93.184.216.34", "::1", "::ffff:10.0.0.1"]
"""What the fake resolver answers for names: private, link-local, shared, public, IPv6 forms."""
SEPARATORS = [".", *FULL_STOPS]
labels = st.one_of(
    st.sampled_from(["127", "0", "1", "10", "169", "254", "0x7f", "0177", "2130706433", "localhost", "crm"]),
    st.text(alphabet="0123456789abcx-", min_size=1, max_size=6),
)
names = st.builds(
    lambda parts, seps, trailing: "".join(p + s for p, s in zip(parts, seps, strict=False)) + parts[-1] + trailing,
    st.lists(labels, min_size=1, max_size=4),
    st.lists(st.sampled_from(SEPARATORS), min_size=3, max_size=3),
    st.sampled_from(["", ".", "\u3002"]),
)
hosts = st.one_of(names, st.sampled_from(["[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "127.0.0.1", "[2606::1]"]))


def _resolve_for(host: str) -> list[str]:
    return [ADDRESSES[sum(host.encode()) % len(ADDRESSES)]]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entry_hosts=st.lists(hosts, max_size=3), data=st.data())
async def test_nothing_outside_the_allowlist_and_no_unlisted_private_address_is_dialled(
    entry_hosts: list[str], data: st.DataObject
) -> None:
    # Half the time the URL names an entry's host (so that dials happen), in the entry's spelling or another.
    url_host = data.draw(st.one_of(hosts, st.sampled_from(entry_hosts)) if entry_hosts else hosts)
    entries = []
    for host in entry_hosts:
        try:
            entries += parse_allowlist([f"http://{host}:8080"])
        except ValueError:
            pass
    allowlist = frozenset(Origin.parse(e, entry=True) for e in entries)
    literals = {ipaddress.ip_address(o.host) for o in allowlist if _is_literal(o.host)}
    network = RecordingNetwork()

    async def resolver(host: str, port: int) -> list[str]:
        return _resolve_for(host)

    recording = FetchClient(timeout=1.0, resolver=resolver, network=network)
    url = f"http://{url_host}:8080/x"
    try:
        await recording.perform({"url": url}, allowlist, FetchLimits())
    except (FetchRefused, httpcore.ConnectError):
        pass
    finally:
        await recording.close()
    for address, _port in network.dialled:
        dialled = ipaddress.ip_address(address)
        assert Origin.parse(url) in allowlist, f"{url} is not listed, yet {address} was dialled"
        public = dialled.is_global and not dialled.is_multicast
        if isinstance(dialled, ipaddress.IPv6Address) and dialled.ipv4_mapped is not None:
            public = dialled.ipv4_mapped.is_global
        assert public or dialled in literals, f"{url} dialled the private {address} (entries: {entries})"


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
