"""A Unix-domain socket whose every connection is relayed, byte for byte, to a TCP address: the bot host's
own gateway socket when the gateway runs elsewhere (another container, or the load balancer before several
gateways: CARAVANSERAI_BOT_HOST_GATEWAY_ADDR). The sandboxes still see nothing but this socket; what
crosses it is the bots' gRPC streams, which the gateway checks as it checks any bot's.

Layer: bot host plumbing (asyncio on a thread of its own). It understands nothing of what it relays; it
must not import Django.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from pathlib import Path

CHUNK = 64 * 1024


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            writer.close()


class SocketForwarder:
    def __init__(self, path: Path, host: str, port: int) -> None:
        self.path = path
        self.host = host
        self.port = port
        self.connections = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @staticmethod
    def parse(address: str) -> tuple[str, int]:
        host, sep, port = address.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"CARAVANSERAI_BOT_HOST_GATEWAY_ADDR must be host:port, not {address!r}")
        return host, int(port)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            writer.close()  # the gateway is away: the bot's SDK retries with its backoff
            return
        await asyncio.gather(_pump(reader, upstream_writer), _pump(upstream_reader, writer))

    async def _serve(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            self.path.unlink()
        self._server = await asyncio.start_unix_server(self._handle, path=str(self.path))
        os.chmod(self.path, 0o666)  # the sandboxes' uids connect

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        loop.close()

    def start(self) -> SocketForwarder:
        self._thread = threading.Thread(target=self._run, name="gateway-forwarder", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        loop, server = self._loop, self._server
        if loop is None or server is None:
            return
        loop.call_soon_threadsafe(server.close)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
