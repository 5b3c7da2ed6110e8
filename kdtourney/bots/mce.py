"""`mce`: flat Monte Carlo evaluation, the strongest method of Gedda, Lagerkvist and Butler
(2018)."""

import numpy as np

from kdtourney.bots import kernels as BK
from kdtourney.bots.greedy import (
    TurnBot,
    check_budget,
    check_choice,
    check_number,
    run_budget,
    searched_move,
    time_budget,
)


class MCEBot(TurnBot):
    """Flat Monte Carlo: playouts spread equally over every whole-turn move, best average wins.

    A move is a whole turn: a (placement, claim) combination at a place decision, a claim at a claim
    decision the bot did not plan (the first row). Playout i goes to move i mod n (equal
    allocation, round-robin) and starts from a fresh determinization: the unseen dominoes
    reshuffled with the bot's seeded rng, so the real deck order is never used.

    iterations: playouts per decision (or time: seconds per decision, which wins when given).
    policy: random | greedy | player-greedy (own moves fast greedy, opponents random) |
    full-greedy (every player as `greedy` plays; 6-7x the cost of greedy playouts).
    measure: wdl | score | ratio (own / (own + best opponent)).
    candidates: 0 = every legal move (the study's MCE); k > 0 = only the k best moves by the full
    greedy's evaluation, so that a small budget is not spread over hopeless placements.
    """

    name = "mce"

    def __init__(self, iterations=1000, time=None, policy="player-greedy", measure="ratio",
                 candidates=0):
        super().__init__()
        self.iterations, self.time = check_budget(iterations, time)
        self.policy = check_choice("policy", policy, BK.POLICIES)
        self.measure = check_choice("measure", measure, BK.MEASURES)
        self.candidates = check_number("candidates", candidates, 0, integer=True)
        self.last_playouts = 0

    def decide(self, view):
        return searched_move(view, self._work, self.candidates, self._search)

    def _search(self, view, cand):
        bits, bbox, st = view.arrays
        n = len(cand)
        sums = np.zeros(n, dtype=np.float64)
        visits = np.zeros(n, dtype=np.int64)
        me = view.player

        def step(start, count):
            BK.mce_run(bits, bbox, st, me, cand.places, cand.claims, n, start, count,
                       self.policy, self.measure, self._rng, sums, visits)

        self.last_playouts = run_budget(step, self.iterations, time_budget(self.time, view), n)
        mean = np.where(visits > 0, sums / np.maximum(visits, 1), -1.0)
        # best mean; ties (and unvisited moves) go to the better greedy key, then the first
        order = np.lexsort((-np.arange(n), cand.keys, mean))
        return int(order[-1])
