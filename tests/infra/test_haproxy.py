"""infra/haproxy.cfg: HAProxy accepts it as compose and the rehearsal fill it in, and its health check is a
real grpc.health.v1.Health/Check: the raw HTTP/2 bytes it sends decode to that request, a gRPC server
answers them, and the expected bytes match SERVING but not NOT_SERVING (a draining gateway).
infra/haproxy-web.cfg: HAProxy accepts it, without warnings, with one web server or four and its optional
timeouts set (tests/infra/test_web_slow_clients.py serves through it)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from tests.infra.deployment import HAPROXY_WEB_CFG
from tests.scale.cluster import HAPROXY_CFG, haproxy

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
# the HPACK static table entries the check uses (RFC 7541, appendix A)
STATIC = {1: (":authority", ""), 3: (":method", "POST"), 4: (":path", "/"), 6: (":scheme", "http"),
          31: ("content-type", "")}  # fmt: skip


def _config_hex(keyword: str) -> bytes:
    match = re.search(rf"^\s*tcp-check {keyword} ([0-9a-f]+)\s*$", HAPROXY_CFG.read_text(), re.M)
    assert match, f"no `tcp-check {keyword}` line in {HAPROXY_CFG}"
    return bytes.fromhex(match.group(1))


def _frames(data: bytes) -> list[tuple[int, int, int, bytes]]:
    frames = []
    while data:
        length, kind, flags = int.from_bytes(data[:3], "big"), data[3], data[4]
        stream = int.from_bytes(data[5:9], "big") & 0x7FFFFFFF
        frames.append((kind, flags, stream, data[9 : 9 + length]))
        data = data[9 + length :]
    return frames


def _hpack(block: bytes) -> list[tuple[str, str]]:
    """Decode the forms the check uses: indexed fields and literals without indexing (no Huffman)."""
    headers, i = [], 0

    def string(i: int) -> tuple[str, int]:
        assert not block[i] & 0x80, "Huffman-coded string"
        n = block[i]
        return block[i + 1 : i + 1 + n].decode(), i + 1 + n

    while i < len(block):
        byte = block[i]
        if byte & 0x80:  # indexed header field
            headers.append(STATIC[byte & 0x7F])
            i += 1
            continue
        assert byte & 0xF0 == 0, f"unexpected HPACK form {byte:#x}"
        index, i = byte & 0x0F, i + 1
        if index == 0x0F:
            index, i = 15 + block[i], i + 1
        if index:
            name = STATIC[index][0]
        else:
            name, i = string(i)
        value, i = string(i)
        headers.append((name, value))
    return headers


def test_the_check_sends_a_grpc_health_check_request():
    request = _config_hex("send-binary")
    assert request.startswith(PREFACE)
    (settings, headers, data) = _frames(request[len(PREFACE) :])
    assert settings == (0x4, 0, 0, b"")  # an empty SETTINGS frame
    kind, flags, stream, block = headers
    assert (kind, flags & 0x4, flags & 0x1, stream) == (0x1, 0x4, 0, 1)  # HEADERS, END_HEADERS, stream 1
    assert _hpack(block) == [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/grpc.health.v1.Health/Check"),
        (":authority", "gateway"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ]
    message = health_pb2.HealthCheckRequest().SerializeToString()
    assert data == (0x0, 0x1, 1, b"\x00" + len(message).to_bytes(4, "big") + message)  # END_STREAM
    serving = health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
    payload = b"\x00" + len(serving.SerializeToString()).to_bytes(4, "big") + serving.SerializeToString()
    expected = len(payload).to_bytes(3, "big") + b"\x00\x00" + (1).to_bytes(4, "big") + payload
    assert _config_hex("expect binary") == expected  # the DATA frame of HealthCheckResponse{SERVING}


@pytest.fixture
def health_server() -> Iterator[tuple[int, health.HealthServicer]]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield port, servicer
    server.stop(0)


def _ask(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(_config_hex("send-binary"))
        sock.settimeout(0.5)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except TimeoutError:
            pass
    return answer


def test_a_grpc_server_answers_the_check_and_only_serving_passes(health_server):
    port, servicer = health_server
    expected = _config_hex("expect binary")
    assert expected in _ask(port)
    servicer.enter_graceful_shutdown()  # what a draining gateway does
    answer = _ask(port)
    assert answer and expected not in answer


@pytest.mark.skipif(haproxy() is None, reason="HAProxy is not installed (make install)")
@pytest.mark.parametrize("gateways", [1, 3, 8])
def test_haproxy_accepts_the_configuration(gateways: int):
    env = {**os.environ, "CARAVANSERAI_LB_BIND": "127.0.0.1:50051"}
    env.update({f"CARAVANSERAI_GATEWAY_{i}": f"127.0.0.1:{60000 + i}" for i in range(1, gateways + 1)})
    result = subprocess.run(
        [str(haproxy()), "-c", "-f", str(HAPROXY_CFG)], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(haproxy() is None, reason="HAProxy is not installed (make install)")
@pytest.mark.parametrize(
    "settings",
    [
        {"CARAVANSERAI_WEB_1": "127.0.0.1:8001"},
        {f"CARAVANSERAI_WEB_{i}": f"127.0.0.1:{8000 + i}" for i in range(1, 5)}
        | {"CARAVANSERAI_WEB_REQUEST_TIMEOUT": "5s", "CARAVANSERAI_WEB_CLIENT_TIMEOUT": "1m"},
    ],
)
def test_haproxy_accepts_the_web_proxy_configuration(settings: dict[str, str]):
    env = {**os.environ, "CARAVANSERAI_WEB_BIND": "127.0.0.1:8000", **settings}
    result = subprocess.run(
        [str(haproxy()), "-c", "-f", str(HAPROXY_WEB_CFG)], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0 and "Warnings" not in result.stdout + result.stderr, (
        result.stdout + result.stderr
    )
