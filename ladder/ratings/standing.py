"""How a ladder's leaderboard ranks and groups its bots, and the intervals shown beside a rating.

Pure: no Django, no I/O, no clock. The rules (also in README.md "Ladders and ratings" and the API schema):

- Ranking: by the conservative OpenSkill rating, mu - 3 sigma (`elo.conservative`), best first; equal
  conservative ratings share a rank (the next rank skips, "1, 1, 3"); the Elo rating is shown beside it
  but does not order the board. A bot with few games has a large sigma, so it starts low and climbs as
  its games make it certain.
- Provisional: a bot whose sigma is above its ladder's `provisional_sigma` (default 5.0, 0.6 of the
  starting sigma 25/3: a median 21, 24, 30 and 37 games at 2-5 players while every seat is new, 11-16 among
  settled opponents, `python -m bench provisional`) is ranked like any other but marked provisional: its
  place can still move a lot.
- Rating interval: mu +/- 2 sigma (Z_RATING = 2, about 95% if the skill estimate were normal).
- Statistical ties: walking down the ranking, a bot joins the tier of the bot above it when its rating
  interval overlaps the interval of that tier's first bot, and opens the next tier otherwise. Bots in one
  tier are not yet told apart from the tier's leader by the results so far.
- Win rates (a win is a first place, shared first places included) carry a 95% Wilson score interval
  (Z_WIN_RATE = 1.96), which stays inside 0-100% and is honest for few games. A row whose wins exceed its
  games has no interval (`counts_consistent`): inconsistent data is shown and reported, never fatal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ladder.ratings.elo import conservative

DEFAULT_PROVISIONAL_SIGMA = 5.0
Z_RATING = 2.0
Z_WIN_RATE = 1.96

RANKING_RULES = (
    "Ranked by the conservative OpenSkill rating mu - 3 sigma, best first; equal values share a rank; Elo "
    "is shown beside it but does not order the board. A bot whose sigma is above the ladder's "
    "provisional_sigma (default 5.0) is provisional: ranked, but its place can still move a lot. Walking "
    "down the ranks, a bot whose rating interval mu +/- 2 sigma overlaps the interval of its tier's first "
    "bot shares that tier (statistically tied: the results do not yet tell them apart). Win rates (first "
    "places) carry a 95% Wilson score interval."
)


def rating_interval(mu: float, sigma: float) -> tuple[float, float]:
    """The rating interval mu +/- Z_RATING sigma."""
    return mu - Z_RATING * sigma, mu + Z_RATING * sigma


def is_provisional(sigma: float, threshold: float) -> bool:
    return sigma > threshold


def counts_consistent(successes: float, trials: int) -> bool:
    """Whether a win count fits its game count (0 <= wins <= games); a rating row that does not (a bad
    import, a bug) is shown without a win rate interval and reported (admin warning, metric), never fatal."""
    return trials >= 0 and 0 <= successes <= trials


def wilson_interval(successes: float, trials: int, z: float = Z_WIN_RATE) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion: None without trials, and None for counts that do not fit
    (`counts_consistent`), since no proportion has more successes than trials."""
    if trials <= 0 or not counts_consistent(successes, trials):
        return None
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Placed:
    """One bot's place on the board: `index` into the input, its rank, tier and provisional mark."""

    index: int
    rank: int
    tier: int
    provisional: bool
    conservative: float
    low: float
    high: float


def place(skills: Sequence[tuple[float, float]], *, provisional_sigma: float) -> list[Placed]:
    """The board in display order for (mu, sigma) per bot; input order breaks exact ties (callers pass
    rating rows oldest first)."""
    order = sorted(range(len(skills)), key=lambda i: (-conservative(*skills[i]), i))
    placed: list[Placed] = []
    rank = tier = 0
    leader_low = leader_high = previous = math.nan
    for position, i in enumerate(order, start=1):
        mu, sigma = skills[i]
        value = conservative(mu, sigma)
        low, high = rating_interval(mu, sigma)
        if value != previous:
            rank = position
        if tier == 0 or high < leader_low or low > leader_high:
            tier += 1
            leader_low, leader_high = low, high
        previous = value
        placed.append(
            Placed(
                index=i,
                rank=rank,
                tier=tier,
                provisional=is_provisional(sigma, provisional_sigma),
                conservative=value,
                low=low,
                high=high,
            )
        )
    return placed
