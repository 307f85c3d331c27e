"""Marco Polo Expedition in words and pictures for replays: the board a viewer draws, events, actions and
the final result as sentences, and the round and turn of a state.

Pure: reads the packaged track and the state it is given; names only what the event, the action id or the
result already makes public.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from engine_service.games.base import GameResult, GameState, JsonDict, Progress, ordinal
from engine_service.games.expedition.cards import REQUIREMENTS, track


def board() -> JsonDict:
    """The 29-space track (requirements, chests, scores) and a legend of the requirement codes."""
    data = dict(track())
    data["legend"] = dict(REQUIREMENTS)
    return data


def space_name(index: Any) -> str:
    spaces = track()["spaces"]
    if not isinstance(index, int) or not 0 <= index < len(spaces):
        return f"space {index}"
    name = spaces[index]["name"]
    return f"{name} (space {index})" if name else f"space {index}"


def _cards(types: Any) -> str:
    names = [str(t).replace("-", " ") for t in types or []]
    return ", ".join(names) if names else "no cards"


def describe_event(event: Mapping[str, Any]) -> str:
    who = f"seat {event['seat']}" if isinstance(event.get("seat"), int) else "the game"
    kind = str(event.get("event"))
    if kind == "move":
        return (
            f"{who} moved piece {event.get('piece')} to {space_name(event.get('to'))}, "
            f"paying {_cards(event.get('paid'))}"
        )
    if kind == "ballast":
        return f"{who} paid 1 gold of ballast to move piece {event.get('piece')} to {space_name(event.get('to'))}"
    if kind == "draw":
        if event.get("source") == "deck":
            return f"{who} drew a card from the draw pile"
        return f"{who} took the {_cards([event.get('card')])} card from the display"
    if kind == "chest":
        return (
            f"{who} opened the chest on {space_name(event.get('space'))} and took {event.get('value')} gold"
        )
    if kind == "pass":
        return f"{who} did not move"
    if kind == "stop":
        return f"{who} ended the movement"
    if kind == "reshuffle":
        return f"the discards were shuffled into a new draw pile of {event.get('cards')} cards"
    if kind.endswith("_scoring"):
        label = kind[: -len("_scoring")]
        paid = [
            f"seat {p['seat']} +{p['gold']} on {space_name(p.get('space'))}" for p in event.get("paid") or []
        ]
        return f"{label} scoring: " + ("; ".join(paid) if paid else "no piece on a scoring space")
    return f"{who}: {kind.replace('_', ' ')}"


def describe_action(state: GameState, seat: int, action_id: str) -> str:
    action = next((a for a in state.legal_actions(seat) if a.id == action_id), None)
    if action is None:
        return action_id
    details = action.details
    if action.kind == "end_movement":
        return "ends the movement" if details.get("moved") else "passes without moving"
    if action.kind == "ballast":
        return f"pays 1 gold of ballast to move piece {details['piece']} to {space_name(details['to'])}"
    if action.kind == "move":
        return (
            f"moves piece {details['piece']} to {space_name(details['to'])} "
            f"paying {_cards(details.get('pay'))}"
        )
    if action.kind == "draw":
        if details.get("source") == "deck":
            return "draws from the draw pile"
        return f"takes the {_cards([details.get('card')])} card from the display"
    return action_id


def describe_result(state: GameState, result: GameResult) -> list[str]:
    order = sorted(range(len(result.ranks)), key=lambda s: (result.ranks[s], s))
    lines = [
        f"{ordinal(result.ranks[s])}: seat {s} with {result.scores[s]} gold, leading piece on "
        f"{space_name(result.tiebreaks[s])}"
        for s in order
    ]
    for a, b in pairwise(order):
        if result.scores[a] != result.scores[b]:
            continue
        if result.ranks[a] == result.ranks[b]:
            lines.append(f"seats {a} and {b} tie on gold and on the leading piece, and share the rank")
        else:
            lines.append(
                f"seat {a} ranks above seat {b} on the tie-break: its leading piece is further along "
                f"({space_name(result.tiebreaks[a])} against {space_name(result.tiebreaks[b])})"
            )
    if result.reason == "turn_cap":
        lines.append("the game reached the turn cap and was scored as if Daidu had been reached")
    return lines


def progress(state: GameState) -> Progress:
    turns = int(getattr(state, "turns", 0))
    return Progress(round=turns // state.num_players + 1, turn=turns)
