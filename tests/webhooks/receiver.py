"""A webhook receiver on loopback: a real HTTP/1.1 server (asyncio streams) that records what it is sent.

`mode` decides its answer: a status, `hang` (accepts, reads, answers nothing until `release`, then 503), `slow`
(drips its answer a byte a second), `huge` (10 MB of answer), `redirect` (302 to another receiver).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import msgspec


@dataclass
class Received:
    """One request as the receiver read it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return msgspec.json.decode(self.body)


@dataclass
class Receiver:
    host: str = "127.0.0.1"
    port: int = 0
    mode: str | int = 200
    location: str = ""
    received: list[Received] = field(default_factory=list)
    _server: asyncio.Server | None = None
    _writers: set[asyncio.StreamWriter] = field(default_factory=set)
    _released: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/hook"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    def release(self) -> None:
        """`hang` answers what it holds, and every later request, with 503 (the test needs the wait no longer)."""
        self._released.set()

    def bodies(self) -> list[Any]:
        return [r.json() for r in self.received]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                method, path, _ = line.decode().split(" ", 2)
                headers: dict[str, str] = {}
                while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = header.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                self.received.append(Received(method, path, headers, body))
                if not await self._answer(writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(self, writer: asyncio.StreamWriter) -> bool:
        """Answer by `mode`; False when the connection is not to be used again."""
        mode = self.mode
        if mode == "hang":
            await self._released.wait()
            mode = 503
        if mode == "slow":
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n")
            for _ in range(1000):
                writer.write(b"x")
                await writer.drain()
                await asyncio.sleep(1)
            return False
        if mode == "huge":
            size = 10 * 1024 * 1024
            writer.write(f"HTTP/1.1 200 OK\r\ncontent-length: {size}\r\n\r\n".encode())
            chunk = b"x" * 65536
            for _ in range(size // len(chunk)):
                writer.write(chunk)
                await writer.drain()
            return False
        if mode == "redirect":
            writer.write(f"HTTP/1.1 302 Found\r\nlocation: {self.location}\r\ncontent-length: 0\r\n\r\n".encode())
            await writer.drain()
            return True
        status = int(mode)
        writer.write(f"HTTP/1.1 {status} X\r\ncontent-length: 2\r\n\r\nok".encode())
        await writer.drain()
        return True


@contextlib.asynccontextmanager
async def receiver(mode: str | int = 200) -> AsyncIterator[Receiver]:
    server = Receiver(mode=mode)
    await server.start()
    try:
        yield server
    finally:
        await server.close()
