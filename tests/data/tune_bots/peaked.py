"""A bot whose strength is a known function of its parameters, for the tune's tests: at each
decision it plays greedy with probability q = qx * qn, else a uniformly random legal action, where
qx = 1 - |x - 0.7| / 3 and qn = 1 - |n - 6| / 10 (each at least 0.05): strongest at x = 0.7, n = 6,
and weaker in proportion to the distance from there."""

import numpy as np

from kdtourney.bots import Bot
from kdtourney.bots.greedy import GreedyBot

X_BEST, N_BEST = 0.7, 6


class Peaked(Bot):
    name = "peaked"

    def __init__(self, x: float = 0.0, n: int = 0):
        self.q = max(0.05, 1 - abs(x - X_BEST) / 3) * max(0.05, 1 - abs(n - N_BEST) / 10)
        self.greedy = GreedyBot()

    def setup(self, seat, rules, seed):
        self.rng = np.random.default_rng(seed)
        self.greedy.setup(seat, rules, seed)

    def act(self, view):
        if self.rng.random() < self.q:
            return self.greedy.act(view)
        legal = view.legal_actions()
        return legal[int(self.rng.integers(len(legal)))]
