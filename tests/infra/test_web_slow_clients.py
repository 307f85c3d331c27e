"""The web tier under slow and idle clients, served as infra/Procfile starts it (the same gunicorn settings,
ladder/gunicorn_conf.py, and the same proxy file, infra/haproxy-web.cfg, as compose and Kubernetes): the
Procfile's migrate, `web` and `web-proxy` lines, mapped to free local ports by tests/infra/launch.py.

Sockets that send half a request, send nothing, or send the headers and part of a body are held open while
`/healthz` is asked again and again (bounded polling): it must answer, through the proxy with eight times
as many slow sockets as gunicorn has threads, and on gunicorn itself with the issue's three. The proxy under
test is given long client timeouts, and every slow socket is checked still open once `/healthz` answered,
so the answer cannot come from the proxy cutting them; a second proxy with the 1 s timeouts shows that it
does cut them (HTTP 408), as its default 10 s would. Nothing here measures how fast anything answers.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.infra.deployment import command_listen_ports, host_port
from tests.infra.launch import DeploymentRun, Launch, up_check
from tests.scale.cluster import haproxy

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("slow_clients_deployment"),  # one deployment per run
    pytest.mark.skipif(haproxy() is None, reason="HAProxy is not installed (make install)"),
]
UP_SECONDS = 120
ANSWER_SECONDS = 90  # the bound of the polling: a starved server never answers, however long we wait
HOLD_TIMEOUTS = {"CARAVANSERAI_WEB_REQUEST_TIMEOUT": "10m", "CARAVANSERAI_WEB_CLIENT_TIMEOUT": "10m"}
CUT_TIMEOUTS = {"CARAVANSERAI_WEB_REQUEST_TIMEOUT": "1s", "CARAVANSERAI_WEB_CLIENT_TIMEOUT": "1s"}
SLOW_REQUESTS = (
    b"",  # connected, silent
    b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\n",  # headers never finished
    b"POST /api/v1/bots/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b'Content-Length: 4096\r\n\r\n{"name": ',  # a body that never arrives
)


@dataclass
class Served:
    run: DeploymentRun
    web: Launch
    proxy: Launch
    cutting_proxy: Launch

    def port(self, launch: Launch) -> int:
        """Where it listens here: gunicorn's --bind, the proxy's CARAVANSERAI_WEB_BIND."""
        if launch.process.role == "web":
            return command_listen_ports(launch.argv)[0]
        address = host_port(launch.env["CARAVANSERAI_WEB_BIND"])
        assert address
        return address[1]


def _start(run: DeploymentRun, launch: Launch) -> Launch:
    run.start(launch)
    probe = up_check(launch)[1]
    until = time.monotonic() + UP_SECONDS
    while not probe():
        assert launch.proc is not None and launch.proc.popen.poll() is None, (
            launch.proc and launch.proc.output()
        )
        assert time.monotonic() < until, f"{launch.name} not up:\n{launch.proc.output()[-3000:]}"
        time.sleep(0.2)
    return launch


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = os.environ.get("DATABASE_URL", "").strip()
    run = DeploymentRun(
        tmp_path_factory.mktemp("web"), database_url=server if server.startswith("postgres") else ""
    )
    try:
        launches = {x.process.name: x for x in run.procfile_launches(os.environ.get("REDIS_URL", "").strip())}
        migrate, web, proxy = launches["migrate"], launches["web"], launches["web-proxy"]
        run.launches = [migrate, web, proxy]
        run.start(migrate)
        assert migrate.proc is not None and migrate.proc.popen.wait(UP_SECONDS) == 0, migrate.proc.output()
        _start(run, web)
        proxy.env.update(HOLD_TIMEOUTS)
        _start(run, proxy)
        second = dataclasses.replace(proxy.process, source="Procfile web-proxy with 1s timeouts")
        cutting = Launch(second, list(proxy.argv), {**proxy.env, **CUT_TIMEOUTS})
        cutting.env["CARAVANSERAI_WEB_BIND"] = f"127.0.0.1:{run.ports.get('cutting', 8000)}"
        run.launches.append(cutting)
        yield Served(run, web, proxy, _start(run, cutting))
    finally:
        run.cleanup()


def open_slow_sockets(port: int, count: int, kinds: tuple[bytes, ...] = SLOW_REQUESTS) -> list[socket.socket]:
    """`count` connections, each sending one of `kinds` in turn and then nothing more."""
    sockets = []
    for i in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        if request := kinds[i % len(kinds)]:
            sock.sendall(request)
        sockets.append(sock)
    return sockets


def still_open(sock: socket.socket) -> bool:
    """The server has neither closed the connection nor answered on it."""
    sock.setblocking(False)  # a peek, not a wait (a socket with a timeout waits for data first)
    try:
        sock.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False


def healthz_answers(port: int) -> int:
    """Ask /healthz until it answers 200 (each try may wait 5 s), at most ANSWER_SECONDS; the tries made."""
    until, tries = time.monotonic() + ANSWER_SECONDS, 0
    while time.monotonic() < until:
        tries += 1
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
                if response.status == 200:
                    return tries
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"/healthz on :{port} did not answer in {tries} tries over {ANSWER_SECONDS}s")


def close_all(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def test_slow_and_idle_clients_through_the_proxy_do_not_starve_the_web_server(served: Served):
    threads = 4 * 2  # ladder/gunicorn_conf.py's default threads, times the Procfile's --workers 2
    assert "--workers 2" in " ".join(served.web.argv) and "CARAVANSERAI_WEB_THREADS" not in served.web.env
    slow = open_slow_sockets(served.port(served.proxy), 8 * threads)
    try:
        time.sleep(0.5)  # let the proxy take them all in (not needed for the assertion)
        tries = healthz_answers(served.port(served.proxy))
        held = sum(still_open(s) for s in slow)
        assert held == len(slow), f"the proxy let {len(slow) - held} slow sockets go before /healthz answered"
        print(f"\n/healthz through the proxy answered on try {tries} with {held} slow sockets held open")
    finally:
        close_all(slow)


def test_the_issues_three_half_requests_do_not_starve_gunicorn_itself(served: Served):
    slow = open_slow_sockets(served.port(served.web), 3, kinds=(SLOW_REQUESTS[1],))  # half requests
    try:
        time.sleep(0.5)
        tries = healthz_answers(served.port(served.web))
        assert all(still_open(s) for s in slow), "gunicorn answered only once it dropped a slow socket"
        print(f"\n/healthz on gunicorn answered on try {tries} with 3 half requests open")
    finally:
        close_all(slow)


def test_the_proxy_cuts_clients_slower_than_its_timeout(served: Served):
    slow = open_slow_sockets(served.port(served.cutting_proxy), 2 * len(SLOW_REQUESTS))
    try:
        until = time.monotonic() + ANSWER_SECONDS
        while any(still_open(s) for s in slow) and time.monotonic() < until:
            time.sleep(0.2)
        answers = []
        for sock in slow:
            sock.settimeout(5)
            answers.append(sock.recv(64).split(b"\r\n")[0])
        assert answers == [b"HTTP/1.1 408 Request Time-out"] * len(slow), answers
    finally:
        close_all(slow)
