"""The engine's random playout (`kernels.playout_random`, the search bots' random policy, which
plays round by round without the state machine) plays the very game that uniformly random actions
(`random_action`, then `apply_action`) play from the same position with the same random state:
the same kingdoms, state vector and random state at the end, from every point of a game."""

import numpy as np
import pytest

from kdtourney.engine import Game, Rules
from kdtourney.engine import kernels as K
from kdtourney.engine.game import rng_state

ALL_RULES = [Rules(2), Rules(3), Rules(3, three_player="bga"), Rules(4, harmony=True),
             Rules(2, variant="duel", middle_kingdom=True), Rules(2, first_picks="abba")]


def by_actions(bits, bbox, st, rng):
    sc = K.scratch(1)
    while st[K.ST_PHASE] != K.PHASE_OVER:
        K.apply_action(bits, bbox, st, K.random_action(bits, bbox, st, sc, rng))


@pytest.mark.parametrize("rules", ALL_RULES, ids=str)
def test_a_random_playout_plays_as_random_actions(rules):
    for seed in range(4):
        game = Game(rules, seed)
        step = 0
        while not game.is_over:
            if step % 5 == 0:  # from the start, and from points of every phase of the game
                bits, bbox, st = (a.copy() for a in game.arrays)
                rng = rng_state(100 + step)
                want = [a.copy() for a in (bits, bbox, st)]
                twin = rng.copy()
                by_actions(*want, twin)
                K.playout_random(bits, bbox, st, K.scratch(1), rng)
                for got, expected in zip((bits, bbox, st, rng), want + [twin]):
                    np.testing.assert_array_equal(got, expected)
            game.apply(game.legal_actions()[step % len(game.legal_actions())])
            step += 1
