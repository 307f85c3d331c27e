"""A TCP proxy in front of the test PostgreSQL, for outage tests: `cut()` closes its port and every
connection through it (the database becomes unreachable for the processes that use the proxy, while the
shared server keeps running for everyone else), `restore()` opens the same port again."""

from __future__ import annotations

import contextlib
import errno
import socket
import threading
import time

from tests.ports import free_port


class TcpProxy:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = free_port()
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def restore(self, patience: float = 30.0) -> TcpProxy:
        """Listen on the port again (below the ephemeral range, so no connection takes it while it is closed,
        though another run on the machine might): wait, up to `patience`, for it to be free."""
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        until = time.monotonic() + patience
        while True:
            try:
                listener.bind(("127.0.0.1", self.port))
                break
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE or time.monotonic() > until:
                    listener.close()
                    raise
                time.sleep(0.1)
        listener.listen(128)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def cut(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            doomed, self._open = self._open, set()
        if listener is not None:
            listener.close()
        for sock in doomed:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._open |= {client, server}
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)
