"""The built-in `random` bot."""

import numpy as np

from kdtourney.bots.base import Bot


class RandomBot(Bot):
    """Uniform over the legal actions."""

    name = "random"

    def __init__(self):
        self._rng = np.random.default_rng(0)

    def setup(self, seat, rules, seed):
        self._rng = np.random.default_rng(seed)

    def act(self, view):
        legal = view.legal_actions()
        return legal[int(self._rng.integers(len(legal)))]
