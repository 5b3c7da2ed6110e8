"""`expectimax`: iterative-deepening expectimax over the bot's turns, chance nodes for the next
rows."""

import time as _time

import numpy as np

from kdtourney.bots import expectimax_kernels as EK
from kdtourney.bots.greedy import TurnBot, check_budget, check_number, searched_move, time_budget
from kdtourney.engine.kernels import rand_u64

MAX_DEPTH = 13  # turns: no game has more


class ExpectimaxBot(TurnBot):
    """Iterative-deepening expectimax over its own turns, chance nodes for the next rows.

    A move is a whole turn, a (placement, claim) combination; a node searches the `width` best by
    the full greedy's evaluation (the move ordering). After a move a chance node draws `samples`
    next rows from the dominoes the bot has not seen; the kings that pick before the bot (those
    whose claimed dominoes are numbered lower) take random ones, and the bot's next turn places the
    domino it claimed and claims from the rest. The other kingdoms are not modelled. At the depth
    limit a move is valued by its greedy key: the points after it and after the claimed domino's
    best spot, less the greedy's penalties for a new one-square hole or an off-centre kingdom; a
    kingdom that gets no more dominoes by its points alone. Every move is valued on the same
    sampled rows.

    Depth 1 (this turn only) is the greedy's order. The search deepens one turn at a time from
    depth 2 until the budget is spent or the game's end is reached, and plays the best move of the
    deepest depth searched to the end, or of the next depth when its search, best move first, had
    covered that move.

    iterations: max nodes (turns searched) per decision (or time: seconds per decision, which wins
    when given). width: moves searched per turn. samples: rows drawn per chance node.
    depth: the deepest search, in turns.
    """

    name = "expectimax"

    def __init__(self, iterations=1000, time=None, width=6, samples=4, depth=MAX_DEPTH):
        super().__init__()
        self.iterations, self.time = check_budget(iterations, time)
        self.width = check_number("width", width, 1, integer=True)
        self.samples = check_number("samples", samples, 1, integer=True)
        self.depth = check_number("depth", depth, 1, integer=True)
        self._buffers = EK.expecti_buffers(min(self.depth, MAX_DEPTH))
        self.last_depth = 0
        self.last_iterations = 0

    def decide(self, view):
        return searched_move(view, self._work, self.width, self._search)

    def _search(self, view, cand):
        """Index of the move to play; sets last_depth (deepest depth completed) and
        last_iterations (nodes searched)."""
        bits, bbox, st = view.arrays
        seed = int(rand_u64(self._rng)) >> 1  # an int64 for the kernel
        # depth 1 values each move by its greedy key alone: the greedy's order, no search needed
        order = list(np.argsort(-cand.keys, kind="stable"))  # later the last depth's
        best, self.last_depth = order[0], 1
        stats = np.zeros(2, dtype=np.int64)
        budget = time_budget(self.time, view)
        start = _time.perf_counter()
        rate = None  # nodes per second, once measured
        for depth in range(2, min(self.depth, MAX_DEPTH) + 1):
            values = np.full(len(cand), EK.NOT_DONE)
            stats[1] = 0
            cut = False
            for k in order:
                if budget is None:
                    limit = self.iterations
                else:
                    left = budget - (_time.perf_counter() - start)
                    limit = stats[0] + (int(0.9 * rate * left) if rate else 1 << 62)
                v = EK.expecti_move(bits, bbox, st, view.player,
                                    cand.places, cand.claims, cand.keys,
                                    k, depth, self.width, self.samples, seed, limit, stats,
                                    self._buffers)
                if v == EK.NOT_DONE:
                    cut = True
                    break
                values[k] = v
                if budget is not None:
                    rate = stats[0] / max(_time.perf_counter() - start, 1e-6)
            # ties go to the earlier move in the search order
            searched = [k for k in order if values[k] != EK.NOT_DONE]
            if not cut or (searched and searched[0] == order[0]):
                best = max(searched, key=lambda k: values[k])
            if cut:
                break
            self.last_depth = depth
            order = sorted(order, key=lambda k: -values[k])
            if stats[1] < depth - 1:  # the game ends within the search: deeper is the same
                break
        self.last_iterations = int(stats[0])
        return int(best)
