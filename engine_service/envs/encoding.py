"""The fixed-length observation vector of a seat's JSON observation, for learning code.

Engine layer, pure: no Django, no I/O, no RNG. It encodes exactly the observation it is given (a seat's
own, `GameState.observation(seat)`), so it can hold nothing that seat did not see.

The encoding (signed feature hashing of the flattened JSON, the same for every game):
- every leaf is named by its path: dict keys joined by `.`; a list of dicts or lists keeps the item's
  position (`players.1.gold`, up to `MAX_POSITIONS` positions, then `*`); a list of plain values is a bag
  (`hand.*`), so `["red-silk", "red-silk"]` counts twice;
- a number `v` (bools as 0/1) adds `sign(v) * log1p(|v|)` to the bucket of its path; a string or null adds
  1 to the bucket of `path=value`;
- a bucket is `blake2b(feature) mod size`, and a second hash bit gives the feature's sign (+1 or -1), so
  collisions cancel on average instead of piling up;
- the keys in `SKIPPED` (the running event log, which repeats history the rest of the view already holds)
  are left out.
The vector is float32, of length `size` (default `DEFAULT_SIZE`); every value is finite.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from functools import lru_cache
from hashlib import blake2b
from typing import Any

import numpy as np
import numpy.typing as npt

DEFAULT_SIZE = 512
MAX_POSITIONS = 8
SKIPPED = frozenset({"events", "log"})

FloatVector = npt.NDArray[np.float32]


def encode_observation(observation: Mapping[str, Any], size: int = DEFAULT_SIZE) -> FloatVector:
    """The observation as a float32 vector of length `size` (see the module docstring)."""
    vector = np.zeros(size, dtype=np.float32)
    for feature, value in flatten(observation):
        bucket, sign = _bucket(feature, size)
        vector[bucket] += sign * value
    return vector


def flatten(value: Any, path: str = "") -> Iterator[tuple[str, float]]:
    """The (feature, value) pairs of a JSON value, as the module docstring names them."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key not in SKIPPED:
                yield from flatten(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            nested = isinstance(item, (Mapping, list))
            label = str(position) if nested and position < MAX_POSITIONS else "*"
            yield from flatten(item, f"{path}.{label}")
    elif isinstance(value, bool):
        yield path, float(value)
    elif isinstance(value, (int, float)):
        number = float(value)
        yield path, math.copysign(math.log1p(abs(number)), number) if math.isfinite(number) else 0.0
    else:
        yield f"{path}={value}", 1.0


@lru_cache(maxsize=65536)
def _bucket(feature: str, size: int) -> tuple[int, float]:
    digest = int.from_bytes(blake2b(feature.encode(), digest_size=8).digest(), "little")
    return digest % size, 1.0 if (digest >> 63) & 1 else -1.0
