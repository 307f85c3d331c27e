"""Marco Polo II in words: every event and played action of seeded games is a plain sentence, every event
kind the rules emit is described, progress moves forward, the final screen names every seat and explains a
tie-break, and the static board holds what a viewer draws."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from engine_service.games.base import GameResult
from engine_service.games.mp2 import SPEC, Mp2State, describe
from engine_service.games.mp2.tables import NODES, ROUTES_DATA
from engine_service.policies.base import make_policy
from engine_service.referee.frames import frames
from engine_service.referee.match import run_match
from engine_service.referee.replay import replay
from engine_service.referee.seats import HouseSeat

pytestmark = pytest.mark.xdist_group("mp2_seeded_games")  # the module's games are played once per run
RULES = [
    Path(describe.__file__).with_name(f"{m}.py")
    for m in ("rules", "setup_state", "movement", "placement", "turn")
]
EMITTED = frozenset(re.findall(r'"event": "(\w+)"', "".join(p.read_text(encoding="utf-8") for p in RULES)))
GAMES = [
    (policy, players, options)
    for policy in ("random", "greedy")
    for players in (2, 3, 4)
    for options in SPEC.option_variants(players)
]


def _plain(text: str) -> None:
    assert text and text == text.strip()
    for bad in ("{", "[", "None", "_"):
        assert bad not in text, f"{bad!r} in {text!r}"


@cache
def _played(
    policy: str, players: int, caravans: bool
) -> tuple[Any, list[dict[str, Any]], list[str], list[Any]]:
    """One seeded game: its record, every event it logged, every action's words, every step's progress."""
    options = {"caravans": True} if caravans else {}
    seed = 11 * players + (7 if caravans else 0) + (100 if policy == "greedy" else 0)
    seats = [HouseSeat(make_policy(policy, seed=seed + i)) for i in range(players)]
    record = run_match("mp2-v1", players, seed, seats, options)
    state = replay(record, upto=0)
    assert isinstance(state, Mp2State)
    events: list[dict[str, Any]] = list(state.events)
    words: list[str] = []
    progress = [SPEC.progress(state)]
    for seat, action_id in record.actions:
        last = state.events[-1] if state.events else None
        words.append(SPEC.describe_action(state, seat, action_id))
        state.apply(seat, action_id)
        start = next((i + 1 for i, e in enumerate(state.events) if e is last), 0)
        events.extend(state.events[start:])
        progress.append(SPEC.progress(state))
    return record, events, words, progress


def _game(
    policy: str, players: int, options: dict[str, Any]
) -> tuple[Any, list[dict[str, Any]], list[str], list[Any]]:
    return _played(policy, players, bool(options.get("caravans")))


@pytest.mark.parametrize(("policy", "players", "options"), GAMES)
def test_every_event_and_action_of_a_game_is_a_sentence(
    policy: str, players: int, options: dict[str, Any]
) -> None:
    _record, events, words, _progress = _game(policy, players, options)
    for event in events:
        assert event["event"] in describe.EVENT_WORDS, event
        text = SPEC.describe_event(event)
        _plain(text)
        if isinstance(event.get("seat"), int):
            assert text.startswith(f"seat {event['seat']} ")
    for text in words:
        _plain(text)


@pytest.mark.parametrize(("policy", "players", "options"), GAMES)
def test_progress_rounds_never_decrease_and_turns_change(
    policy: str, players: int, options: dict[str, Any]
) -> None:
    _record, _events, _words, progress = _game(policy, players, options)
    rounds = [p.round for p in progress if p.round is not None]
    turns = [p.turn for p in progress if p.turn is not None]
    assert rounds == sorted(rounds) and rounds[0] == 1 and rounds[-1] == 5
    assert turns == sorted(turns) and len(set(turns)) > 10
    assert progress[0].round is None  # the character draft comes before round 1


# One example of every event kind the rules emit: those random and greedy play rarely reach are here too.
EXAMPLES: dict[str, tuple[dict[str, Any], str]] = {
    "setup": ({"event": "setup", "characters": ["mailin", "vidal"]}, "seat 0 is Mailin & Tian Chin"),
    "draft": ({"event": "draft", "seat": 1, "character": "abha"}, "seat 1 chose Abha Basu as character"),
    "goal_kept": ({"event": "goal_kept", "seat": 2}, "seat 2 kept one of its goal cards (hidden)"),
    "figures": ({"event": "figures", "seat": 0, "colours": [1, 2, 3]}, "yellow, green and red"),
    "round": (
        {"event": "round", "round": 2, "first_player": 1, "dice": [["c1", "c6"], ["b3"]]},
        "seat 0 1-6",
    ),
    "round_end": ({"event": "round_end", "round": 3}, "round 3 ends"),
    "game_end": ({"event": "game_end", "reason": "completed"}, "final scoring"),
    "place": (
        {"event": "place", "seat": 0, "space": "book1", "dice": ["c3"], "fee": 0},
        "placed a 3 on Book I",
    ),
    "offer": (
        {"event": "offer", "seat": 0, "book": "I", "choice": "offer:free2"},
        "1 pepper + 1 camel + 3 coins",
    ),
    "money_bag": (
        {"event": "money_bag", "seat": 0, "die": "c2", "gain": {"jade": 1}},
        "used a 2 on the money bag for 1 jade",
    ),
    "black_die": ({"event": "black_die", "seat": 3, "die": "b6"}, "took a black die and rolled a 6"),
    "black_die_none_left": ({"event": "black_die_none_left", "seat": 1}, "none is left"),
    "die": ({"event": "die", "seat": 1, "from": "c1", "to": "c5"}, "changed a die from 1 to 5"),
    "move": (
        {"event": "move", "seat": 0, "figure": 1, "path": ["OA", "ANX"], "cost": {"coins": 0, "camels": 3}},
        "moved its second figure through Gobi to Anxi for 3 camels",
    ),
    "moved": ({"event": "moved", "seat": 0, "to": ["XIA"], "mode": "travel3"}, "Travel (3 dice) in Xian"),
    "post": ({"event": "post", "seat": 0, "city": "KAB", "milestone_vp": 5}, "post in Kabul and scored 5 VP"),
    "relocate": ({"event": "relocate", "seat": 0, "from": "XIA", "to": "KAB"}, "from Xian to Kabul"),
    "outpost": (
        {"event": "outpost", "seat": 0, "city": "KIN", "tile": "OP06"},
        "outpost OP06 (6 coins) in Kinsay",
    ),
    "outpost_used": (
        {"event": "outpost_used", "seat": 2, "tile": "OP01"},
        "used its kept outpost OP01 (2 gold)",
    ),
    "city_bonus": ({"event": "city_bonus", "seat": 0, "marker": "CB2"}, "city bonus CB2 (3 camels)"),
    "seal": ({"event": "seal", "seat": 0, "seal": "jeweler"}, "took the Jeweler's seal and 3 jade"),
    "improve": ({"event": "improve", "seat": 0, "seal": "tailor"}, "improved its Tailor's seal"),
    "card": ({"event": "card", "seat": 1, "card": "CC06", "die": 4}, "used a 4 on city card CC06"),
    "complete": (
        {"event": "complete", "seat": 1, "contract": "S1"},
        "completed contract S1 (1 camel + 3 pepper",
    ),
    "take_contracts": (
        {"event": "take_contracts", "seat": 0, "contracts": ["C01", "C02"]},
        "took contracts C01 (1 camel + 3 pepper for 3 VP + 3 coins) and C02",
    ),
    "pile_contract": (
        {"event": "pile_contract", "seat": 0, "contract": "C05", "choice": "discard:C01"},
        "from the pile and discarded C01 for it",
    ),
    "contract_pile_empty": ({"event": "contract_pile_empty", "seat": 0}, "the pile is empty"),
    "discard_contract": (
        {"event": "discard_contract", "seat": 2, "contract": "C03"},
        "discarded contract C03",
    ),
    "vidal_set": ({"event": "vidal_set", "seat": 0}, "1 pepper, 1 silk and 1 gold for 5 VP"),
    "caravan_claim": (
        {"event": "caravan_claim", "seat": 2, "tile": "RT03", "city": "MUL"},
        "claimed route tile RT03 (dragon-eagle) and set out a caravan in Multan",
    ),
    "caravan_loaded": (
        {"event": "caravan_loaded", "seat": 2, "goods": ["gold", "silk"]},
        "with 1 gold + 1 silk",
    ),
    "caravan_step": ({"event": "caravan_step", "seat": 1, "caravan": 1, "to": "KER"}, "caravan 1 to Kerman"),
    "caravan_complete": (
        {"event": "caravan_complete", "seat": 0, "caravan": 2, "at": "ANX"},
        "route in Anxi",
    ),
    "caravan_good": ({"event": "caravan_good", "seat": 0, "good": "silk", "use": "sell"}, "silk for 4 VP"),
    "caravan_home": ({"event": "caravan_home", "seat": 0, "tile": "RT01"}, "returned route tile RT01"),
}


def test_every_event_kind_the_rules_emit_has_words() -> None:
    assert set(describe.EVENT_WORDS) >= EMITTED
    assert set(EXAMPLES) >= EMITTED


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_event_examples(kind: str) -> None:
    event, expected = EXAMPLES[kind]
    text = SPEC.describe_event(event)
    _plain(text)
    assert expected in text


def test_the_seeded_games_reach_most_event_kinds() -> None:
    reached = {e["event"] for game in GAMES for e in _game(*game)[1]}
    assert len(EMITTED - reached) <= 6, sorted(EMITTED - reached)


def test_frames_carry_the_words() -> None:
    record = _played("greedy", 3, True)[0]
    frame = frames(record, start=40, count=1)[0]
    assert frame["round"] == 1 and frame["log"] and frame["next_action"]["text"]
    for line in frame["log"]:
        _plain(line["text"])


def _finished(caravans: bool = False) -> Mp2State:
    record = _played("greedy", 3, caravans)[0]
    state = replay(record)
    assert isinstance(state, Mp2State) and state.is_over()
    return state


def test_result_names_every_seat_in_rank_order_with_its_scoring() -> None:
    state = _finished(True)
    result = state.result()
    lines = SPEC.describe_result(state, result)
    order = sorted(range(3), key=lambda s: (result.ranks[s], s))
    for line, seat in zip(lines, order, strict=False):
        assert f"seat {seat} " in line and f"with {result.scores[seat]} points" in line
        assert "during play" in line and "at the end" in line
        _plain(line)


def test_result_explains_the_camel_tie_break_and_a_shared_rank() -> None:
    state = _finished()
    for seat, (vp, camels) in enumerate([(50, 4), (50, 7), (50, 7)]):
        state.res[seat]["vp"] = vp
        state.res[seat]["camels"] = camels
    result = state.result()
    assert result.ranks == [3, 1, 1]
    lines = SPEC.describe_result(state, result)
    assert lines[0].startswith("1st: seat 1 ") and lines[1].startswith("1st: seat 2 ")
    assert lines[2].startswith("3rd: seat 0 ")
    assert "seats 1 and 2 tie on 50 points and 7 camels and share the 1st place" in lines
    assert "seat 2 ranks above seat 0 on the tie-break: more camels (7 against 4)" in lines


def test_result_of_a_step_cap_says_so() -> None:
    state = _finished()
    result = GameResult(state.result().scores, state.result().ranks, state.result().tiebreaks, "step_cap")
    assert any("step cap" in line for line in SPEC.describe_result(state, result))


def test_a_kept_goal_is_never_named() -> None:
    state = SPEC.new_state(2, seed=3)
    assert isinstance(state, Mp2State)
    while state.pending and state.pending[0]["t"] != "keep_goal":
        seat = state.current_seats()[0]
        state.apply(seat, state.legal_actions(seat)[0].id)
    seat = state.current_seats()[0]
    for action in state.legal_actions(seat):
        assert action.id.split(":")[1] not in SPEC.describe_action(state, seat, action.id)
    goal = state.legal_actions(seat)[0].id
    state.apply(seat, goal)
    assert goal.split(":")[1] not in SPEC.describe_event(state.events[-1])


def test_board_holds_the_map_spaces_and_cards_as_json() -> None:
    board = SPEC.board()
    assert board is not None
    json.dumps(board)
    assert len(board["map"]["nodes"]) == len(NODES) and len(board["map"]["routes"]) == len(ROUTES_DATA)
    assert all(len(n["xy"]) == 2 for n in board["map"]["nodes"])
    assert {s["id"] for s in board["spaces"]} >= {"book1", "book3b", "khan", "travel3", "contracts"}
    assert (
        len(board["contracts"]) == 49 and len(board["city_cards"]) == 25 and len(board["route_tiles"]) == 10
    )
    for route in board["map"]["routes"]:
        _plain(route["text"])
