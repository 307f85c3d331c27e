"""Example bot written from the games' references alone (`/games/<id>/` on the ladder, or the JSON Schemas
at `/api/v1/games/<id>/schema/`): it knows each game only by the action kinds and `details` fields the
reference documents, and plays a simple plan in all four games. Run:
python reference_bot.py --token TOKEN [--target HOST:PORT].

- Expedition: move when a `move` is legal, paying the fewest cards (`details.pay`) for the furthest space
  (`details.to`); else take a card from the display (`take:`) rather than drawing blind; end otherwise.
- The Voyages of Marco Polo, Marco Polo II: prefer fulfilling and taking contracts, then travelling
  (`move`, the longest trip it can pay: `details.steps`), then placing dice, then ending the turn.
- Dragonda: sell what it carries at the best total (`details.total`), buy the cheapest goods, keep moving
  (the longest `move`), and accept what it cannot cancel.
Anything else: the first legal action, which the references say is always safe.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from caravanserai_bot import Bot, BotRefused, LegalAction, run

# Action kinds by preference, per game, as the references name them.
PREFERENCES = {
    "voyages-v1": ["contract", "contracts", "move", "place", "bazaar", "good", "goods", "end"],
    "mp2-v1": ["contracts", "contract", "move", "post", "place", "offer", "seal", "caravan", "end"],
    "dragonda-v1": ["sell", "buy", "move", "keep", "trade_done", "cards_done", "transport_done"],
}


def _number(action: LegalAction, field: str) -> float:
    value = action.details.get(field, 0)
    return float(value) if isinstance(value, (int, float)) else 0.0


def expedition(legal: Sequence[LegalAction]) -> str:
    moves = [a for a in legal if a.kind == "move"]
    if moves:
        return min(moves, key=lambda a: (len(a.details.get("pay", [])), -_number(a, "to"))).id
    takes = [a for a in legal if a.kind == "draw" and a.details.get("source") == "display"]
    return (takes or list(legal))[0].id


# Within a kind, which of its actions to play (the best first).
BEST_OF_KIND: dict[str, Callable[[LegalAction], float]] = {
    "move": lambda a: -_number(a, "steps"),
    "sell": lambda a: -_number(a, "total"),
    "buy": lambda a: _number(a, "price"),
}


def by_preference(game_id: str, legal: Sequence[LegalAction]) -> str:
    for kind in PREFERENCES.get(game_id, []):
        of_kind = [a for a in legal if a.kind == kind]
        if of_kind:
            return min(of_kind, key=BEST_OF_KIND.get(kind, lambda a: 0.0)).id
    return legal[0].id


class ReferenceBot(Bot):
    name = "reference-example"
    version = "1"

    def __init__(self, max_concurrent_matches: int = 1) -> None:
        self.max_concurrent_matches = max_concurrent_matches

    def decide(self, observation: dict[str, Any], legal_actions: Sequence[LegalAction]) -> str:
        game_id = str(observation.get("game_id"))
        if game_id == "expedition-v1":
            return expedition(legal_actions)
        return by_preference(game_id, legal_actions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default=os.environ.get("CARAVANSERAI_TARGET", "127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("CARAVANSERAI_TOKEN", ""))
    parser.add_argument("--concurrent", type=int, default=1, help="matches at once")
    parser.add_argument("--matches", type=int, default=None, help="exit after this many matches")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        run(ReferenceBot(args.concurrent), args.target, args.token, max_matches=args.matches)
    except BotRefused as exc:
        logging.error("refused: %s", exc)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
