"""`heuristic`: no search, every whole-turn move valued by a weighted sum of named features.

The features and how a move is valued are in `kdtourney.bots.heuristic_kernels`. The weights are
bot parameters (`heuristic:claim_denial=0.5`); their defaults (STANDALONE) were tuned by CMA-ES on
common deals (benchmarks/tune_heuristic.py, the command beside them).
"""

import numpy as np

from kdtourney.bots import heuristic_kernels as HK
from kdtourney.bots import kernels as BK
from kdtourney.bots.greedy import TurnBot, check_number
from kdtourney.engine import kernels as K

_ROWS = 4 * K.MAX_ACTIONS

# place_gain is the unit (1: a point now) and is not tuned. Tuned from greedy's rules as weights by
# `python benchmarks/tune_heuristic.py --target standalone --generations 40 --deals 40 --seed 1`
STANDALONE = dict(place_gain=1.0, place_holes=-3.621, middle_lost=-5.334, frontier=0.683,
                  crowned_edges=-0.036, harmony_lost=0.282, claim_gain=4.189, claim_bad_spot=-6.949,
                  claim_crowns=-3.362, claim_order=-3.98, claim_denial=1.139)
# mcts:policy=own-heuristic's playouts (mcts:playout_weights=playout; not the default: no gain
# measured, see docs/builtin-bots.md), tuned from STANDALONE at 200 iterations a decision by
# `python benchmarks/tune_heuristic.py --target playout --iterations 200 --generations 30
# --deals 16 --seed 2 --start standalone --verify 50 --workers 1`
PLAYOUT = dict(place_gain=1.0, place_holes=-10.8, middle_lost=-6.652, frontier=-5.041,
               crowned_edges=8.145, harmony_lost=-2.932, claim_gain=8.666, claim_bad_spot=-16.483,
               claim_crowns=-7.947, claim_order=-3.068, claim_denial=-2.462)
# the weight sets a spec names (mcts's playout_weights)
WEIGHT_SETS = {"standalone": STANDALONE, "playout": PLAYOUT}


def weight_vector(weights: dict) -> np.ndarray:
    """The weights in kernel order (HK.WEIGHTS) from a dict naming every one of them."""
    return np.array([float(weights[name]) for name in HK.WEIGHTS], dtype=np.float64)


def check_weights(given: dict, defaults: dict) -> dict:
    """`defaults` with the weights `given` (each a number, named as in HK.WEIGHTS)."""
    out = dict(defaults)
    for name, value in given.items():
        if name not in out:
            raise ValueError(f"no weight {name!r}; the weights are {', '.join(HK.WEIGHTS)}")
        out[name] = float(check_number(name, value, low=-float("inf")))
    return out


class HeuristicBot(TurnBot):
    """Every whole-turn move (placement and claim) valued by w . features, the best one played
    (equal values: one at random from the bot's seed). Parameters: the weights, by name."""

    name = "heuristic"

    @classmethod
    def parameters(cls) -> dict:
        return dict(STANDALONE)

    def __init__(self, **weights):
        super().__init__()
        self.weights = check_weights(weights, STANDALONE)
        self._w = weight_vector(self.weights)
        self._places = np.empty(_ROWS, dtype=np.int64)
        self._claims = np.empty(_ROWS, dtype=np.int64)
        self._feats = np.empty((_ROWS, HK.N_WEIGHTS), dtype=np.float64)

    def decide(self, view):
        bits, bbox, st = view.arrays
        n = HK.heuristic_combos(bits, bbox, st, self._places, self._claims, self._feats,
                                *self._work)
        values = self._feats[:n] @ self._w
        i = BK.argmax_random(values, n, self._rng)
        return int(self._places[i]), int(self._claims[i])
