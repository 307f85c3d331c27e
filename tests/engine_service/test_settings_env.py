"""The environment readers every layer uses: blank means the default, each type parses as documented, and a
malformed value is one `EnvError` naming the variable; the workers' and the local runner's defaults are the
referee's, and a malformed ladder setting stops Django with the variable named."""

from __future__ import annotations

import re

import pytest

from engine_service.gateway.local import LocalSettings
from engine_service.referee import TimeControl
from engine_service.settings_env import EnvError, env_bool, env_float, env_int, env_list, env_str
from workers.config import WorkerSettings


@pytest.mark.parametrize("value", [None, "", "   "])
def test_unset_or_blank_gives_the_default(value: str | None) -> None:
    env = {} if value is None else {"X_VAR": value}
    assert env_str(env, "X_VAR", "d") == "d"
    assert env_int(env, "X_VAR", 7, minimum=1) == 7
    assert env_float(env, "X_VAR", 2.5, positive=True) == 2.5
    assert env_bool(env, "X_VAR", True) is True
    assert env_list(env, "X_VAR", "a, b,,c") == ["a", "b", "c"]


def test_values_parse_as_their_type() -> None:
    env = {"S": " text ", "I": "12", "F": "0.25", "B": "Off", "L": " x ,y "}
    assert env_str(env, "S", "") == "text"
    assert env_int(env, "I", 0, minimum=12) == 12
    assert env_float(env, "F", 1.0, minimum=0.25, positive=True) == 0.25
    assert env_bool(env, "B", True) is False
    assert [env_bool({"B": w}, "B", False) for w in ("1", "TRUE", "yes", "on")] == [True] * 4
    assert env_list(env, "L", "") == ["x", "y"]


@pytest.mark.parametrize(
    ("read", "message"),
    [
        (lambda: env_int({"N_VAR": "1.5"}, "N_VAR", 0), "N_VAR must be a whole number, not '1.5'"),
        (lambda: env_int({"N_VAR": "0"}, "N_VAR", 1, minimum=1), "N_VAR must be at least 1, not 0"),
        (lambda: env_float({"N_VAR": "soon"}, "N_VAR", 1.0), "N_VAR must be a number, not 'soon'"),
        (lambda: env_float({"N_VAR": "nan"}, "N_VAR", 1.0), "N_VAR must be a finite number"),
        (lambda: env_float({"N_VAR": "0.5"}, "N_VAR", 1.0, minimum=1), "N_VAR must be at least 1, not 0.5"),
        (lambda: env_float({"N_VAR": "0"}, "N_VAR", 1.0, positive=True), "N_VAR must be positive, not 0"),
        (lambda: env_bool({"N_VAR": "maybe"}, "N_VAR", False), "N_VAR must be one of 1/true/yes/on"),
    ],
)
def test_a_malformed_value_names_the_variable(read, message: str) -> None:
    with pytest.raises(EnvError, match=re.escape(message)):
        read()


def test_the_decision_time_and_bank_default_to_the_referees() -> None:
    control = TimeControl()
    workers = WorkerSettings.from_env({})
    assert (workers.decision_seconds, workers.time_bank_seconds) == (
        control.decision_seconds,
        control.time_bank_seconds,
    )
    assert WorkerSettings.from_env({}) == WorkerSettings()
    local = LocalSettings()
    assert (local.decision_seconds, local.bank_seconds, local.max_faults) == (
        control.decision_seconds,
        control.time_bank_seconds,
        control.max_faults,
    )


def test_worker_settings_read_every_variable_and_refuse_bad_ones() -> None:
    settings = WorkerSettings.from_env(
        {"CARAVANSERAI_DECISION_SECONDS": "2", "CARAVANSERAI_SEARCH_PROCESSES": "0"}
    )
    assert settings.decision_seconds == 2.0 and settings.search_processes == 0
    with pytest.raises(EnvError, match=re.escape("CARAVANSERAI_LEASE_SECONDS must be at least 1, not 0.5")):
        WorkerSettings.from_env({"CARAVANSERAI_LEASE_SECONDS": "0.5"})
    with pytest.raises(EnvError, match="CARAVANSERAI_MATCHES_PER_WORKER must be a whole number"):
        WorkerSettings.from_env({"CARAVANSERAI_MATCHES_PER_WORKER": "lots"})


def test_the_worker_metrics_port_is_read_by_the_shared_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    from workers import metrics

    monkeypatch.setenv("CARAVANSERAI_WORKER_METRICS_PORT", "http")
    with pytest.raises(EnvError, match="CARAVANSERAI_WORKER_METRICS_PORT must be a whole number, not 'http'"):
        metrics.serve_from_env()
    monkeypatch.setenv("CARAVANSERAI_WORKER_METRICS_PORT", "0")
    assert metrics.serve_from_env() is None


def test_the_gateway_reads_its_variables_with_the_shared_readers() -> None:
    from engine_service.gateway.config import ConfigError, GatewayConfig

    assert GatewayConfig.from_env({"CARAVANSERAI_GATEWAY_HEARTBEAT": " "}) == GatewayConfig.from_env({})
    assert GatewayConfig.from_env({}).max_sessions_per_bot == GatewayConfig().max_sessions_per_bot
    assert GatewayConfig.from_env({"CARAVANSERAI_GATEWAY_DRAIN_SECONDS": "0"}).drain_seconds == 0.0
    with pytest.raises(ConfigError, match="CARAVANSERAI_GATEWAY_HEARTBEAT must be positive, not 0"):
        GatewayConfig.from_env({"CARAVANSERAI_GATEWAY_HEARTBEAT": "0"})
    with pytest.raises(
        EnvError, match="CARAVANSERAI_GATEWAY_MAX_MESSAGE_BYTES must be at least 1024, not 10"
    ):
        GatewayConfig.from_env({"CARAVANSERAI_GATEWAY_MAX_MESSAGE_BYTES": "10"})
