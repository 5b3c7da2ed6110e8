"""The policy adapters: a policy, or an OpenSpiel bot, plays as a kdtourney Bot."""

import numpy as np
import pytest

from kdtourney.engine import Game, Rules
from kdtourney.env import PolicyBot, observe_view
from kdtourney.env.encoding import observe_arrays
from kdtourney.testing import check_bot


class SampledPolicy(PolicyBot):
    """A legal action at random, from the setup seed."""

    name = "sampled-policy"

    def policy(self, observation, action_mask):
        return self.rng.choice(np.flatnonzero(action_mask))


class LowestAction(PolicyBot):
    name = "lowest-action"

    def __init__(self):
        self.seen = []

    def policy(self, observation, action_mask):
        self.seen.append((observation, action_mask))
        return np.flatnonzero(action_mask)[0]


def highest_action(observation, action_mask):
    """A plain function of (observation, action mask)."""
    return np.flatnonzero(action_mask)[-1]


class FromFunction(PolicyBot):
    name = "from-function"
    policy = staticmethod(highest_action)


@pytest.mark.parametrize("bot", [SampledPolicy, FromFunction])
def test_a_policy_plays_as_a_bot_legally_and_deterministically(bot):
    check_bot(bot, strict=True)


def test_the_policy_sees_what_the_environments_give_at_that_decision():
    rules = Rules(3)
    bot = LowestAction()
    bot.setup(0, rules, 1)
    game = Game(rules, 8)
    while not game.is_over:
        p = game.current_player
        action = bot.act(game.view(p))
        observation, mask = bot.seen[-1]
        env_obs, env_mask, _ = observe_arrays(*game.arrays, p)
        np.testing.assert_array_equal(observation, env_obs)
        np.testing.assert_array_equal(mask, env_mask)
        assert action == min(game.legal_actions())
        game.apply(action)
    assert observe_view(game.view(0))[1].sum() == 0


@pytest.mark.slow
def test_an_openspiel_mcts_bot_plays_as_a_bot():
    pytest.importorskip("pyspiel",
                        reason="the rl extra is not installed (pip install 'kdtourney[rl]')")
    from open_spiel.python.algorithms import mcts

    from kdtourney.env import OpenSpielBot

    class SmallMcts(OpenSpielBot):
        name = "openspiel-mcts"

        def make_bot(self, game, seat, seed):
            rng = np.random.RandomState(seed % 2**32)
            return mcts.MCTSBot(game, uct_c=2.0, max_simulations=3,
                                evaluator=mcts.RandomRolloutEvaluator(1, rng), random_state=rng)

    check_bot(SmallMcts, strict=True)
