"""House bots: in-process policies that see only a seat's observation and its legal actions.

`make_policy(name, seed)` builds one by name: random, greedy, mcts. Policies may use the game's spec to
sample states consistent with their observation (`GameSpec.sample_state`); they never see the true state.
"""

from engine_service.policies.base import Policy, make_policy, policy_names

__all__ = ["Policy", "make_policy", "policy_names"]
