"""The bot host against the ladder: a version uploaded through the service is claimed by the host, run in
its sandbox with the bot's hosted credential (issued by the token service beside the owner's token, kept in a
0600 file outside every sandbox, reused after a restart), authenticated by the gateway's Django verifier over
the Unix-domain socket, reporting the uploaded version in its Hello, and its state and log reach the
owner's status; a stopping host lets go of its bots."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection

from bot_host.examples import example_archive, pack
from bot_host.host import BotHost, HostSettings, Report
from bot_host.ladder_source import LadderSource, TokenStore
from bot_host.sandbox import Runtime, uploaded_version
from bot_host.supervisor import CannotStart
from engine_service.gateway.config import GatewayConfig
from engine_service.gateway.registry import SqliteRegistry, sessions_for_bot
from engine_service.gateway.server import GatewayThread
from ladder.bots import selectors, services
from ladder.bots.gateway_auth import gateway_verifier
from ladder.bots.models import Bot
from ladder.bots.selectors import bot_identity_for_token
from ladder.bots.services import bot_create
from ladder.hosting.models import HostedBot
from ladder.hosting.services import hosted_version_upload
from tests.bot_host.conftest import LIMITS, UID_BASE, HostRig
from tests.engine_service.gateway.harness import EXAMPLES, SESSION_TTL

MANIFEST_2 = b'{"runtime": "python", "entry": "bot.py", "version": "2"}'
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]  # the verifier reads from its thread


@pytest.fixture
def bot() -> Bot:
    owner = get_user_model().objects.create_user("host-owner", password="pw-host-owner")
    bot, _token = bot_create(owner=owner, name="Hosted", games=["expedition-v1"])
    hosted_version_upload(bot_id=bot.pk, user=owner, data=example_archive("python"))
    return bot


@pytest.fixture
def ladder_rig(tmp_path: Path, runtimes: dict[str, Runtime]) -> Iterator[HostRig]:
    socket_path = tmp_path / "gateway" / "bot.sock"
    registry = SqliteRegistry(tmp_path / "registry.sqlite3", ttl=SESSION_TTL)
    config = GatewayConfig(
        bot_address="127.0.0.1:0",
        relay_address="127.0.0.1:0",
        registry_path=tmp_path / "registry.sqlite3",
        bot_uds=str(socket_path),
    )
    gateway = GatewayThread(config, gateway_verifier(warm=True), registry).start()
    settings = HostSettings(
        host_id="h1", state_dir=tmp_path / "host", socket_path=socket_path, limits=LIMITS, uid_base=UID_BASE
    )
    source = LadderSource(state_dir=settings.state_dir)
    host = BotHost(settings, source, runtimes)
    yield HostRig(host, source, gateway, registry, settings.state_dir, b"")  # type: ignore[arg-type]
    host.shutdown()
    source.release(host_id="h1")
    gateway.stop()


def test_the_host_runs_an_uploaded_version_with_its_own_token(bot: Bot, ladder_rig: HostRig) -> None:
    rig = ladder_rig
    assert rig.until(lambda: bool(sessions_for_bot(rig.registry, str(bot.pk)))), rig.log(bot.pk)
    tokens = rig.state_dir / "tokens.json"
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    version_id = HostedBot.objects.get(bot=bot).version_id
    token = rig.source.token(bot_id=bot.pk, version_id=version_id)
    assert bot_identity_for_token(token=token).bot_id == bot.pk  # type: ignore[union-attr]
    assert token not in "".join(p.read_text() for p in (rig.state_dir / "versions").rglob("*") if p.is_file())
    assert rig.until(lambda: HostedBot.objects.get(bot=bot).state == "running")
    hosting = HostedBot.objects.get(bot=bot)
    assert hosting.host_id == "h1" and hosting.starts == 1 and "connected as Hosted" in hosting.log
    again = LadderSource(state_dir=rig.state_dir)  # a restarted host keeps the token: no revocation
    assert again.token(bot_id=bot.pk, version_id=version_id) == token


def test_a_stopping_host_lets_go_of_its_bots(bot: Bot, ladder_rig: HostRig) -> None:
    rig = ladder_rig
    assert rig.until(lambda: HostedBot.objects.get(bot=bot).host_id == "h1")
    rig.host.shutdown()
    rig.source.release(host_id="h1")  # type: ignore[attr-defined]
    hosting = HostedBot.objects.get(bot=bot)
    assert (hosting.host_id, hosting.state) == ("", "stopped")


def test_hosting_leaves_the_owners_token_working_and_reports_the_uploaded_version(
    bot: Bot, ladder_rig: HostRig
) -> None:
    rig = ladder_rig
    owner_token = services.bot_token_rotate(bot_id=bot.pk, user=bot.owner)[1]  # the owner's, run elsewhere
    archive = pack({"caravanserai.json": MANIFEST_2, "bot.py": (EXAMPLES / "random_bot.py").read_bytes()})
    hosted_version_upload(bot_id=bot.pk, user=bot.owner, data=archive)
    assert rig.until(lambda: bool(sessions_for_bot(rig.registry, str(bot.pk)))), rig.log(bot.pk)
    [session] = sessions_for_bot(rig.registry, str(bot.pk))
    assert session.bot_version == "2"  # the uploaded version, not the example's own "1"
    assert bot_identity_for_token(token=owner_token).bot_id == bot.pk  # type: ignore[union-attr]
    hosted = rig.source.token(bot_id=bot.pk, version_id=HostedBot.objects.get(bot=bot).version_id)
    assert hosted != owner_token and selectors.bot_hosted_token_valid(bot_id=bot.pk, token=hosted)
    services.bot_token_revoke(bot_id=bot.pk, user=bot.owner)  # the owner's token only: hosting goes on
    assert bot_identity_for_token(token=hosted).bot_id == bot.pk  # type: ignore[union-attr]
    assert rig.until(lambda: HostedBot.objects.get(bot=bot).starts >= 2 and rig.connected(bot.pk))
    assert rig.source.token(bot_id=bot.pk, version_id=HostedBot.objects.get(bot=bot).version_id) == hosted


def test_a_connection_the_database_dropped_is_replaced_at_the_next_step(bot: Bot, tmp_path: Path) -> None:
    source = LadderSource(state_dir=tmp_path / "host")
    [assignment] = source.assignments(host_id="h1", limit=4)
    connection.ensure_connection()
    connection.connection.close()  # the database went away under the host (a restart, a failover)
    report = Report(bot.pk, assignment.version_id, "running", "", 1, 0, "")
    with pytest.raises(DatabaseError):
        source.report(host_id="h1", report=report)  # this bot's part of the step fails, and is guarded
    assert [a.bot_id for a in source.assignments(host_id="h1", limit=4)] == [bot.pk]  # the next step works
    source.report(host_id="h1", report=report)
    assert HostedBot.objects.get(bot=bot).state == "running"
    source.release(host_id="h1")


def test_the_host_holds_a_hosted_credential_never_the_owners_token(bot: Bot, tmp_path: Path) -> None:
    owner_token = services.bot_token_rotate(bot_id=bot.pk, user=bot.owner)[1]
    store = TokenStore(tmp_path / "tokens.json")
    store.path.write_text(json.dumps({str(bot.pk): {"token": owner_token, "version_id": 1}}))  # an old host's
    hosted = store.token(bot.pk, 1)
    assert hosted != owner_token and selectors.bot_hosted_token_valid(bot_id=bot.pk, token=hosted)
    assert bot_identity_for_token(token=owner_token).bot_id == bot.pk  # type: ignore[union-attr]
    assert json.loads(store.path.read_text())[str(bot.pk)]["token"] == hosted
    assert TokenStore(store.path).token(bot.pk, 2) == hosted  # every version of the bot, after a restart too


def test_a_retired_bot_cannot_start(bot: Bot, tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    hosted = store.token(bot.pk, 1)
    services.bot_retire(bot_id=bot.pk, user=bot.owner)
    with pytest.raises(CannotStart, match="retired"):
        store.token(bot.pk, 1)
    assert bot_identity_for_token(token=hosted) is None


def test_the_sandbox_gets_the_uploaded_version_from_its_manifest(tmp_path: Path) -> None:
    assert uploaded_version(tmp_path) == ""  # a directory made by hand: the SDK's own version is reported
    (tmp_path / "caravanserai.json").write_bytes(MANIFEST_2)
    assert uploaded_version(tmp_path) == "2"
    for bad in (
        b"[1]",
        b"{",
        b'{"version": 7}',
        b'{"version": "  "}',
        json.dumps({"version": "x" * 65}).encode(),
    ):
        (tmp_path / "caravanserai.json").write_bytes(bad)
        assert uploaded_version(tmp_path) == ""
