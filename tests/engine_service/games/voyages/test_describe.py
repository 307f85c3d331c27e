"""Voyages in words: every event and action of seeded games in plain sentences, progress for the replay's
jumps, the final screen with its camel tie-break, and the static board the viewer draws."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any

import pytest

from engine_service.games.base import GameResult
from engine_service.games.voyages import SPEC, VoyagesState, describe
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, frames, run_match

from .helpers import my_turn, new_game, node

EXTRA_VARIANTS: list[dict[str, Any]] = [
    {"characters": "draft", "goal_draft": True, "random_city_bonuses": True},
    {"characters": "random", "johannes_jump_cost": "printed", "city_card_timing": "immediate"},
]


def assert_words(text: str, what: Any) -> None:
    assert text and text.strip() == text, what
    assert not re.search(r"[{}\[\]_]|None", text), f"{text!r} from {what}"


def play_and_check(players: int, seed: int, policy: str, options: dict[str, Any]) -> set[str]:
    """Play a seeded game, checking every event, every played action and the progress; the event kinds seen."""
    state = SPEC.new_state(players, seed, options)
    assert isinstance(state, VoyagesState)
    bots = [make_policy(policy, seed=seed * 10 + s) for s in range(players)]
    kinds: set[str] = set()
    seen: set[str] = set()
    last_round, last_turn, turns_seen = 0, -1, set()
    while True:
        for event in state.events:
            key = json.dumps(event, sort_keys=True)
            if key not in seen:
                seen.add(key)
                kinds.add(str(event["event"]) + ("/choice" if "choice" in event else ""))
                assert_words(SPEC.describe_event(event), event)
        prog = SPEC.progress(state)
        assert (prog.round or 0) >= last_round
        assert prog.turn is not None and prog.turn >= last_turn
        last_round, last_turn = prog.round or 0, prog.turn
        turns_seen.add(prog.turn)
        if state.is_over():
            break
        seat = state.current_seats()[0]
        action_id = bots[seat].choose(state.observation(seat), state.legal_actions(seat))
        said = SPEC.describe_action(state, seat, action_id)
        assert_words(said, action_id)
        assert f"({action_id})" not in said and said != action_id, said  # never the generic fallback
        state.apply(seat, action_id)
    assert last_round == 5 and len(turns_seen) > 10
    lines = SPEC.describe_result(state, state.result())
    for seat in range(players):
        assert any(f"seat {seat} with" in line for line in lines)
    for line in lines:
        assert_words(line, "result")
    return kinds


def rules_event_kinds() -> set[str]:
    package = resources.files("engine_service.games.voyages")
    text = "".join(
        package.joinpath(f"{m}.py").read_text()
        for m in ("rules", "setup_state", "movement", "placement", "turn")
    )
    return set(re.findall(r'"event": "(\w+)"', text))


def test_every_event_kind_of_the_rules_has_a_describer() -> None:
    assert rules_event_kinds() <= set(describe.EVENTS)


def test_seeded_games_are_told_in_words() -> None:
    kinds: set[str] = set()
    for players in (2, 3, 4):
        variants = [*SPEC.option_variants(players), *EXTRA_VARIANTS]
        for i, options in enumerate(variants):
            kinds |= play_and_check(players, 100 + 10 * players + i, "random", options)
    kinds |= play_and_check(3, 7, "greedy", {})
    kinds |= play_and_check(4, 8, "greedy", EXTRA_VARIANTS[0])
    unit_tested = {"special_to_board", "special_pile_empty", "relocate", "black_die_none_left"}
    assert rules_event_kinds() - unit_tested <= {k.split("/")[0] for k in kinds}
    assert "special_contract/choice" in kinds


def test_frames_carry_sentences_and_the_final_screen() -> None:
    record = run_match("voyages-v1", 2, 3, [HouseSeat(make_policy("random", seed=s)) for s in range(2)])
    shown = frames(record, start=0, count=record.steps + 1)
    assert shown[0]["log"][0]["text"].startswith("The game is set up: seat 0 is Raschid ad-Din Sinan")
    assert any("on the" in line["text"] for f in shown for line in f["log"])
    final = shown[-1]["result"]
    assert final is not None and final["lines"][0].startswith("1st: seat")


@pytest.mark.parametrize(
    ("event", "words"),
    [
        (
            {"event": "special_to_board", "contracts": [3, 5]},
            "The contract spaces were empty: contract 3 (2 camels, 1 pepper and 2 silk for 3 coins and 4 VP) "
            "and contract 5 (2 camels, 3 silk and 2 gold for 4 camels and 8 VP) came from the special pile",
        ),
        (
            {"event": "special_to_board", "contracts": []},
            "The contract spaces are empty and the special pile has no contracts to refill them",
        ),
        (
            {"event": "special_pile_empty", "seat": 1},
            "seat 1 was due a contract, but the special pile is empty",
        ),
        (
            {"event": "black_die_none_left", "seat": 3},
            "seat 3 was due a black die, but none were left",
        ),
        (
            {"event": "relocate", "seat": 2, "from": 2, "to": 18},
            "seat 2 had no trading posts left and moved one from Moscow to Ormuz",
        ),
        (
            {"event": "place", "seat": 1, "space": "silk", "dice": ["c1", "b1"], "fee": 1},
            "seat 1 placed 1+black 1 on the silk space for a reward up to column 1, paying 1 coin to share the space",
        ),
        (
            {"event": "place", "seat": 0, "space": "card-sumatra-2", "dice": ["w6"], "fee": 0},
            "seat 0 placed white 6 on city card 2 in Sumatra",
        ),
        (
            {"event": "move", "seat": 3, "to": [12, 1], "coins": 12, "camels": 4, "travel": True},
            "seat 3 travelled its two figures to Kashgar and Oasis A, paying 12 coins and 4 camels",
        ),
        (
            {"event": "special_contract", "seat": 0, "contract": 26, "choice": "discard:42"},
            "seat 0 drew contract 26 (1 camel and 3 gold for 6 VP and a good of your choice) from the "
            "special pile and kept it, discarding contract 42",
        ),
    ],
)
def test_event_sentences(event: Mapping[str, Any], words: str) -> None:
    assert SPEC.describe_event({"round": 2, **event}) == words


def test_a_relocation_in_play_is_logged_and_described() -> None:
    state = new_game(2, 5)
    my_turn(state, 0, ["c6", "c6"], coins=30, camels=10)
    state.posts_left[0] = 0
    state.posts[0] = [2, 18]
    state.apply(0, "place:travel")  # the only pair of dice is placed without asking
    route = next(a.id for a in state.legal_actions(0) if a.id.startswith("route:alexandria"))
    state.apply(0, route)
    assert [a.id for a in state.legal_actions(0)] == ["relocate:moscow", "relocate:ormuz"]
    assert (
        SPEC.describe_action(state, 0, "relocate:moscow") == "moves a trading post from Moscow to Alexandria"
    )
    state.apply(0, "relocate:moscow")
    event = next(e for e in state.events if e["event"] == "relocate")
    assert (
        SPEC.describe_event(event)
        == "seat 0 had no trading posts left and moved one from Moscow to Alexandria"
    )


def test_kept_goal_cards_are_not_named() -> None:
    state = new_game(3, 2, goal_draft=True)
    seat = state.current_seats()[0]
    for action in state.legal_actions(seat):
        assert SPEC.describe_action(state, seat, action.id) == "keeps 2 of the 4 goal cards dealt"


def test_result_explains_the_camel_tie_break_and_a_shared_rank() -> None:
    state = new_game(3, 1)
    result = GameResult.from_keys([40, 40, 40], [5, 2, 5])
    lines = SPEC.describe_result(state, result)
    assert lines[:3] == ["1st: seat 0 with 40 VP", "1st: seat 2 with 40 VP", "3rd: seat 1 with 40 VP"]
    assert "seats 0 and 2 tie on 40 VP and 5 camels and share 1st place" in lines
    assert "seat 2 ranks above seat 1 on the tie-break: more camels (5 against 2)" in lines


def test_board_holds_the_map_spaces_and_card_words() -> None:
    board = SPEC.board()
    assert board is not None
    json.dumps(board)
    assert len(board["nodes"]) == 25 and all(len(n["xy"]) == 2 for n in board["nodes"])
    assert len(board["routes"]) == 30
    assert {s["id"] for s in board["spaces"]} == {
        "coins5", "camels", "pepper", "silk", "gold", "khan", "contracts", "travel"
    }  # fmt: skip
    texts = list(board["city_cards"].values())
    for table in ("city_bonuses", "outpost_bonuses", "contracts", "goals"):
        texts += [item["text"] for item in board[table].values()]
    for text in texts:
        assert_words(text, "board")


def card_in_moscow(card: int, **resources: int) -> VoyagesState:
    """Seat 0's turn with one 6 and posts in Moscow, Kashgar and Anxi; `card` lies in Moscow."""
    state = new_game(2, 9)
    my_turn(state, 0, ["c6"], **resources)
    state.posts[0] = [node("moscow"), node("kashgar"), node("anxi")]
    state.cards[0] = card
    state.apply(0, "place:card-moscow")  # the only die is placed without asking
    return state


def said(state: VoyagesState) -> list[str]:
    seat = state.current_seats()[0]
    words = [SPEC.describe_action(state, seat, a.id) for a in state.legal_actions(seat)]
    for text in words:
        assert_words(text, state.pending[0])
    return words


def test_city_card_choices_in_words() -> None:
    state = card_in_moscow(23)
    assert said(state)[-1] == (
        "takes Anxi's city bonus A (5 coins) and Kashgar's city bonus C (a pair of different goods)"
    )
    state = card_in_moscow(25, coins=5)
    assert said(state) == [
        "takes Anxi's city bonus A (5 coins) for 1 coin",
        "takes Kashgar's city bonus C (a pair of different goods) for 1 coin",
    ]
    state = card_in_moscow(30, pepper=2, silk=2, gold=1)
    assert said(state) == [
        "pays 1 pepper and 1 silk for a move",
        "pays 1 pepper and 1 gold for a move",
        "pays 1 silk and 1 gold for a move",
    ]
    state.apply(0, "pay:pepper+gold")
    assert said(state)[:2] == ["walks the 1 move bought", "pays 1 pepper and 1 silk for a move"]


def test_contract_space_bonus_in_words() -> None:
    state = new_game(2, 9)
    my_turn(state, 0, ["c6"])
    state.apply(0, "place:contracts")
    state.apply(0, "take:6")
    state.apply(0, "done")
    while state.pending and state.pending[0]["t"] != "space_bonus":
        state.apply(0, state.legal_actions(0)[0].id)
    assert said(state) == [
        "takes 2 coins as the contract space bonus",
        "takes 2 camels as the contract space bonus",
    ]
