"""The gateway's batched verifier over a token source (no Django: a source of our own), and the plug-in
lookup: the tokens waiting at once are one batch on the lookup thread, a token found is remembered until its
bot's revocation, a failing source fails the checks waiting and remembers nothing, and a verifier named in
the configuration is resolved at start, with errors that name the variable."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable

import pytest

from engine_service.gateway import verifiers
from engine_service.gateway.auth import BotIdentity, InMemoryVerifier
from engine_service.gateway.config import DEFAULT_VERIFIER, ConfigError, GatewayConfig
from engine_service.gateway.server import build_verifier
from engine_service.gateway.verifiers import BatchVerifier, load_verifier

TOKENS = {f"token-{i}": str(i) for i in range(12)}


class Source:
    """Bot records in memory; `hold` makes the first batch wait until `hold` checks are in or queued."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.warmed = 0
        self.down = False
        self.hold = 0
        self.verifier: BatchVerifier | None = None
        self.listeners: list[Callable[[str], None]] = []

    def warm_up(self) -> None:
        self.warmed += 1

    def lookup_many(self, tokens: list[str]) -> dict[str, BotIdentity]:
        if self.down:
            raise RuntimeError("the records are down")
        if not self.sizes and self.hold and self.verifier is not None:
            while len(tokens) + self.verifier._queue.qsize() < self.hold:
                threading.Event().wait(0.005)
        self.sizes.append(len(tokens))
        return {t: BotIdentity(TOKENS[t], f"bot {TOKENS[t]}", "owner", ("g",)) for t in tokens if t in TOKENS}

    def on_revoke(self, listener: Callable[[str], None]) -> None:
        self.listeners.append(listener)


def check_all(verifier: BatchVerifier, asked: list[str]) -> list[str | None]:
    async def run() -> list[str | None]:
        found = await asyncio.gather(*(verifier.verify(t) for t in asked))
        return [i.bot_id if i else None for i in found]

    return asyncio.run(run())


def test_checks_waiting_at_once_are_one_batch_and_found_tokens_are_remembered() -> None:
    source = Source()
    verifier = source.verifier = BatchVerifier(source)
    asked = [*TOKENS, "not-a-token"]
    source.hold = len(asked)
    assert check_all(verifier, asked) == [*TOKENS.values(), None]
    assert len(source.sizes) == 2 and sum(source.sizes) == len(asked)  # the first, then the rest queued
    assert check_all(verifier, asked) == [*TOKENS.values(), None]
    assert len(source.sizes) == 3 and source.sizes[-1] == 1  # only the unknown token asked again
    verifier.forget("0")  # a revocation polled from the registry
    assert check_all(verifier, ["token-0"]) == ["0"] and source.sizes[-1] == 1 and len(source.sizes) == 4
    assert source.warmed == 1  # warmed once, on the first batch


def test_a_failing_source_fails_the_waiting_checks_and_is_not_remembered() -> None:
    source = Source()
    verifier = BatchVerifier(source)
    source.down = True
    with pytest.raises(RuntimeError, match="records are down"):
        asyncio.run(verifier.verify("token-1"))
    source.down = False
    assert check_all(verifier, ["token-1"]) == ["1"]


def test_a_revocation_in_process_drops_the_token_and_tells_the_listeners() -> None:
    source = Source()
    verifier = BatchVerifier(source, warm=True)
    heard: list[str] = []
    verifier.on_revoke(heard.append)
    assert check_all(verifier, ["token-3"]) == ["3"] and source.sizes == [1]
    for listener in source.listeners:
        listener("3")
    assert heard == ["3"]
    assert check_all(verifier, ["token-3"]) == ["3"] and source.sizes == [1, 1]  # asked again, not remembered


def make_in_memory() -> InMemoryVerifier:
    return InMemoryVerifier()


NOT_A_FACTORY = 3


def test_the_configured_plug_in_is_resolved_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = f"{__name__}:make_in_memory"
    assert isinstance(load_verifier(spec), InMemoryVerifier)
    monkeypatch.setenv("CARAVANSERAI_GATEWAY_VERIFIER", spec)
    config = GatewayConfig.from_env()
    assert config.verifier == spec and isinstance(build_verifier(config), InMemoryVerifier)
    assert (
        GatewayConfig.from_env({}).verifier == DEFAULT_VERIFIER == "ladder.bots.gateway_auth:gateway_verifier"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon_here", "must be module.path:factory"),
        ("no_such_module_anywhere:make", "cannot import no_such_module_anywhere"),
        (f"{__name__}:missing", "has no callable missing"),
        (f"{__name__}:NOT_A_FACTORY", "has no callable NOT_A_FACTORY"),
        (f"{__name__}:Source", "made a Source, lacking verify"),
    ],
)
def test_a_bad_plug_in_names_the_variable(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        load_verifier(spec)
    assert "CARAVANSERAI_GATEWAY_VERIFIER" in str(err.value)


def test_a_malformed_verifier_variable_fails_the_configuration() -> None:
    with pytest.raises(
        ConfigError, match=re.escape("CARAVANSERAI_GATEWAY_VERIFIER must be module.path:factory")
    ):
        GatewayConfig.from_env({"CARAVANSERAI_GATEWAY_VERIFIER": "ladder.bots.gateway_auth"})
    assert verifiers.SPEC.match(DEFAULT_VERIFIER)
