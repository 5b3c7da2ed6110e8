"""Kingdomino for learning agents, on the engine and under the bots.

- `BatchEnv`: N games stepped at once in compiled code (numpy only).
- `pettingzoo_env(...)`: a PettingZoo AEC environment; `kdtourney.env.openspiel`: the OpenSpiel
  game `python_kingdomino`. Both need the extra: `pip install 'kdtourney[rl]'`.
- `PolicyBot`, `OpenSpielBot`: a trained agent as a kdtourney `Bot`.
- `encoding`: the observation, plane by plane (docs/observation.md).

The engine knows nothing of this package.
"""

from kdtourney.env.batch import BatchEnv
from kdtourney.env.encoding import N_ACTIONS, observation_size, observe_view

__all__ = ["BatchEnv", "N_ACTIONS", "observation_size", "observe_view", "pettingzoo_env",
           "PolicyBot", "OpenSpielBot"]

_EXTRA = "pip install 'kdtourney[rl]'"


def __getattr__(name):
    # on first use only: PettingZoo and OpenSpiel are an extra, and the policy bots import
    # kdtourney.bots (the registry and every bot), which a learning loop does not need
    if name == "pettingzoo_env":
        try:
            from kdtourney.env.aec import pettingzoo_env
        except ImportError as exc:
            raise ImportError(f"kdtourney.env.pettingzoo_env needs PettingZoo ({_EXTRA}): "
                              f"{exc}") from exc
        return pettingzoo_env
    if name in ("PolicyBot", "OpenSpielBot"):
        from kdtourney.env import policy
        return getattr(policy, name)
    raise AttributeError(f"module 'kdtourney.env' has no attribute {name!r}")
