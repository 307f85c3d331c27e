"""Prometheus metrics of a gateway process (prometheus-client): connected bots and sessions, matches and
decisions in flight, decisions relayed by game and outcome, and the bots' decision time per game as a
histogram, measured where the clock is (from the request written to the bot's stream to its answer read,
less the time the gateway's loop was stalled). The loop's own stalls (`loop_lag.LoopLag`) are a histogram,
and the seconds of bots' decisions excused for them a counter: our lag, never charged.

Served on CARAVANSERAI_GATEWAY_METRICS_PORT (`/metrics`, address CARAVANSERAI_GATEWAY_METRICS_ADDR, default
127.0.0.1) when set; unset or 0, nothing is served. The gauges are read from the hub at scrape time.

Layer: gateway plumbing. It counts; it must not change what the hub does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import REGISTRY, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from engine_service.gateway.hub import Hub

DECISIONS = Counter(
    "caravanserai_gateway_decisions_total",
    "Decisions relayed to bots, by game and outcome",
    ["game", "outcome"],
)
DECISION_SECONDS = Histogram(
    "caravanserai_gateway_decision_seconds",
    "A bot's time for one decision, from its request written to its answer read (what it is charged)",
    ["game"],
    buckets=(0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)

LOOP_STALL_SECONDS = Histogram(
    "caravanserai_gateway_loop_stall_seconds",
    "Stalls of the gateway's event loop: how late its lag monitor's tick ran, beyond the tolerance",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
EXCUSED_SECONDS = Counter(
    "caravanserai_gateway_excused_seconds_total",
    "Seconds of bots' decisions not charged to them because the gateway's loop was stalled meanwhile",
    ["game"],
)


class HubCollector(Collector):
    """The hub's live state as gauges, read when scraped."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def collect(self) -> Iterator[GaugeMetricFamily]:
        sessions = list(self.hub.sessions.values())  # a snapshot: the hub's loop may change the dict
        figures = {
            "sessions": ("Open bot streams on this gateway", len(sessions)),
            "bots": ("Distinct bots connected to this gateway", len({s.bot_id for s in sessions})),
            "matches": (
                "Match seats this gateway's streams are playing",
                sum(len(s.matches) for s in sessions),
            ),
            "pending_decisions": (
                "Decisions waiting for a bot's answer",
                sum(len(s.pending) for s in sessions),
            ),
        }
        for name, (help_text, value) in figures.items():
            yield GaugeMetricFamily(f"caravanserai_gateway_{name}", help_text, value=value)


def serve(hub: Hub, port: int, addr: str = "127.0.0.1") -> None:
    """Serve this process's metrics, the hub's gauges among them, on `addr:port`."""
    REGISTRY.register(HubCollector(hub))
    start_http_server(port, addr=addr)


def decision_relayed(game_id: str, outcome: str, bot_seconds: float, excused_seconds: float = 0.0) -> None:
    DECISIONS.labels(game_id, outcome).inc()
    if bot_seconds > 0:
        DECISION_SECONDS.labels(game_id).observe(bot_seconds)
    if excused_seconds > 0:
        EXCUSED_SECONDS.labels(game_id).inc(excused_seconds)


def loop_stalled(seconds: float) -> None:
    LOOP_STALL_SECONDS.observe(seconds)
