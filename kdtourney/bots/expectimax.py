"""`expectimax`: depth-limited expectimax over the next row with a static evaluation."""

import numpy as np

from kdtourney.bots import _kernels as BK
from kdtourney.bots.greedy import TurnBot, candidates, check_budget, check_number, run_budget
from kdtourney.engine._kernels import rand_u64


class ExpectimaxBot(TurnBot):
    """Expectimax over the next row (sampled chance nodes), static evaluation with potential.

    The moves are whole turns, the `width` best (placement, claim) combinations by the full
    greedy's evaluation. A move's value is the expected best static evaluation after placing the
    claimed domino (depth 1), or after placing it and then the best domino the bot can still get
    from a sampled next row (depth 2: chance nodes are next rows drawn from the unseen dominoes,
    with the kings ahead of the bot taking random ones first). The static evaluation counts points
    with the rules' bonuses, plus 0.3 per crown of a territory and empty square next to it, minus 4
    per one-square hole. All moves are valued on the same sampled outcomes.

    iterations: sampled chance outcomes per decision, over all moves (or time: seconds per
    decision, which wins when given). depth: 1 or 2. width: moves considered (0 = all).
    """

    name = "expectimax"

    def __init__(self, iterations=200, time=None, depth=2, width=8):
        super().__init__()
        self.iterations, self.time = check_budget(iterations, time)
        if isinstance(depth, bool) or depth not in (1, 2):
            raise ValueError(f"depth must be 1 or 2, not {depth!r}")
        self.depth = depth
        self.width = check_number("width", width, 0, integer=True)

    def decide(self, view):
        cand = candidates(view, self._work).top(self.width)
        best = 0 if len(cand) == 1 else self._search(view, cand)
        return int(cand.places[best]), int(cand.claims[best])

    def _search(self, view, cand):
        bits, bbox, st = view.arrays
        n = len(cand)
        sums = np.zeros(n, dtype=np.float64)
        visits = np.zeros(n, dtype=np.int64)
        seed = int(rand_u64(self._rng)) >> 1  # an int64 for the kernel

        def step(start, count):
            BK.expecti_run(bits, bbox, st, view.player, cand.places, cand.claims, n, start, count,
                           self.depth, seed, sums, visits)

        # whole outcomes: every move is valued on the same samples
        iterations = None if self.iterations is None else max(1, self.iterations // n) * n
        run_budget(step, iterations, self.time, n)
        mean = np.where(visits > 0, sums / np.maximum(visits, 1), -1e300)
        order = np.lexsort((-np.arange(n), cand.keys, mean))
        return int(order[-1])
