"""`mcts`: information-set Monte Carlo tree search (determinized UCT) with progressive bias."""

import numpy as np

from kdtourney.bots import _kernels as BK
from kdtourney.bots.base import Bot
from kdtourney.bots.greedy import check_budget, check_choice, check_number, run_budget
from kdtourney.engine.game import rng_state

_CHUNK = 256  # iterations per kernel call with an iteration budget (the tree may grow between)


class MCTSBot(Bot):
    """Determinized UCT over its own decisions, progressive bias from the greedy evaluation.

    Every iteration samples a new determinization (the unseen dominoes reshuffled with the bot's
    seeded rng), walks one tree of the bot's own decisions (keyed by its action sequence; the other
    players' moves in between are played by the playout policy), adds one node and plays out.
    Tree policy: unvisited legal children first, best greedy prior first; then
    Q + c sqrt(ln(availability) / n) + bias (h - h_best) / 100 / (n + 1), where h is the child's
    greedy evaluation in points and availability counts the iterations in which the child was legal.
    The move played is the most visited root child. Each decision (place, claim) is searched anew.

    iterations: tree iterations per decision (or time: seconds per decision, which wins when given).
    c: exploration constant. bias: weight of the progressive bias. policy: random | greedy |
    player-greedy. measure: wdl | score | ratio (all in [0, 1]; score is points / 100).

    Defaults tuned with benchmarks/bench_bots.py (4 players, bonuses on, against three greedy, 0.1 s
    a decision, 100 games each): policy greedy +10.1 (player-greedy +5.0 in 40 games), bias 5
    +14.0 (1: +10.1, 10: +12.1), c 0.2 (0.1: +13.5, 0.4: +11.9), measure ratio (score: +10.1).
    """

    name = "mcts"

    def __init__(self, iterations=1000, time=None, c=0.2, bias=5.0, policy="greedy",
                 measure="ratio"):
        self.iterations, self.time = check_budget(iterations, time)
        self.c = float(check_number("c", c))
        self.bias = float(check_number("bias", bias))
        self.policy = check_choice("policy", policy, BK.POLICIES)
        self.measure = check_choice("measure", measure, BK.MEASURES)
        self._rng = rng_state(0)
        self._grow(1 << 15)
        self._ncount = np.zeros(1, dtype=np.int64)
        self.last_iterations = 0

    def _grow(self, cap):
        ti = np.zeros((cap, BK.TI_COLS), dtype=np.int64)
        tf = np.zeros((cap, BK.TF_COLS), dtype=np.float64)
        if hasattr(self, "_ti"):
            ti[:len(self._ti)] = self._ti
            tf[:len(self._tf)] = self._tf
        self._ti, self._tf = ti, tf

    def setup(self, seat, rules, seed):
        self._rng = rng_state(seed)

    def act(self, view):
        legal = view.legal_actions()
        if len(legal) == 1:
            return legal[0]
        bits, bbox, st = view.arrays
        BK.mcts_reset(self._ti, self._tf, self._ncount)

        def step(start, count):
            done = 0
            while done < count:  # in chunks, so that the tree can grow in between
                if self._ncount[0] > len(self._ti) // 2:
                    self._grow(2 * len(self._ti))
                n = min(_CHUNK, count - done)
                BK.mcts_run(bits, bbox, st, view.player, self._ti, self._tf, self._ncount, n,
                            self.c, self.bias, self.policy, self.measure, self._rng)
                done += n

        done = run_budget(step, self.iterations, self.time, 32)
        self.last_iterations = done
        best, best_key = legal[0], None
        ch = self._ti[0, BK.TI_FIRST]
        while ch >= 0:
            n = self._ti[ch, BK.TI_VISITS]
            key = (n, self._tf[ch, BK.TF_VALUE] / max(n, 1))
            if best_key is None or key > best_key:
                best, best_key = int(self._ti[ch, BK.TI_ACTION]), key
            ch = self._ti[ch, BK.TI_NEXT]
        return best
