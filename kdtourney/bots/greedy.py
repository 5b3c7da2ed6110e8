"""`greedy`: the "full greedy" player of Gedda, Lagerkvist and Butler (2018), and the helpers the
search bots share (budgets, parameter checks, candidate moves).

A turn is two engine decisions, place then claim. Greedy (and the search bots) decide the whole
turn at the place decision, a (placement, claim) combination, and remember the claim; at the claim
decision they play it if the position is the one they expected, and decide afresh otherwise.
"""

import time as _time

import numpy as np

from kdtourney.bots import kernels as BK
from kdtourney.bots.base import Bot
from kdtourney.engine import kernels as K
from kdtourney.engine.game import rng_state

_COMBOS = 4 * K.MAX_ACTIONS


class Candidates:
    """The moves a bot chooses between at one decision, ranked by the full greedy's keys.

    places[i]: a place action, DISCARD, or -1 (a claim decision); claims[i]: a claim action or -1
    (the last round); keys[i]: the greedy key (larger is better, see bots/kernels.py).
    """

    def __init__(self, places, claims, keys):
        self.places = places
        self.claims = claims
        self.keys = keys

    def __len__(self):
        return len(self.keys)

    def top(self, k):
        """The k best by greedy key (stable: ties keep their order); all when k <= 0."""
        if k <= 0 or k >= len(self):
            return self
        order = np.argsort(-self.keys, kind="stable")[:k]
        return Candidates(self.places[order].copy(), self.claims[order].copy(),
                          self.keys[order].copy())


def candidates(view, work) -> Candidates:
    """Every whole-turn move of the player to act: (placement, claim) combinations at a place
    decision, single claims at a claim decision."""
    bits, bbox, st = view.arrays
    if st[K.ST_PHASE] == K.PHASE_PLACE:
        places = np.empty(_COMBOS, dtype=np.int64)
        claims = np.empty(_COMBOS, dtype=np.int64)
        keys = np.empty(_COMBOS, dtype=np.int64)
        n = BK.greedy_combos(bits, bbox, st, places, claims, keys, *work)
        return Candidates(places[:n].copy(), claims[:n].copy(), keys[:n].copy())
    claims = np.empty(4, dtype=np.int64)
    keys = np.empty(4, dtype=np.int64)
    if st[K.ST_ROUND] == 0:  # first claim: crowns on one half (the greedy's rule) as the key
        n = BK.free_claims(st, claims)
        for j in range(n):
            d = claims[j] - K.CLAIM_BASE
            keys[j] = max(K.TILE_CROWNS[d, 0], K.TILE_CROWNS[d, 1])
    else:
        n = BK.claim_keys(bits, bbox, st, claims, keys, *work)
    return Candidates(np.full(n, -1, dtype=np.int64), claims[:n].copy(), keys[:n].copy())


def searched_move(view, work, top: int, search) -> tuple[int, int]:
    """(place action or -1, claim action or -1) of the move among the `top` best `candidates` (all:
    0) at the index search(view, cand) gives; a lone move is played unsearched."""
    cand = candidates(view, work).top(top)
    best = 0 if len(cand) == 1 else search(view, cand)
    return int(cand.places[best]), int(cand.claims[best])


class TurnPlan:
    """Remembers the claim chosen with a placement, for the claim decision that follows."""

    def __init__(self):
        self.expect = None

    def remember(self, view, place, claim):
        self.expect = (_turn(view), int(claim)) if claim >= 0 else None

    def recall(self, view):
        """The remembered claim when the view is the claim decision of the remembered turn (the
        position alone says so: a view rebuilt in another process has no move history)."""
        expect, self.expect = self.expect, None
        if expect is None or view.phase != "claim":
            return None
        turn, claim = expect
        if _turn(view) == turn and claim in view.legal_actions():
            return claim
        return None


def _turn(view):
    """A king's turn: round, player, and the claims made in the new row before it."""
    return view.round, view.current_player, sum(owner >= 0 for _, owner in view.new_row)


MAX_ITERATIONS = 10**9  # per decision (the kernels count in int64; a day's search at most)
MAX_TIME = 86_400.0     # seconds per decision


def check_budget(iterations, time):
    """Validated (iterations, time): exactly one per decision budget."""
    if time is not None:
        if isinstance(time, bool) or not isinstance(time, (int, float)) or not 0 < time <= MAX_TIME:
            raise ValueError(f"time must be a positive number of seconds per decision, at most "
                             f"{MAX_TIME:g}, not {time!r}")
        return None, float(time)
    if isinstance(iterations, bool) or not isinstance(iterations, int) \
            or not 1 <= iterations <= MAX_ITERATIONS:
        raise ValueError(f"iterations must be a positive int, at most {MAX_ITERATIONS:,}, not "
                         f"{iterations!r}")
    return iterations, None


def check_choice(what, value, choices):
    if value not in choices:
        raise ValueError(f"{what} must be one of {', '.join(choices)}, not {value!r}")
    return choices[value]


def check_number(what, value, low=0.0, integer=False):
    ok = not isinstance(value, bool) and isinstance(value, int if integer else (int, float)) \
        and value >= low
    if not ok:
        kind = "an int" if integer else "a number"
        raise ValueError(f"{what} must be {kind} >= {low}, not {value!r}")
    return value


CLOCK_SHARE = 0.8  # of what the harness's clock leaves a decision, a time budget spends at most


def time_budget(time, view):
    """The seconds a `time=` budget spends on this decision: `time`, but at most CLOCK_SHARE of
    what the harness's clock leaves it (`view.time_left`), so a bank running low is not overdrawn;
    None (an iteration budget) stays None."""
    left = getattr(view, "time_left", None)
    if time is None or left is None:
        return time
    return min(time, CLOCK_SHARE * left)


def run_budget(step, iterations, time, chunk0):
    """Call step(start, count) until `iterations` units are done, or until `time` seconds have
    passed (units in growing chunks, so that the clock is read rarely). Returns the units done."""
    if time is None:
        step(0, iterations)
        return iterations
    deadline = _time.perf_counter() + time
    done = 0
    chunk = max(1, chunk0)
    while True:
        t0 = _time.perf_counter()
        step(done, chunk)
        done += chunk
        now = _time.perf_counter()
        left = deadline - now
        if left <= 0:
            return done
        rate = chunk / max(now - t0, 1e-6)
        chunk = max(1, min(int(rate * left * 0.9), 4 * chunk))
        if chunk < 1 or left < 2e-4:
            return done


class TurnBot(Bot):
    """Base of the bots that choose a whole turn at the place decision (see the module docstring):
    a subclass implements `decide(view) -> (place action or -1, claim action or -1)`; the claim is
    remembered and played at the claim decision that follows, when the position is as expected."""

    def __init__(self):
        self._work = BK.work_buffers()
        self._plan = TurnPlan()
        self._rng = rng_state(0)

    def setup(self, seat, rules, seed):
        self._rng = rng_state(seed)
        self._plan = TurnPlan()

    def act(self, view):
        if view.phase == "claim":
            claim = self._plan.recall(view)
            if claim is not None:
                return claim
        place, claim = self.decide(view)
        if place < 0:
            return int(claim)
        self._plan.remember(view, place, claim)
        return int(place)

    def decide(self, view) -> tuple[int, int]:
        raise NotImplementedError  # abstract


class GreedyBot(TurnBot):
    """The study's full greedy: best score over every placement x claim combination, no search."""

    name = "greedy"

    def __init__(self):
        super().__init__()
        self._fb = BK.plan_buffers()

    def kernel_parts(self):
        return BK.full_greedy_parts(self._work)

    def decide(self, view):
        bits, bbox, st = view.arrays
        plan = self._fb[0]
        plan[:] = -1
        action = int(BK.full_greedy_action(bits, bbox, st, self._rng, self._fb, *self._work))
        if st[K.ST_PHASE] == K.PHASE_CLAIM:
            return -1, action
        return action, int(plan[view.player])
