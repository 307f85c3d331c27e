"""Dragonda in words: every event and action of seeded games as a clean sentence, every event kind of the
rules covered, the board's drawing data, rounds and turns for a replay's jumps, and the final screen."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine_service.games.base import GameResult
from engine_service.games.dragonda import SPEC, describe
from engine_service.games.dragonda.board import BOARD
from engine_service.games.dragonda.rules import DragondaState
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, run_match
from engine_service.referee.frames import frames
from tests.engine_service.games.dragonda.helpers import fresh

GAME = Path(__file__).parents[4] / "engine_service" / "games" / "dragonda"
pytestmark = pytest.mark.xdist_group("dragonda_seeded_games")  # the module's games are played once per run
# the modules that log events
RULES = tuple(GAME / f"{m}.py" for m in ("rules", "setup_state", "actions", "automaton", "pending"))
GAMES = [(players, policy, seed) for players in (2, 3, 4) for policy in ("random", "greedy") for seed in (1,)]


def clean(text: str) -> None:
    """A sentence for people: words, no JSON, no identifiers, no None."""
    assert text and text.strip() == text, text
    for bad in ("{", "[", "_", "None"):
        assert bad not in text, text


def played(
    players: int, policy: str, seed: int, options: dict[str, int]
) -> Iterator[tuple[DragondaState, int, str]]:
    """Every decision of one seeded game: (state before the action, seat, action id)."""
    state = SPEC.new_state(players, seed, options)
    assert isinstance(state, DragondaState)
    bots = [make_policy(policy, seed=seed * 10 + s) for s in range(players)]
    while not state.is_over():
        seat = state.current_seats()[0]
        action = bots[seat].choose(state.observation(seat), state.legal_actions(seat))
        yield state, seat, action
        state.apply(seat, action)
    yield state, -1, ""


@pytest.fixture(scope="module")
def games() -> dict[str, object]:
    """Seeded games of every player count, policy and option variant, described as they are played."""
    kinds: set[str] = set()
    action_kinds: set[str] = set()
    sentences: set[str] = set()
    actions: dict[str, str] = {}
    finals: list[DragondaState] = []
    for players, policy, seed in GAMES:
        for options in SPEC.option_variants(players):
            last = (0, -1)
            for state, seat, action_id in played(players, policy, seed, options):
                view = state.spectator_view()
                for event in SPEC.events_of(view):
                    kinds.add(str(event["event"]))
                    sentences.add(SPEC.describe_event(event))
                progress = SPEC.progress(state)
                assert progress.round is not None and progress.turn is not None
                assert (progress.round, progress.turn) >= last, "rounds and turns never go back"
                assert progress.round >= last[0]
                last = (progress.round, progress.turn)
                if seat >= 0:
                    kind = next(a.kind for a in state.legal_actions(seat) if a.id == action_id)
                    action_kinds.add(kind)
                    actions.setdefault(f"{kind} {action_id}", SPEC.describe_action(state, seat, action_id))
            assert last[1] >= players * 10, "the turn counter moves on with the game"
            finals.append(state)
    return {
        "kinds": kinds,
        "sentences": sentences,
        "actions": actions,
        "action_kinds": action_kinds,
        "finals": finals,
    }


def test_every_event_of_seeded_games_is_a_clean_sentence(games: dict[str, object]) -> None:
    sentences = games["sentences"]
    assert isinstance(sentences, set) and len(sentences) > 200
    for text in sentences:
        clean(text)
        assert text.startswith(("seat ", "play order")) or " from seat " in text, text


def test_every_event_kind_of_the_rules_is_described() -> None:
    code = "".join(path.read_text(encoding="utf-8") for path in RULES)
    kinds = set(re.findall(r'"event": "([a-z_]+)"', code)) | {"buy", "sell"}  # trade logs use the action kind
    assert kinds == set(describe.EVENT_WORDS)
    for kind, example in EXAMPLES.items():
        text = describe.describe_event(example)
        clean(text)
        assert text.startswith("seat ") or kind in ("play_order", "attack_hits"), text
    assert set(EXAMPLES) == kinds


EXAMPLES: dict[str, dict[str, object]] = {
    "play_order": {"event": "play_order", "round": 0, "order": [2, 0, 1], "rolls": [[7], [4], [9, 3]]},
    "move": {"event": "move", "round": 3, "seat": 1, "to": "L3", "steps": 4},
    "buy": {"event": "buy", "round": 0, "seat": 0, "good": "MG", "quantity": 1, "total": 10, "place": "VEN"},
    "sell": {
        "event": "sell",
        "round": 9,
        "seat": 0,
        "good": "SP",
        "quantity": 5,
        "total": 105,
        "place": "CAM",
    },
    "event_result": {
        "event": "event_result",
        "round": 4,
        "seat": 2,
        "card": "E03",
        "roll": None,
        "result": "fixed",
    },
    "draw_event": {"event": "draw_event", "round": 4, "seat": 2, "card": "E16", "effect": "none (zone)"},
    "pay": {"event": "pay", "round": 4, "seat": 2, "amount": 20, "to": 1, "why": "BANDITS"},
    "unpaid": {"event": "unpaid", "round": 4, "seat": 0, "amount": 30, "why": "upkeep at sea", "xp": -1},
    "return_goods": {
        "event": "return_goods",
        "round": 4,
        "seat": 0,
        "good": "PS",
        "count": 2,
        "why": "keep_three",
    },
    "buy_means": {"event": "buy_means", "round": 4, "seat": 0, "means": "ship", "gave_up": "caravan"},
    "draw_adventure": {"event": "draw_adventure", "round": 4, "seat": 3},
    "discard": {"event": "discard", "round": 4, "seat": 3},
    "attack": {"event": "attack", "round": 4, "seat": 3, "card": "FALSE GUIDE", "target": 0},
    "attack_hits": {"event": "attack_hits", "round": 4, "seat": 0, "card": "FALSE GUIDE", "attacker": 3},
    "defend": {"event": "defend", "round": 4, "seat": 0, "card": "GOOD FORTUNE", "attack": "THIEF"},
    "buy_pass": {"event": "buy_pass", "round": 4, "seat": 0, "pass": "CT"},
    "use_pass": {"event": "use_pass", "round": 4, "seat": 0, "card": "E02", "pass": "CT", "xp": 10},
    "cancel_with_pass": {
        "event": "cancel_with_pass",
        "round": 4,
        "seat": 0,
        "card": "E27",
        "pass": "CT",
        "roll": 5,
    },
    "first_arrival": {"event": "first_arrival", "round": 40, "seat": 1, "place": "NAG", "xp": 5},
    "lose_means": {"event": "lose_means", "round": 40, "seat": 1, "means": "ship", "why": "E22"},
    "washed_ashore": {"event": "washed_ashore", "round": 40, "seat": 1, "to": "ZAI"},
    "passage": {"event": "passage", "round": 40, "seat": 1, "from": "MAN", "to": "ZAI"},
    "blocked": {"event": "blocked", "round": 40, "seat": 1},
    "give_up": {"event": "give_up", "round": 40, "seat": 1, "means": "horse"},
    "victory": {"event": "victory", "round": 90, "seat": 1},
}


def test_sentences_name_places_goods_cards_and_money() -> None:
    say = describe.describe_event
    assert say(EXAMPLES["sell"]) == "seat 0 sold 5 spices for 105 zecchini in Cambay"
    assert say(EXAMPLES["buy"]) == "seat 0 bought 1 manufactured good for 10 zecchini in Venezia"
    assert say(EXAMPLES["pay"]) == "seat 2 paid 20 zecchini to seat 1 for the BANDITS attack"
    assert say(EXAMPLES["draw_event"]) == (
        "seat 2 drew the Event E16 'The monsoon': no effect outside zones 5, 7, 8, D, E, F"
    )
    assert say(EXAMPLES["event_result"]) == "seat 2 resolved E03 'Letter for the Patriarch': +3 XP"
    rolled = {"event": "event_result", "seat": 1, "card": "E01", "roll": 8, "result": "7-10"}
    assert say(rolled) == "seat 1 rolled 8 on E01 'The ambushed prince': +5 XP"
    assert say(EXAMPLES["passage"]) == "seat 1 took the passage from Manila to Zaiton"
    assert say(EXAMPLES["move"]) == "seat 1 moved to the road between Ragusa and Tessalonica (L3) (4 spaces)"
    assert "Adventure card" in say(EXAMPLES["draw_adventure"]) and "card" in say(EXAMPLES["discard"])


def test_moves_say_where_from_and_by_what_means_the_log_shows() -> None:
    """The start is the seat's previous arrival in the log (Venice after the play order); the means are the
    view's, walked back over the means changes logged after the move."""
    view = {
        "players": [
            {"seat": 0, "means": "horse"},
            {"seat": 1, "means": "foot"},
            {"seat": 2, "means": "ship"},
        ],
        "log": [
            {"event": "play_order", "order": [2, 0, 1], "rolls": [[7], [4], [9]]},
            {"event": "move", "seat": 2, "to": "ORM", "steps": 10},
            {"event": "move", "seat": 0, "to": "TES", "steps": 6},
            {"event": "move", "seat": 2, "to": "CAM", "steps": 3},
            {"event": "sell", "seat": 2, "good": "SP", "quantity": 5, "total": 105, "place": "CAM"},
            {"event": "give_up", "seat": 0, "means": "caravan"},
            {"event": "buy_means", "seat": 0, "means": "horse", "gave_up": "foot"},
        ],
    }
    texts = [SPEC.describe_event(e) for e in SPEC.events_of(view)]
    assert texts[1] == "seat 2 sailed from Venezia to Ormuz (10 spaces)"
    assert texts[2] == "seat 0 led a Caravan from Venezia to Tessalonica (6 spaces)"
    assert texts[3] == "seat 2 sailed from Ormuz to Cambay (3 spaces)"
    assert texts[6] == "seat 0 bought a Horse for 6 zecchini"
    assert SPEC.events_of({"log": []}) == [] and SPEC.events_of({}) == []


def test_every_action_played_has_words(games: dict[str, object]) -> None:
    actions = games["actions"]
    assert isinstance(actions, dict)
    kinds = games["action_kinds"]
    assert isinstance(kinds, set) and {"move", "buy", "sell", "attack", "discard", "defence", "keep"} <= kinds
    for key, text in actions.items():
        clean(text)
        assert text != key.split(" ", 1)[1], key


def test_actions_in_words() -> None:
    state = fresh(3)
    state.hands[state.active] = ["D15", "A04"]
    state.phase = "cards"
    seat = state.active
    ids = [a.id for a in state.legal_actions(seat)]
    assert "discard:GOOD_FORTUNE" in ids
    assert SPEC.describe_action(state, seat, "discard:GOOD_FORTUNE") == "discards GOOD FORTUNE under the deck"
    target = next(i for i in ids if i.startswith("attack:BANDITS:"))
    assert SPEC.describe_action(state, seat, target).startswith(f"plays BANDITS against seat {target[-1]}")
    assert SPEC.describe_action(state, seat, "done:cards") == "keeps the Adventure cards in hand"
    # an older record's ids are told as the actions they now name
    assert SPEC.describe_action(state, seat, "done") == "keeps the Adventure cards in hand"
    assert SPEC.describe_action(state, seat, "discard:GOOD FORTUNE") == "discards GOOD FORTUNE under the deck"
    state.phase = "move"
    state.turn["movement"] = 6
    state._legal_cache = None  # the situation was changed by hand
    assert SPEC.describe_action(state, seat, "move:TES") == "walks from Venezia to Tessalonica (6 spaces)"
    assert SPEC.describe_action(state, seat, "stop") == "does not move (stays in Venezia)"
    state.phase = "trade"
    state._legal_cache = None
    assert SPEC.describe_action(state, seat, "buy:MG:2").startswith("buys 2 manufactured goods for ")
    assert SPEC.describe_action(state, seat, "buy:PL") == "buys a Papal Letter for 5 zecchini"
    assert SPEC.describe_action(state, seat, "not-an-action") == "not-an-action"


def test_board_has_a_point_for_every_space_and_the_graph() -> None:
    board = SPEC.board()
    assert board is not None
    spaces = {s["id"]: s for s in board["spaces"]}
    assert len(spaces) == 166 and all(len(s["xy"]) == 2 for s in spaces.values())
    width, height = board["extent"]
    assert all(0 <= s["xy"][0] <= width and 0 <= s["xy"][1] <= height for s in spaces.values())
    assert (len(board["land_edges"]), len(board["sea_edges"])) == (121, 72)
    assert spaces["VEN"]["name"] == "Venezia" and spaces["VEN"]["port"] and spaces["PEC"]["required"]
    # West to east and north to south as on the globe: Venice, Beijing, Palembang.
    assert spaces["VEN"]["xy"][0] < spaces["ORM"]["xy"][0] < spaces["PEC"]["xy"][0] < spaces["NAG"]["xy"][0]
    assert spaces["SAR"]["xy"][1] < spaces["DAM"]["xy"][1] < spaces["COL"]["xy"][1] < spaces["PAL"]["xy"][1]
    assert board["adventures"]["D15"]["name"] == "GOOD FORTUNE" and board["events"]["E01"]["bands"]
    assert set(BOARD.xy) == set(spaces)


def test_progress_counts_rounds_and_turns(games: dict[str, object]) -> None:
    finals = games["finals"]
    assert isinstance(finals, list)
    for state in finals:
        progress = SPEC.progress(state)
        n = state.num_players
        if state.end_reason == "turn_cap":
            assert progress == describe.Progress(round=state.round_cap, turn=state.round_cap * n + n - 1)
    state = SPEC.new_state(2, 3)
    assert SPEC.progress(state).round == 0 and SPEC.progress(state).turn == 0


def test_result_names_every_seat_and_the_tie_break() -> None:
    state = fresh(3)
    state.phase, state.end_reason = "over", "turn_cap"
    state.visited = [["DAM", "ORM"], ["DAM", "ORM"], ["DAM"]]
    state.xp = [20, 30, 40]
    lines = SPEC.describe_result(state, state.result())
    assert lines[0].startswith(
        "1st: seat 1 with 2 points (2 of 6 conditions: 30 XP of the 51 needed, cities visited Damasco"
    )
    assert lines[1].startswith("2nd: seat 0") and lines[2].startswith("3rd: seat 2 with 1 points")
    assert "seat 1 ranks above seat 0 on the tie-break: more XP (30 against 20)" in lines
    state.xp = [30, 30, 40]
    state.pos = ["RAG", "VEN", "VEN"]
    lines = SPEC.describe_result(state, state.result())
    assert "seat 1 ranks above seat 0 on the tie-break: fewer steps to Venezia (0 against 3)" in lines
    state.pos = ["VEN", "VEN", "VEN"]
    state.money = [10, 12, 0]
    assert (
        "seat 1 ranks above seat 0 on the tie-break: more zecchini (12 against 10)"
        in SPEC.describe_result(state, state.result())
    )
    state.money = [10, 10, 0]
    lines = SPEC.describe_result(state, state.result())
    assert "seats 0 and 1 are equal on points, XP, steps to Venezia and zecchini and share the rank" in lines
    for line in lines:
        clean(line)
    assert all(
        any(line.startswith(f"{r}: seat {s} ") for line in lines for r in ("1st", "3rd")) for s in range(3)
    )


def test_result_of_a_won_game_counts_the_victory() -> None:
    state = fresh(2)
    state.phase, state.end_reason, state.winner = "over", "completed", 0
    state.visited = [["DAM", "ORM", "PEC", "SAM", "YUN"], []]
    state.xp = [51, 3]
    lines = SPEC.describe_result(state, GameResult.from_keys(state.scores(), state.tiebreaks()))
    assert lines[0].startswith(
        "1st: seat 0 with 7 points (6 of 6 conditions, +1 for the victory: 51 XP of the 51 needed"
    )
    assert lines[1].startswith("2nd: seat 1 with 0 points") and len(lines) == 2


def test_replay_frames_carry_the_words() -> None:
    seats = [HouseSeat(make_policy("greedy", seed=s)) for s in range(2)]
    record = run_match("dragonda-v1", 2, 5, seats, {"round_cap": 50})
    shown = frames(record, start=record.steps - 30, count=31)
    assert shown[-1]["result"] is not None and len(shown[-1]["result"]["lines"]) >= 2
    for frame in shown:
        assert frame["round"] >= 1 and frame["log"]
        for line in frame["log"]:
            clean(line["text"])
        if frame["next_action"]:
            clean(frame["next_action"]["text"])
