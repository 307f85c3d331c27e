"""Dragonda's cards: each kind of Event effect and pass option, and every attack with its defences,
including the rule text's stay-still example (players A-D) and the DESERT / OASIS cards."""

from __future__ import annotations

from engine_service.games.dragonda.board import BOARD
from engine_service.games.dragonda.rules import DragondaState, card_slug
from tests.engine_service.games.dragonda.helpers import (
    QUIET_EVENT,
    at_turn,
    finish_turn,
    fresh,
    give,
    ids,
    rig_dice,
)

FEVER, FEVER2, DESERT, DESERT2 = "A11", "A12", "A01", "A02"
BANDITS, PIRATES, STORM, THIEF, SLANDER, CUSTOMS, FALSE_GUIDE = (
    "A04",
    "A07",
    "A09",
    "A13",
    "A15",
    "A17",
    "A19",
)
OASIS, ARMED_ESCORT, WATCHMAN, GOOD_FORTUNE, BRIBE = "D01", "D04", "D11", "D15", "D14"


# --- events ----------------------------------------------------------------------------------------------
def test_an_event_outside_its_zones_has_no_effect() -> None:
    state = fresh(2)
    a = state.order[0]
    at_turn(state, a, "E07")  # zone 2 only; Venice is zone I
    assert state.xp[a] == 0 and state.money[a] == 230 and state.deck[0] == "E07"
    assert state.log[-1]["effect"] == "none (zone)"


def test_fixed_event_and_the_papal_letter_option() -> None:
    state = fresh(2)
    a = state.order[0]
    at_turn(state, a, "E08")  # Pilgrims to Jerusalem, zones I and 2: fixed +5 XP
    assert state.xp[a] == 5
    state.passes[a]["PL"] = 1
    at_turn(state, a, "E03")  # Letter for the Patriarch: fixed +3 XP, or PL => +7 XP
    assert state.phase == "event_pass" and ids(state) == ["decline", "use:PL"]
    state.apply(a, "use:PL")
    assert state.xp[a] == 12 and state.passes[a]["PL"] == 0 and state.supply["PL"] == 9
    state.passes[a]["PL"] = 1
    at_turn(state, a, "E03")
    state.apply(a, "decline")
    assert state.xp[a] == 15 and state.passes[a]["PL"] == 1


def test_a_pass_cancels_a_result_after_the_roll() -> None:
    state = fresh(2)
    a = state.order[0]
    state.pos[a] = "DAM"  # zone 2
    state.passes[a] = {"PL": 1, "CT": 1}
    rig_dice(state, 5)
    at_turn(state, a, "E28")  # Marsh fever: 2-7 STILL, PL or CT cancels a 2-7 result
    assert state.phase == "event_cancel" and ids(state) == ["accept:roll", "cancel:PL", "cancel:CT"]
    state.apply(a, "cancel:CT")
    assert state.passes[a] == {"PL": 1, "CT": 0} and not state.turn["blocked"] and state.phase == "move"
    rig_dice(state, 5)
    at_turn(state, a, "E28")
    state.apply(a, "accept:roll")
    assert state.turn["blocked"] and state.phase == "trade", "a stopped player does not move this turn"
    rig_dice(state, 9)
    at_turn(state, a, "E28")
    assert state.xp[a] == 3 and state.phase == "move", "no cancel is offered outside 2-7"


def test_e01_band_overlap_reads_2_6_then_7_10() -> None:
    state = fresh(2)
    a = state.order[0]
    state.pos[a] = "DAM"
    rig_dice(state, 6)
    at_turn(state, a, "E01")
    assert (state.money[a], state.xp[a]) == (250, 0)
    rig_dice(state, 7)
    at_turn(state, a, "E01")
    assert (state.money[a], state.xp[a]) == (250, 5)


def test_losing_a_ship_at_sea_washes_ashore_keeping_three_goods() -> None:
    state = fresh(2)
    a = state.order[0]
    state.pos[a], state.means[a] = "S1", "ship"
    state.cargo[a].update({"TX": 4, "SP": 2})
    rig_dice(state, 2)
    at_turn(state, a, "E04")  # Tempest, sea zones A-D: 2-3 LOSE SHIP
    assert state.means[a] == "foot" and state.pos[a] == "VEN"
    assert state.current_seats() == [a] and ids(state) == ["drop:TX", "drop:SP"]
    state.apply(a, "drop:SP")
    state.apply(a, "drop:SP")  # then only Textiles are left: the last piece goes back without a decision
    assert state.cargo[a]["TX"] == 3 and sum(state.cargo[a].values()) == 3


def test_losing_a_horse_and_returning_half_the_goods() -> None:
    state = fresh(2)
    a = state.order[0]
    state.pos[a], state.means[a] = "SIV", "horse"
    rig_dice(state, 3)
    at_turn(state, a, "E06")  # Sandstorm: 2-4 LOSE H/C
    assert state.means[a] == "foot"
    state.pos[a], state.means[a] = "S1", "ship"
    state.cargo[a]["MG"] = 5
    rig_dice(state, 3)
    at_turn(state, a, "E05")  # Corsairs: 2-4 GOODS -1/2 (rounded up); one kind held: no decision needed
    assert state.cargo[a]["MG"] == 2


def test_an_unpayable_demand_costs_one_xp_never_below_zero() -> None:
    state = fresh(2)
    a = state.order[0]
    state.pos[a], state.money[a], state.xp[a] = "DAM", 10, 3
    rig_dice(state, 4)
    at_turn(state, a, "E07")  # The Mamluk Sultan: 2-6 pay 15
    assert (state.money[a], state.xp[a]) == (10, 2)
    state.xp[a] = 0
    rig_dice(state, 4)
    at_turn(state, a, "E07")
    assert state.xp[a] == 0


def test_plague_hits_every_player_in_its_zones() -> None:
    state = fresh(3)
    a, b, c = state.order
    state.pos[a], state.pos[b], state.pos[c] = "DAM", "ORM", "VEN"  # zones 2, 4 and I
    rig_dice(state, 8, 3)
    at_turn(state, a, "E40")  # 2-6 STILL, 7-12 +3 XP; the drawer rolls first, then in play order
    assert state.xp[a] == 3 and not state.turn["blocked"]
    assert state.still_pending[b] and state.xp[b] == 0, "for another player the stop aims at its next turn"
    assert not state.still_pending[c] and state.xp[c] == 0


# --- attacks and defences -----------------------------------------------------------------------------------
def attack(state: DragondaState, attacker: int, card: str, target: int, *, answer: str | None = None) -> None:
    give(state, attacker, card)
    state.turn["attacked"] = False
    state.stack = []
    state.phase = "cards"
    state._legal_cache = None
    state.apply(attacker, f"attack:{card_slug(BOARD.card_name[card])}:s{target}")
    if answer is not None:
        assert state.current_seats() == [target]
        state.apply(target, answer)


def test_stay_still_example_with_players_a_to_d() -> None:
    state = fresh(4)
    a, b, c, d = state.order
    state.means[c] = "horse"
    at_turn(state, a, FEVER)
    assert f"attack:FEVER:s{c}" in ids(state)
    state.apply(a, f"attack:FEVER:s{c}")  # C holds no card: the attack lands without asking C
    assert state.still_pending[c]
    finish_turn(state)
    give(state, b, FEVER2)
    at_turn(state, b, DESERT)
    assert f"attack:FEVER:s{c}" not in ids(state), "A already succeeded: a second stop is useless"
    state.apply(b, f"attack:DESERT:s{c}")
    assert state.means[c] == "foot" and state.still_pending[c], "DESERT's stop adds nothing"
    finish_turn(state)
    assert state.active == c and state.turn["blocked"] and state.phase != "move", "C's turn is blocked"
    finish_turn(state)
    assert state.blocked_last[c] and not state.still_pending[c]
    state.means[c] = "horse"
    give(state, d, FEVER)
    at_turn(state, d, DESERT2)
    assert f"attack:FEVER:s{c}" not in ids(state), "C was stopped this turn: never twice in a row"
    state.apply(d, f"attack:DESERT:s{c}")
    assert state.means[c] == "foot" and not state.still_pending[c]


def test_desert_is_cancelled_by_oasis_and_has_no_effect_on_a_ship() -> None:
    state = fresh(3)
    a, b, c = state.order
    state.means[b], state.means[c] = "horse", "ship"
    state.cargo[b].update({"TX": 3, "SP": 2})
    give(state, b, OASIS)
    at_turn(state, a, DESERT)
    assert f"attack:DESERT:s{b}" in ids(state) and f"attack:DESERT:s{c}" not in ids(state)
    state.apply(a, f"attack:DESERT:s{b}")
    assert state.current_seats() == [b] and ids(state) == ["accept:attack", "defend:OASIS"]
    state.apply(b, "defend:OASIS")
    assert state.means[b] == "horse" and not state.still_pending[b] and state.hands[b] == []
    assert state.deck[:2] == [OASIS, DESERT], "both cards go under the deck"
    assert state.current_seats() == [a] and "attack:" not in " ".join(ids(state)), "one attack per turn"
    give(state, b, WATCHMAN)
    attack(state, a, DESERT2, b, answer="accept:attack")
    assert state.means[b] == "foot" and state.still_pending[b]
    assert state.current_seats() == [b] and ids(state) == ["drop:TX", "drop:SP"], "keeps 3 goods, its choice"
    state.apply(b, "drop:TX")
    state.apply(b, "drop:TX")
    assert state.cargo[b] == {"TX": 1, "MG": 0, "SI": 0, "PO": 0, "SP": 2, "PS": 0}
    assert state.current_seats() == [a]


def test_bandits_pirates_storm_thief_and_good_fortune() -> None:
    state = fresh(2)
    a, b = state.order
    at_turn(state, a, QUIET_EVENT)
    attack(state, a, BANDITS, b)
    assert (state.money[a], state.money[b]) == (250, 210)
    state.pos[b], state.means[b] = "S1", "ship"
    attack(state, a, PIRATES, b)
    assert (state.money[a], state.money[b]) == (270, 190), "no goods: pirates take 20"
    state.cargo[b]["SI"] = 7
    attack(state, a, PIRATES, b)
    assert state.cargo[b]["SI"] == 3, "half the goods, rounded up"
    attack(state, a, STORM, b)
    assert state.money[b] == 180 and state.money[a] == 270 and state.still_pending[b]
    state.cargo[b]["SI"] = 0
    attack(state, a, THIEF, b)
    assert (state.money[a], state.money[b]) == (280, 170)
    state.still_pending[b] = False
    give(state, b, GOOD_FORTUNE)
    attack(state, a, FEVER, b, answer="defend:GOOD_FORTUNE")
    assert not state.still_pending[b]


def test_slander_customs_false_guide_and_unpayable_attacks() -> None:
    state = fresh(2)
    a, b = state.order
    at_turn(state, a, SLANDER)
    assert f"attack:SLANDER:s{b}" not in ids(state), "slander needs a target with experience"
    state.xp[b] = 1
    state._legal_cache = None
    state.apply(a, f"attack:SLANDER:s{b}")
    assert state.xp[b] == 0
    state.pos[b] = "L1"
    give(state, a, CUSTOMS)
    state.turn["attacked"] = False
    state._legal_cache = None
    assert f"attack:CUSTOMS_DUTY:s{b}" not in ids(state), "customs only in a city or port"
    state.pos[b] = "VEN"
    attack(state, a, CUSTOMS, b)
    assert state.money[b] == 215 and state.money[a] == 230
    state.money[b], state.xp[b] = 5, 2
    attack(state, a, BANDITS, b)
    assert (state.money[a], state.money[b], state.xp[b]) == (230, 5, 1), "cannot pay: 1 XP instead"
    state.means[b] = "horse"
    attack(state, a, FALSE_GUIDE, b)
    assert state.false_guide[b]
    at_turn(state, b, QUIET_EVENT)
    moves = [x for x in state.legal_actions(b) if x.kind == "move"]
    assert max(len(x.details["path"]) for x in moves) == 4 and not state.false_guide[b]


def test_hand_limit_forces_a_discard_and_discards_go_under_the_deck() -> None:
    state = fresh(2)
    a = state.order[0]
    give(state, a, OASIS, WATCHMAN, BRIBE)
    at_turn(state, a, ARMED_ESCORT)
    options = ids(state)
    assert "done:cards" not in options and options[0] == "discard:ARMED_ESCORT"
    state.apply(a, "discard:BRIBE")
    assert state.deck[0] == BRIBE and len(state.hands[a]) == 3 and ids(state)[0] == "done:cards"
    assert state.log[-1] == {"round": state.round, "event": "discard", "seat": a}, "the card stays hidden"
