"""Which kombu transport Celery is given (`workers.config.broker_transport`): the guarded Redis transport
(`workers.broker.RedisTransport`) for a redis:// broker URL, and the one the URL's scheme names for any other,
since a transport named in the settings wins over the URL."""

from __future__ import annotations

import pytest
from kombu import Connection

from workers.broker import REDIS_TRANSPORT, RedisChannel, RedisTransport
from workers.config import broker_transport, celery_settings


def test_a_redis_url_gets_the_guarded_transport_and_keeps_its_address() -> None:
    conf = celery_settings({"REDIS_URL": "redis://10.1.2.3:6380/4"})
    assert conf["broker_transport"] == REDIS_TRANSPORT
    assert conf["broker_connection_max_retries"] is None  # a worker waits for its broker however long
    connection = Connection(conf["broker_url"], transport=conf["broker_transport"])
    assert isinstance(connection.transport, RedisTransport)
    assert connection.transport.Channel is RedisChannel
    assert (connection.hostname, connection.port, connection.virtual_host) == ("10.1.2.3", 6380, "4")


@pytest.mark.parametrize(
    "url",
    [
        "rediss://10.1.2.3:6380/0",
        "sentinel://10.1.2.3:26379",
        "amqp://guest@10.1.2.3//",
        "cvsqlite+sqlite:///b",
    ],
)
def test_any_other_url_keeps_the_transport_its_scheme_names(url: str) -> None:
    assert broker_transport(url) is None


def test_the_embedded_broker_keeps_its_own_transport() -> None:
    assert celery_settings({})["broker_transport"] is None
