"""A readable text frame of a Marco Polo II observation or spectator view (for `caravan replay show`).

Pure: formats the JSON view it is given; reads static tables only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine_service.games.common.resources import describe
from engine_service.games.mp2.tables import CHARACTERS, CITY_CARDS, CONTRACTS, GOALS, NODES

SHORT = {"coins": "$", "camels": "cam", "pepper": "P", "silk": "S", "gold": "G", "jade": "J", "vp": "VP"}


def _bundle(bundle: Mapping[str, int]) -> str:
    return " ".join(f"{v}{SHORT.get(k, ' ' + k)}" for k, v in bundle.items() if v) or "-"


def _contracts(ids: list[str]) -> str:
    parts = []
    for cid in ids:
        c = CONTRACTS[cid]
        parts.append(f"{cid}[{_bundle(c['cost'])} -> {c['vp']}VP + {describe(c['reward'])}]")
    return " ".join(parts) if parts else "-"


def render(view: Mapping[str, Any]) -> str:
    lines = [
        f"Marco Polo II - step {view['step']}, round {view['round']}/5, phase {view['phase']}, "
        f"first player {view['first_player']}, to decide: {view['current_seat']}"
        + (" (The Caravans)" if view["options"].get("caravans") else "")
    ]
    if view["pending"]:
        top = view["pending"][0]
        lines.append(f"pending: {top['t']} (seat {top['seat']})")
    for seat in range(int(view["num_players"])):
        res = view["res"][seat]
        char = CHARACTERS[view["chars"][seat]]["name"] if view["chars"][seat] else "-"
        seals = (
            ", ".join(f"{s}{'*' if lvl == 2 else ''}" for s, lvl in sorted(view["seals"][seat].items()))
            or "-"
        )
        lines.append(
            f"seat {seat} {char}: {_bundle(res)}; dice {' '.join(view['dice'][seat]) or '-'}; seals {seals}"
        )
        caravans = "; ".join(
            f"{c['tile']} at {c['at']} with {'+'.join(c['goods'])}" for c in view["caravans"][seat]
        )
        lines.append(
            f"    at {', '.join(NODES[f]['name'] for f in view['figures'][seat])}; posts "
            f"{', '.join(view['posts'][seat]) or '-'} ({view['posts_left'][seat]} left); contracts "
            f"{_contracts(view['active'][seat])}; completed {len(view['done'][seat])}"
            + (f"; caravans {caravans}" if caravans else "")
        )
    board = {city: [c for c in slots if c] for city, slots in view["contract_spaces"].items()}
    lines.append(f"contract cities: {board}; pile {view['pile_size']}")
    used = {k: v for k, v in view["spaces"].items() if v}
    lines.append(f"spaces: {used or '-'}; khan {view['khan']}; city spaces {view['brown'] or '-'}")
    lines.append(
        "city cards: "
        + ", ".join(
            f"{slot}={card}({CITY_CARDS[card]['kind']})" for slot, card in sorted(view["cards"].items())
        )
    )
    lines.append(
        f"offer tiles: {view['offer_now']} next {view['offer_next']}; black dice left {view['black_left']}"
    )
    if view["tiles"]:
        lines.append(f"route tiles: {view['tiles']}")
    if view.get("seat") is not None and view.get("goal"):
        goal = GOALS[view["goal"]]
        lines.append(f"your goal {view['goal']}: shields {goal['shields']}, seals {goal['seals']}")
    if view.get("final"):
        lines.append(f"final scoring: {view['final']}")
    if view["events"]:
        lines.append(f"last event: {view['events'][-1]}")
    return "\n".join(lines)
