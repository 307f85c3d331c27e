"""Typed readers of environment variables, shared by the gateway, the workers and the Django settings.

Each reader takes the mapping to read (`os.environ`, or a test's dict), the variable's name and its
default: an unset or blank variable gives the default; a malformed one raises `EnvError`, whose message
names the variable, the value found and what is expected. The defaults themselves live with the setting
they belong to (a dataclass field, a settings line), each written once; none lives here.

Layer: configuration, pure. Imports nothing of the project, of Django or of gRPC, so every layer may use it;
no I/O beyond reading the mapping it is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TypeVar

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})
T = TypeVar("T")


class EnvError(ValueError):
    """A malformed environment variable; the message names it, its value and what is expected."""


def _raw(env: Mapping[str, str], name: str) -> str | None:
    """The variable's value stripped, or None when it is unset or blank."""
    value = env.get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def env_str(env: Mapping[str, str], name: str, default: str) -> str:
    """The variable as text (stripped), or `default` when unset or blank."""
    raw = _raw(env, name)
    return default if raw is None else raw


def env_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    """1/true/yes/on or 0/false/no/off (any case); anything else is an error, never silently false."""
    raw = _raw(env, name)
    if raw is None:
        return default
    word = raw.lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise EnvError(f"{name} must be one of 1/true/yes/on or 0/false/no/off, not {raw!r}")


def _parsed(env: Mapping[str, str], name: str, parse: Callable[[str], T], expected: str) -> T | None:
    """The variable parsed, None when unset or blank; EnvError saying what was `expected` otherwise."""
    raw = _raw(env, name)
    if raw is None:
        return None
    try:
        return parse(raw)
    except ValueError:
        raise EnvError(f"{name} must be {expected}, not {raw!r}") from None


def env_int(env: Mapping[str, str], name: str, default: int, *, minimum: int | None = None) -> int:
    """A whole number, at least `minimum` when one is given."""
    value = _parsed(env, name, int, "a whole number")
    if value is None:
        return default
    if minimum is not None and value < minimum:
        raise EnvError(f"{name} must be at least {minimum}, not {value}")
    return value


def env_float(
    env: Mapping[str, str], name: str, default: float, *, minimum: float | None = None, positive: bool = False
) -> float:
    """A finite number, at least `minimum` when one is given, above zero with `positive`."""
    value = _parsed(env, name, float, "a number")
    if value is None:
        return default
    if not math.isfinite(value):
        raise EnvError(f"{name} must be a finite number, not {env[name].strip()!r}")
    if minimum is not None and value < minimum:
        raise EnvError(f"{name} must be at least {minimum:g}, not {value:g}")
    if positive and value <= 0:
        raise EnvError(f"{name} must be positive, not {value:g}")
    return value


def env_list(env: Mapping[str, str], name: str, default: str) -> list[str]:
    """Comma-separated items, each stripped, blanks dropped; `default` is written the same way."""
    raw = _raw(env, name)
    return [item.strip() for item in (default if raw is None else raw).split(",") if item.strip()]
