"""Marco Polo Expedition's rules, each rulebook example as a test, on exact situations built from a state."""

from __future__ import annotations

from collections import Counter

import pytest

from engine_service.games import IllegalAction, make
from engine_service.games.expedition import ExpeditionState
from engine_service.games.expedition.cards import CARD_TYPES, can_pay, payments
from engine_service.games.expedition.rules import DAIDU, KANTSHOU, SPACES, TURN_CAP


def cards(*types: str) -> list[int]:
    """Card ids for the given types (distinct ids; repeated types get further copies)."""
    ids: list[int] = []
    for card_type in types:
        ids.append(next(i for i, t in enumerate(CARD_TYPES) if t == card_type and i not in ids))
    return ids


def situation(
    players: int = 4,
    *,
    pieces: list[int],
    hands: dict[int, list[str]] | None = None,
    gold: list[int] | None = None,
    **options: object,
) -> ExpeditionState:
    """A game whose pieces, hands and gold are set; every other card stays in the deck."""
    state = make("expedition-v1", players, 1, options)
    assert isinstance(state, ExpeditionState)
    state.pieces = list(pieces)
    given = hands or {}
    used: list[int] = []
    for seat in range(players):
        state.hands[seat] = cards(*given.get(seat, []))
        used += state.hands[seat]
    state.display = [c for c in range(len(CARD_TYPES)) if c not in used][:5]
    state.deck = [c for c in range(len(CARD_TYPES)) if c not in used and c not in state.display]
    state.discard = []
    if gold is not None:
        state.gold = list(gold)
    state._legal_cache = None
    return state


def ids(state: ExpeditionState, seat: int) -> list[str]:
    return [a.id for a in state.legal_actions(seat)]


# --- setup ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_setup(players: int) -> None:
    state = make("expedition-v1", players, 42)
    assert isinstance(state, ExpeditionState)
    pieces = 4 if players == 2 else players
    assert state.pieces == list(range(pieces)), "start player on Hormus, the others on the next free spaces"
    assert all(len(hand) == 5 for hand in state.hands)
    assert len(state.display) == 5
    assert len(state.deck) == 55 - 5 * players - 5
    assert state.gold == [3] * players
    assert sorted([c for h in state.hands for c in h] + state.display + state.deck) == list(range(55))
    if players == 2:
        assert state.owners == [0, 1, 0, 1], "two colours each, placed alternately"
    assert state.current_seats() == [0]


def test_card_census_matches_the_rulebook() -> None:
    census = Counter(CARD_TYPES)
    assert len(CARD_TYPES) == 55
    assert sum(n for t, n in census.items() if t.endswith("leader")) == 15
    assert all(n == 2 for t, n in census.items() if not t.endswith("leader"))
    assert SPACES[KANTSHOU]["requirement"] == "FOURGOODS" and SPACES[DAIDU]["requirement"] == "SAME4"
    assert [s["score"] for s in SPACES[9:15]] == [1, 2, 3, 4, 5, 6]
    assert [s["score"] for s in SPACES[23:29]] == [2, 3, 4, 5, 6, 7]


# --- requirements: the rulebook's examples -------------------------------------------------------------------
def test_any_one_goods_card_but_no_leader() -> None:
    hand = Counter(["yellow-spice", "red-leader"])
    assert payments(hand, "ANY1") == [("yellow-spice",)]


def test_matching_goods_any_colours() -> None:
    hand = Counter(["blue-spice", "yellow-spice", "yellow-spice", "blue-leader", "red-oil"])
    options = payments(hand, "SAME3")
    assert options == [("blue-spice", "yellow-spice", "yellow-spice")]
    assert ("blue-spice", "yellow-spice") in payments(hand, "SAME2")
    assert all("leader" not in t for p in payments(hand, "SAME2") for t in p)


def test_one_of_each_of_the_four_goods() -> None:
    hand = Counter(["blue-fruit", "yellow-oil", "blue-spice", "red-silk", "red-leader"])
    assert payments(hand, "FOURGOODS") == [("blue-fruit", "blue-spice", "red-silk", "yellow-oil")]
    assert payments(Counter(["blue-fruit", "yellow-oil", "blue-spice", "red-leader"]), "FOURGOODS") == []


def test_two_leaders_no_goods() -> None:
    hand = Counter(["red-leader", "green-leader", "green-oil"])
    assert payments(hand, "LEAD2") == [("green-leader", "red-leader")]


def test_three_of_one_colour_leaders_allowed() -> None:
    hand = Counter(["red-spice", "red-silk", "red-leader", "blue-oil"])
    assert payments(hand, "COLOR3") == [("red-leader", "red-silk", "red-spice")]


def test_one_of_each_colour() -> None:
    hand = Counter(["blue-leader", "red-silk", "yellow-silk", "green-spice", "purple-spice", "purple-oil"])
    options = payments(hand, "COLOR5")
    assert ("blue-leader", "green-spice", "purple-spice", "red-silk", "yellow-silk") in options
    assert len(options) == 2, "purple can be paid with spice or oil; nothing else differs"


def test_payments_offer_no_duplicate_choices() -> None:
    hand = Counter({"blue-oil": 2, "red-oil": 2, "blue-leader": 3, "red-leader": 1})
    for requirement in ("ANY1", "SAME2", "SAME3", "SAME4", "FOURGOODS", "LEAD2", "COLOR3", "COLOR5"):
        options = payments(hand, requirement)
        assert len(options) == len(set(options))
        assert bool(options) == can_pay(hand, requirement)
    assert payments(hand, "SAME2") == [
        ("blue-oil", "blue-oil"),
        ("blue-oil", "red-oil"),
        ("red-oil", "red-oil"),
    ]


# --- movement ------------------------------------------------------------------------------------------------
def test_moving_pays_each_space_and_skips_occupied_ones() -> None:
    # Seat 0 at 4; 5 and 6 occupied; the next free space is 7 (LEAD2).
    state = situation(pieces=[4, 5, 6, 20], hands={0: ["red-leader", "blue-leader", "blue-oil"]})
    assert "move:p0:blue-leader+red-leader" in ids(state, 0)
    state.apply(0, "move:p0:blue-leader+red-leader")
    assert state.pieces[0] == 7
    assert state.gold[0] == 3 + 1, "the first piece on a chest space takes the chest"
    assert state.board_chests[7] == 0
    assert sorted(CARD_TYPES[c] for c in state.discard) == ["blue-leader", "red-leader"]
    # Next free space after 7 is 8 (COLOR5): not payable with one card; stop, or ballast past it.
    assert ids(state, 0) == ["stop", "ballast:p0"]


def test_illegal_action_names_the_legal_choices_and_changes_nothing() -> None:
    state = situation(pieces=[0, 1, 2, 3], hands={0: ["blue-oil"]})
    before = state.state_hash()
    with pytest.raises(IllegalAction) as info:
        state.apply(0, "move:p0:red-oil")
    assert "move:p0:blue-oil" in str(info.value) and "pass" in str(info.value)
    with pytest.raises(IllegalAction):
        state.apply(1, "pass")
    assert state.state_hash() == before


def test_rulebook_ballast_example() -> None:
    # Red gives up 1 gold, moves to scoring space 2 (10) without cards, then pays three spices (blue, blue,
    # red) to reach scoring space 5 (13): 11 and 12 are occupied.
    state = situation(pieces=[9, 11, 12, 20], hands={0: ["blue-spice", "blue-spice", "red-spice"]})
    assert "ballast:p0" in ids(state, 0)
    state.apply(0, "ballast:p0")
    assert state.pieces[0] == 10 and state.gold[0] == 2
    assert "ballast:p0" not in ids(state, 0), "ballast once per turn"
    state.apply(0, "move:p0:blue-spice+blue-spice+red-spice")
    assert state.pieces[0] == 13
    assert state.hands[0] == []


def test_no_ballast_to_the_front_of_the_caravan_or_without_gold() -> None:
    state = situation(pieces=[10, 1, 2, 3], hands={0: ["blue-oil"]})
    assert "ballast:p0" not in ids(state, 0), "no opposing piece beyond the target space"
    state = situation(pieces=[1, 2, 3, 9], gold=[0, 3, 3, 3])
    assert "ballast:p0" not in ids(state, 0), "ballast needs 1 gold"
    state = situation(pieces=[1, 2, 3, 9])
    assert "ballast:p0" in ids(state, 0)


def test_own_second_piece_does_not_allow_ballast() -> None:
    # Two players: seat 0 owns pieces 0 and 2. Only its own piece 2 is ahead of the target.
    state = situation(2, pieces=[1, 0, 9, 2])
    assert "ballast:p0" not in ids(state, 0)
    state.pieces = [1, 9, 0, 2]
    state._legal_cache = None
    assert "ballast:p0" in ids(state, 0)


def test_two_players_move_one_piece_per_turn() -> None:
    state = situation(2, pieces=[0, 1, 2, 3], hands={0: ["blue-oil", "red-oil", "green-fruit"]})
    assert {"move:p0:blue-oil", "move:p2:blue-oil"} <= set(ids(state, 0))
    state.apply(0, "move:p2:blue-oil")
    assert state.pieces[2] == 4
    assert all(":p0" not in i for i in ids(state, 0)), "after moving piece 2, piece 0 may not move"


def test_strategic_variant_switches_pieces_within_a_turn() -> None:
    state = situation(
        2, pieces=[0, 1, 3, 9], hands={0: ["blue-oil", "red-oil", "green-fruit"]}, strategic_two_player=True
    )
    state.apply(0, "move:p0:blue-oil")  # piece 0: 0 -> 2 (ANY1)
    assert state.pieces[0] == 2
    state.apply(0, "move:p2:green-fruit")  # piece 2: 3 -> 4 (ANY1)
    assert state.pieces[2] == 4
    state.apply(0, "ballast:p0")  # piece 0: 2 -> 3, freed by piece 2 (the other player's piece 3 is at 9)
    assert state.pieces[0] == 3
    assert not any(i.startswith("ballast") for i in ids(state, 0))


# --- drawing -------------------------------------------------------------------------------------------------
def test_draw_from_display_refills_and_is_public() -> None:
    state = situation(pieces=[0, 1, 2, 3])
    state.apply(0, "pass")
    display_types = sorted(CARD_TYPES[c] for c in state.display)
    take = f"take:{display_types[0]}"
    assert ids(state, 0) == ["draw:deck", *sorted({f"take:{t}" for t in display_types})]
    deck_before = len(state.deck)
    state.apply(0, take)
    assert len(state.display) == 5 and len(state.deck) == deck_before - 1
    assert state.known[0] == [display_types[0]]
    assert state.current_seats() == [1], "drawing ends the turn"


def test_empty_draw_pile_is_replaced_by_the_shuffled_discards() -> None:
    state = situation(pieces=[0, 1, 2, 3])
    state.discard = state.deck[:-1]
    state.deck = state.deck[-1:]
    count = len(state.discard)
    state._legal_cache = None
    state.apply(0, "pass")
    state.apply(0, "draw:deck")
    assert len(state.deck) == count and state.discard == []


# --- scoring -------------------------------------------------------------------------------------------------
def test_rulebook_intermediate_scoring_example() -> None:
    # Red reaches Kantshou (6), blue stands on 13 (5), green on 11 (3), orange on 5 (nothing).
    state = situation(
        pieces=[12, 13, 11, 5], hands={0: ["blue-oil", "red-spice", "green-silk", "purple-fruit", "red-oil"]}
    )
    state.apply(0, "move:p0:blue-oil+green-silk+purple-fruit+red-spice")
    assert state.pieces[0] == KANTSHOU
    assert ids(state, 0) == ["stop"], "reaching Kantshou ends the movement"
    state.apply(0, "stop")
    assert state.phase == "draw", "the player still draws a card"
    state.apply(0, "draw:deck")
    assert state.gold == [3 + 6, 3 + 5, 3 + 3, 3]
    assert state.pieces == [KANTSHOU, KANTSHOU, KANTSHOU, 5]
    assert state.kantshou_scored and state.current_seats() == [1]


def test_late_piece_entering_a_leg1_scoring_space_joins_kantshou_and_stops() -> None:
    state = situation(pieces=[8, KANTSHOU, KANTSHOU, KANTSHOU], hands={0: ["blue-oil", "red-oil"]})
    state.kantshou_scored = True
    state._legal_cache = None
    state.apply(0, "move:p0:blue-oil")  # 8 -> 9, a leg-1 scoring space
    assert state.pieces[0] == KANTSHOU and state.gold[0] == 3
    assert ids(state, 0) == ["stop"]


def test_daidu_ends_the_game_with_final_scoring_and_tie_break() -> None:
    state = situation(
        pieces=[27, 26, 25, 24],
        hands={0: ["blue-oil", "red-oil", "green-oil", "purple-oil"]},
        gold=[10, 11, 12, 13],
    )
    state.apply(0, "move:p0:blue-oil+green-oil+purple-oil+red-oil")
    assert state.pieces[0] == DAIDU and not state.is_over()
    state.apply(0, "stop")
    state.apply(0, "draw:deck")
    assert state.is_over()
    result = state.result()
    # Daidu pays 7, 26 pays 5, 25 pays 4, 24 pays 3: 17, 16, 16, 16.
    assert result.scores == [17, 16, 16, 16]
    assert result.ranks == [1, 2, 3, 4], "ties go to the piece closest to Daidu"
    assert result.reason == "completed"


def test_equal_gold_on_the_same_space_shares_the_rank() -> None:
    state = situation(pieces=[KANTSHOU, KANTSHOU, 3, 2], gold=[5, 5, 1, 1])
    state.kantshou_scored = True
    state.turns = TURN_CAP - 1
    state.apply(0, "pass")
    state.apply(0, "draw:deck")
    result = state.result()
    assert result.reason == "turn_cap"
    assert result.ranks == [1, 1, 3, 4]


def test_two_player_gold_counts_both_pieces() -> None:
    state = situation(
        2, pieces=[12, 13, 11, 5], hands={0: ["blue-oil", "red-spice", "green-silk", "purple-fruit"]}
    )
    state.apply(0, "move:p0:blue-oil+green-silk+purple-fruit+red-spice")
    state.apply(0, "stop")
    state.apply(0, "draw:deck")
    # Seat 0: Kantshou 6 + piece 2 on 11 (3); seat 1: piece 1 on 13 (5), piece 3 nothing.
    assert state.gold == [3 + 6 + 3, 3 + 5]


def test_loading_a_malformed_state_is_a_clear_error() -> None:
    from engine_service.games import InvalidOptions, state_from_json

    good = make("expedition-v1", 3, 5).to_json()
    for broken in (
        {**good, "state": {}},
        {k: v for k, v in good.items() if k != "rng"},
        {**good, "num_players": 9},
    ):
        with pytest.raises(InvalidOptions):
            state_from_json(broken)
