"""A private redis-server process for the worker tests: started on a free port with its own directory, killed
with SIGKILL and started again on the same port, with its data (append-only file kept) or without it.
It never touches the shared Redis; `stop()` kills what it started."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from pathlib import Path

import redis

from tests.ports import free_port
from tests.workers.stack import wait_for


class RedisServer:
    def __init__(self, directory: Path, *, persistent: bool) -> None:
        self.directory = directory
        self.persistent = persistent
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.directory.mkdir(parents=True, exist_ok=True)
        self.popen: subprocess.Popen[bytes] | None = None

    def _argv(self) -> list[str]:
        redis_server = shutil.which("redis-server")
        assert redis_server, "redis-server is not installed"
        argv = [redis_server, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory)]
        argv += ["--save", ""]
        # with its data: every write is in the append-only file before Redis answers, so a SIGKILL loses none
        argv += (
            ["--appendonly", "yes", "--appendfsync", "always"] if self.persistent else ["--appendonly", "no"]
        )
        return argv

    def start(self) -> RedisServer:
        log = open(self.directory / "redis.log", "ab")  # noqa: SIM115 - the child holds it; closed here after
        try:
            self.popen = subprocess.Popen(self._argv(), stdout=log, stderr=subprocess.STDOUT)
        finally:
            log.close()
        wait_for(self.ping, 30, f"redis-server on port {self.port}")
        return self

    def ping(self) -> bool:
        assert self.popen is not None
        assert self.popen.poll() is None, (self.directory / "redis.log").read_text(errors="replace")
        with contextlib.suppress(redis.RedisError), self.client() as client:
            return bool(client.ping())
        return False

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, socket_timeout=5)

    def kill(self) -> None:
        """SIGKILL: no shutdown save, connections reset."""
        if self.popen is not None and self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(30)

    def stop(self) -> None:
        self.kill()
