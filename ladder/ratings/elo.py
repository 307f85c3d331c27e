"""Rating maths for multi-player matches: Elo by pairwise decomposition, and OpenSkill (Plackett-Luce).

Pure: no Django, no I/O, no clock, no randomness. The same inputs give the same floats, which is what lets
`ratings_recompute` reproduce the stored table exactly.

Elo (defaults: start 1500, K 32, scale 400). A match of N seats with final ranks (1 = best; tied seats share
a rank) is decomposed into its N(N-1)/2 pairs. For a pair (i, j):
    expected E_ij = 1 / (1 + 10 ** ((R_j - R_i) / scale)),
    actual   S_ij = 1 if rank_i < rank_j, 0.5 if equal (a tie counts as half), 0 otherwise,
    d_ij = K / (N - 1) * (S_ij - E_ij);  R_i += d_ij and R_j -= d_ij.
Dividing K by N - 1 makes one match move a rating by at most K whatever the player count, and each pair
changes its two ratings by opposite amounts, so the ratings of a match sum to the same total before and
after (up to float rounding). All deltas are computed from the ratings before the match.

OpenSkill: the `openskill` package's PlackettLuce model with the ladder's mu (default 25) and sigma
(default 25/3), every other parameter at the package default; one player per team, ranks as above. The
conservative rating is mu - 3 sigma.

Versions: a bot's new version (a version string it reports that differs from the one its rating on the
ladder was last earned with) starts from its parent's rating: Elo and mu kept, sigma widened to
sqrt(sigma^2 + (0.6 * start sigma)^2), at most the start sigma (at the defaults, 2.0 becomes 5.39: the new
version is provisional again and its results move it fast); or, when its owner chose "reset rating",
from the ladder's start values. Matches whose version is unknown ("") continue the current one.

Seasons: a bot's first game in a new season of its ladder starts from its last season's rating carried
over: Elo and mu kept, sigma widened to sqrt(sigma^2 + (0.5 * start sigma)^2), at most the start sigma (at
the defaults 2.0 becomes 4.63); its games and wins count again from zero. A new version at that game then
starts from the carried-over rating.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from openskill.models import PlackettLuce

DEFAULT_K = 32.0
DEFAULT_SCALE = 400.0
DEFAULT_START = 1500.0
DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3.0


@dataclass(frozen=True)
class RatingParams:
    """A ladder's rating parameters (fixed once it has rated a match)."""

    k: float = DEFAULT_K
    scale: float = DEFAULT_SCALE
    start: float = DEFAULT_START
    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA

    def validate(self) -> None:
        for name in ("k", "scale", "mu", "sigma"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"rating parameter {name} must be a positive number, not {value!r}")
        if not isinstance(self.start, (int, float)) or not math.isfinite(self.start):
            raise ValueError(f"rating parameter start must be a number, not {self.start!r}")


@dataclass(frozen=True)
class SeatRating:
    elo: float
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        return conservative(self.mu, self.sigma)


def conservative(mu: float, sigma: float) -> float:
    """The rating we are fairly sure a player has at least: mu - 3 sigma."""
    return mu - 3.0 * sigma


def _check_ranks(count: int, ranks: Sequence[int]) -> None:
    if count < 2:
        raise ValueError("a rated match needs at least two seats")
    if len(ranks) != count:
        raise ValueError(f"{count} seats need {count} ranks, got {len(ranks)}")
    if any(isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= count for r in ranks):
        raise ValueError(f"ranks must be whole numbers 1-{count}, got {list(ranks)}")


def elo_update(ratings: Sequence[float], ranks: Sequence[int], *, k: float, scale: float) -> list[float]:
    """New Elo ratings after one match (pairwise decomposition; see the module docstring)."""
    n = len(ratings)
    _check_ranks(n, ranks)
    factor = k / (n - 1)
    deltas = [0.0] * n
    for i in range(n):
        for j in range(i + 1, n):
            expected = 1.0 / (1.0 + 10.0 ** ((ratings[j] - ratings[i]) / scale))
            if ranks[i] < ranks[j]:
                actual = 1.0
            elif ranks[i] == ranks[j]:
                actual = 0.5
            else:
                actual = 0.0
            d = factor * (actual - expected)
            deltas[i] += d
            deltas[j] -= d
    return [ratings[i] + deltas[i] for i in range(n)]


@lru_cache(maxsize=16)
def _model(mu: float, sigma: float) -> PlackettLuce:
    return PlackettLuce(mu=mu, sigma=sigma)


def openskill_update(
    skills: Sequence[tuple[float, float]], ranks: Sequence[int], *, mu: float, sigma: float
) -> list[tuple[float, float]]:
    """New (mu, sigma) per seat after one match, with the PlackettLuce model of the ladder's mu/sigma."""
    _check_ranks(len(skills), ranks)
    model = _model(float(mu), float(sigma))
    teams = [[model.rating(mu=m, sigma=s)] for m, s in skills]
    rated = model.rate(teams, ranks=[float(r) for r in ranks])
    return [(float(team[0].mu), float(team[0].sigma)) for team in rated]


def rate_match(before: Sequence[SeatRating], ranks: Sequence[int], params: RatingParams) -> list[SeatRating]:
    """Both ratings after one match, seat by seat."""
    elos = elo_update([r.elo for r in before], ranks, k=params.k, scale=params.scale)
    skills = openskill_update([(r.mu, r.sigma) for r in before], ranks, mu=params.mu, sigma=params.sigma)
    return [SeatRating(elo=e, mu=m, sigma=s) for e, (m, s) in zip(elos, skills, strict=True)]


def initial(params: RatingParams) -> SeatRating:
    return SeatRating(elo=float(params.start), mu=float(params.mu), sigma=float(params.sigma))


VERSION_SIGMA_FRACTION = 0.6


def version_start(parent: SeatRating, params: RatingParams, *, reset: bool) -> SeatRating:
    """The rating a new version starts from (see the module docstring)."""
    if reset:
        return initial(params)
    widen = VERSION_SIGMA_FRACTION * params.sigma
    sigma = min(float(params.sigma), math.sqrt(parent.sigma**2 + widen**2))
    return SeatRating(elo=parent.elo, mu=parent.mu, sigma=sigma)


def version_change(
    before: SeatRating, params: RatingParams, *, games: int, current: str, new: str, reset: bool
) -> SeatRating | None:
    """The rating a seat's game starts from when version `new` begins on this ladder, else None.

    `current` is the version the rating was last earned with ("" unknown), `games` the rated games so far,
    `reset` whether the owner chose "reset rating" for `new` and this is its first game on the ladder.
    The first known version after unknown ones continues the rating unless reset."""
    if not new or new == current or games == 0:
        return None
    if not current and not reset:
        return None
    return version_start(before, params, reset=reset)


SEASON_SIGMA_FRACTION = 0.5


def season_carry_over(last: SeatRating, params: RatingParams) -> SeatRating:
    """The rating a bot starts a new season from (see the module docstring)."""
    widen = SEASON_SIGMA_FRACTION * params.sigma
    sigma = min(float(params.sigma), math.sqrt(last.sigma**2 + widen**2))
    return SeatRating(elo=last.elo, mu=last.mu, sigma=sigma)
