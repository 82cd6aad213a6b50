from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from litestar import Litestar, Router
from litestar.di import Provide
from litestar.testing import AsyncTestClient

from litestar_userio.config import LocalStorageConfig
from litestar_userio.storage import LocalStorage, build_storage
from litestar_userio.web.downloads import DownloadController
from tests.fixtures.s3 import moto_endpoint, s3_client, s3_config
from userio_core.clock import FrozenClock

__all__ = ["moto_endpoint", "s3_client", "s3_config"]

BASE_URL = "http://testserver.local"


@pytest.fixture
def clock() -> FrozenClock:
    # Half a second past the minute, so rounding of the expiry is exercised.
    return FrozenClock(datetime(2026, 11, 3, 9, 30, 0, 500_000, tzinfo=UTC))


@pytest.fixture
def local_config(tmp_path) -> LocalStorageConfig:
    return LocalStorageConfig(directory=tmp_path / "exports")


@pytest.fixture
def local_storage(local_config: LocalStorageConfig, clock: FrozenClock) -> LocalStorage:
    storage = build_storage(local_config, clock)
    assert isinstance(storage, LocalStorage)
    return storage


@pytest.fixture
async def download_client(local_storage: LocalStorage) -> AsyncIterator[AsyncTestClient[Litestar]]:
    app = Litestar(
        route_handlers=[Router(local_storage.route_path, route_handlers=[DownloadController])],
        dependencies={"userio_storage": Provide(lambda: local_storage, sync_to_thread=False)},
    )
    async with AsyncTestClient(app=app, base_url=BASE_URL) as client:
        yield client
