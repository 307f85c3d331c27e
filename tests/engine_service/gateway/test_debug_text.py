"""A bot's debug text (`Decision.debug`) through the real gateway and relay into the referee's record: kept by
step for the bot's seat, cleaned and cut to 2048 bytes, never in the record's public JSON, and the game,
its actions and its hashes exactly as without it."""

from __future__ import annotations

import json

from engine_service.gateway.protocol import bot_pb2
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, run_match, verify
from engine_service.referee.debug_text import MAX_DEBUG_BYTES, clean_debug
from tests.engine_service.gateway.harness import GAME, PATIENT, RawBot, Stack, first_legal, wait_for_bot

LONG_REQUEST = 2  # the bot's second decision: it writes far more than the limit


def test_clean_debug_keeps_lines_drops_controls_and_cuts_at_the_limit() -> None:
    assert clean_debug("eval +12\n\tdepth 3\r\nnext\rok") == "eval +12\n\tdepth 3\nnext\nok"
    assert clean_debug("a\x00b\x1b[31mc\x7fd\x85e\u202ef\ud800g") == "ab[31mcdefg"
    long = "é" * 3000  # 6000 bytes of UTF-8
    cut = clean_debug(long)
    assert len(cut.encode()) <= MAX_DEBUG_BYTES and cut.startswith("é" * 900)
    assert cut.endswith("[... cut: 6000 bytes, over the 2048-byte limit]")
    assert clean_debug(cut) == cut and clean_debug("") == ""
    exact = "x" * MAX_DEBUG_BYTES
    assert clean_debug(exact) == exact


def _explaining(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
    text = f"step {request.step}: the first of {len(request.legal_actions)}\x07"
    if len(bot.requests) == LONG_REQUEST:
        text = "w" * 5000
    decision = bot_pb2.Decision(
        match_id=request.match_id,
        request_id=request.request_id,
        action_id=request.legal_actions[0].id,
        debug=text,
    )
    bot.send(bot_pb2.BotMessage(decision=decision))


def _play(stack: Stack, behaviour) -> MatchRecord:  # type: ignore[no-untyped-def]
    bot = RawBot(stack.gateway.target, "tok-raw2", behaviour=behaviour).connect()
    try:
        wait_for_bot(stack.registry, "raw2")
        house = HouseSeat(make_policy("random", 3), "house-3")
        return run_match(
            GAME, 2, 77, [RemoteSeat("raw2", "raw-two", stack.registry), house], time_control=PATIENT
        )
    finally:
        bot.close()


def test_a_bots_debug_text_reaches_the_record_for_its_owner_only(stack: Stack) -> None:
    record = _play(stack, _explaining)
    remote_steps = [step for step, (seat, _) in enumerate(record.actions) if seat == 0]
    assert record.faults == [] and sorted(record.debug) == remote_steps  # the house seat writes none
    first = remote_steps[0]
    assert (
        record.debug[first].startswith(f"step {first}: the first of ") and "\x07" not in record.debug[first]
    )
    long = record.debug[remote_steps[LONG_REQUEST - 1]]
    assert len(long.encode()) <= MAX_DEBUG_BYTES and long.startswith("w" * 1000)
    assert long.endswith("[... cut: 5000 bytes, over the 2048-byte limit]")
    public = record.to_json()
    assert "debug" not in public and "the first of" not in record.dumps()
    assert MatchRecord.loads(record.dumps()).debug == {}
    private = record.to_json(private=True)
    assert MatchRecord.from_json(json.loads(json.dumps(private))).debug == record.debug
    verify(record)  # the record replays to its hashes

    silent = _play(stack, first_legal)
    assert silent.debug == {}
    assert silent.actions == record.actions and silent.hashes == record.hashes
