"""`linear-rl`: the linear policy trained by examples/rl/train.py, as a kdtourney bot.

Put this folder on the command line (`--bots-dir examples/rl/bots`); the weights are read from
linear_rl.npz beside this file (or the file given as `weights`).
"""

from pathlib import Path

import numpy as np
from _linear import N_WEIGHTS, best_actions

from kdtourney.env import PolicyBot

KDTOURNEY_FILES = ["linear_rl.npz"]   # shipped to the workers and part of the bot's identity
WEIGHTS = Path(__file__).resolve().parent / "linear_rl.npz"


class LinearRL(PolicyBot):
    """A linear policy over action features, trained by evolution strategies against random."""

    name = "linear-rl"

    def __init__(self, weights: str = str(WEIGHTS)):
        path = Path(weights)
        if not path.exists():
            raise FileNotFoundError(f"{path} not found: train it first with "
                                    "python examples/rl/train.py")
        self.weights = np.load(path)["weights"]
        if self.weights.shape != (N_WEIGHTS,):
            raise ValueError(f"{path} holds {self.weights.shape} weights, "
                             f"the policy has {N_WEIGHTS}")

    def policy(self, observation, action_mask):
        return best_actions(self.weights, observation[np.newaxis], action_mask[np.newaxis],
                            self.rules)[0]
