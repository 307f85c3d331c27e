"""House bots: in-process policies that see only a seat's observation and its legal actions.

`make_policy(name, seed)` builds one by name: the house levels random, greedy, search and search-strong
(weakest first, `levels`), or mcts / mcts:N (a fixed search budget, kept for existing records). Policies may use the game's spec to
sample states consistent with their observation (`GameSpec.sample_state`); they never see the true state.
"""

from engine_service.policies.base import Policy, make_policy, policy_names
from engine_service.policies.levels import LEVELS, SEARCHING_POLICIES, HouseLevel, house_level

__all__ = [
    "LEVELS",
    "SEARCHING_POLICIES",
    "HouseLevel",
    "Policy",
    "house_level",
    "make_policy",
    "policy_names",
]
