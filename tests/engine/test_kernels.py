"""Kernels that the public classes do not reach on their own."""

import random

from kdtourney.engine import Game, Rules
from kdtourney.engine import _kernels as K


def test_placement_gain_equals_the_score_change_of_placing():
    checked = 0
    for rules in (Rules(4), Rules(2, variant="duel")):
        for seed in range(15):
            game = Game(rules, seed)
            rnd = random.Random(seed)
            while not game.is_over:
                if game.phase == "place" and game.legal_actions() != [K.DISCARD]:
                    player, domino = game.current_player, game.domino_to_place
                    before = game.kingdom(player).score().territories
                    bits, bbox, _ = game.arrays
                    for action in game.legal_actions():
                        after = game.copy()
                        after.apply(action)
                        gain = K.placement_gain(bits[player], bbox[player], domino, action)
                        assert gain == after.kingdom(player).score().territories - before
                        checked += 1
                game.apply(rnd.choice(game.legal_actions()))
    assert checked > 5000
