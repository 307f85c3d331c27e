"""A small imitation policy in plain numpy: score each legal action, learn the scores from recorded choices.

A decision is one dataset row (`caravan dataset`, format caravanserai-decisions/1): the seat's observation,
its legal actions and the action it chose. The model scores a legal action `a` in observation `o` as

    score(a, o) = u . phi(a) + phi(a)^T W x(o)

where `x(o)` is the engine's observation vector (`engine_service.envs.encoding`, `OBS_SIZE` floats plus a
constant 1) and `phi(a)` hashes the action's kind and `details` the same way (`ACTION_SIZE` floats: the
kind, each detail's value and the value as a category, a list's items and its length). Training maximises the log-probability of the
chosen action under the softmax over the legal ones (Adam, L2, seeded shuffling, the parameters
averaged over the second half of the steps); playing takes the best score. It reads only what a bot is given (its observation and legal actions), so it can be a bot.

Pure computation: numpy and the engine's encoding, no I/O but `save`/`load`, no RNG but the seeded one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from engine_service.envs.encoding import encode_observation

OBS_SIZE = 256
ACTION_SIZE = 256
Matrix = npt.NDArray[np.float32]


def observation_vector(observation: Mapping[str, Any]) -> Matrix:
    return np.append(encode_observation(observation, OBS_SIZE), np.float32(1.0)).astype(np.float32)


_action_cache: dict[str, Matrix] = {}


def action_vector(action: Mapping[str, Any]) -> Matrix:
    """phi(a): the action's kind and details, hashed (cached by kind and id: the id fixes the details)."""
    key = f"{action['kind']}|{action['id']}|{sorted(action.get('details', {}).items())!r}"
    cached = _action_cache.get(key)
    if cached is None:
        details = action.get("details", {})
        lengths = {f"{name}#": len(v) for name, v in details.items() if isinstance(v, list)}
        # each plain detail also as a category ("to=17"), so a destination is more than its magnitude
        named = {
            k: str(v) for k, v in details.items() if isinstance(v, (int, str)) and not isinstance(v, bool)
        }
        view = {"kind": action["kind"], "details": details, "lengths": lengths, "named": named}
        cached = encode_observation(view, ACTION_SIZE)
        if len(_action_cache) < 200_000:
            _action_cache[key] = cached
    return cached


@dataclass
class Decision:
    """One recorded decision as the model sees it."""

    x: Matrix  # observation vector (OBS_SIZE + 1)
    phi: Matrix  # legal actions x ACTION_SIZE
    chosen: int  # the chosen action's row in phi


def decisions_of(rows: Iterable[Mapping[str, Any]]) -> list[Decision]:
    """The rows as decisions (a row whose chosen action is not among its legal ones is an error)."""
    found = []
    for row in rows:
        legal = row["legal_actions"]
        ids = [a["id"] for a in legal]
        if row["action"] not in ids:
            raise ValueError(
                f"row {row['match']}/{row['step']}: {row['action']!r} is not one of its legal actions"
            )
        if len(legal) > 1:  # a forced move teaches nothing
            phi = np.stack([action_vector(a) for a in legal])
            found.append(Decision(observation_vector(row["observation"]), phi, ids.index(row["action"])))
    return found


@dataclass
class LinearPolicy:
    u: Matrix = field(default_factory=lambda: np.zeros(ACTION_SIZE, np.float32))
    w: Matrix = field(default_factory=lambda: np.zeros((ACTION_SIZE, OBS_SIZE + 1), np.float32))

    def scores(self, x: Matrix, phi: Matrix) -> Matrix:
        return phi @ self.u + phi @ (self.w @ x)

    def choose(self, observation: Mapping[str, Any], legal_actions: Sequence[Mapping[str, Any]]) -> str:
        """The legal action id with the best score (the first on a tie: deterministic)."""
        phi = np.stack([action_vector(a) for a in legal_actions])
        best = int(np.argmax(self.scores(observation_vector(observation), phi)))
        return str(legal_actions[best]["id"])

    def save(self, path: str) -> None:
        np.savez(path, u=self.u, w=self.w)

    @staticmethod
    def load(path: str) -> LinearPolicy:
        data = np.load(path)
        return LinearPolicy(data["u"].astype(np.float32), data["w"].astype(np.float32))


@dataclass(frozen=True)
class TrainSettings:
    epochs: int = 8
    rate: float = 0.003
    l2: float = 1e-4
    seed: int = 0
    average_from: float = 0.5  # the policy is the mean of the parameters over this last part of the steps


def train(
    decisions: Sequence[Decision], settings: TrainSettings = TrainSettings()
) -> tuple[LinearPolicy, list[float]]:
    """Fit by Adam on the softmax log-loss, returning the parameters averaged over the last steps (Polyak
    averaging: far steadier play than the last step's), and the mean loss of each epoch."""
    policy, mean = LinearPolicy(), LinearPolicy()
    params, averaged = [policy.u, policy.w], [mean.u, mean.w]
    moments = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
    rng = np.random.default_rng(settings.seed)
    total_steps = settings.epochs * len(decisions)
    first_averaged = int(total_steps * (1 - settings.average_from))
    losses, t = [], 0
    for _epoch in range(settings.epochs):
        total = 0.0
        for k in rng.permutation(len(decisions)):
            grads, loss = _gradients(policy, decisions[k])
            total += loss
            t += 1
            _adam_step(params, grads, moments, t, settings)
            if t > first_averaged:
                for a, p in zip(averaged, params, strict=True):
                    a += (p - a) / (t - first_averaged)
        losses.append(total / max(1, len(decisions)))
    return mean, losses


def _adam_step(
    params: list[Matrix],
    grads: list[Matrix],
    moments: list[tuple[Matrix, Matrix]],
    t: int,
    settings: TrainSettings,
) -> None:
    for p, g, (m, v) in zip(params, grads, moments, strict=True):
        g = g + settings.l2 * p
        m *= 0.9
        m += 0.1 * g
        v *= 0.999
        v += 0.001 * g * g
        p -= settings.rate * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)


def _gradients(policy: LinearPolicy, d: Decision) -> tuple[list[Matrix], float]:
    scores = policy.scores(d.x, d.phi)
    scores = scores - scores.max()
    p = np.exp(scores)
    p /= p.sum()
    loss = float(-np.log(p[d.chosen] + 1e-12))
    p[d.chosen] -= 1.0  # d loss / d score
    g_phi = p @ d.phi  # sum_a (p_a - y_a) phi(a)
    return [g_phi.astype(np.float32), np.outer(g_phi, d.x).astype(np.float32)], loss


def accuracy(policy: LinearPolicy, decisions: Sequence[Decision]) -> float:
    """How often the policy picks the recorded action (on decisions with a real choice)."""
    if not decisions:
        return 0.0
    hits = sum(int(np.argmax(policy.scores(d.x, d.phi))) == d.chosen for d in decisions)
    return hits / len(decisions)
