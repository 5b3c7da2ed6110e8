"""A trained agent as a kdtourney `Bot`, for a bots folder like any other bot module.

    from kdtourney.env import PolicyBot

    class Mine(PolicyBot):
        name = "mine"
        def policy(self, observation, action_mask):
            return my_network.best(observation, action_mask)   # an action with action_mask 1

A plain function is a policy too (`policy = staticmethod(my_function)`). The arguments are what
BatchEnv and the PettingZoo environment give at the same decision (`kdtourney.env.encoding`). A
stochastic policy draws from `self.rng`, seeded by `setup`: the harness can replay every game.

`OpenSpielBot` does the same for an OpenSpiel bot on `python_kingdomino` (needs the `rl` extra).
"""

import numpy as np

from kdtourney.bots.base import Bot
from kdtourney.env.encoding import observe_view


class PolicyBot(Bot):
    """A policy of (observation, action mask) -> action as a Bot; subclass and define `policy`."""

    rng: np.random.Generator | None = None
    rules = None  # the game's Rules (the observation's layout depends on them), from setup

    def setup(self, seat, rules, seed):
        self.rng = np.random.default_rng(seed)
        self.rules = rules

    def policy(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The action to play: one whose action_mask entry is 1."""
        raise NotImplementedError  # abstract

    def act(self, view):
        if self.rng is None:  # act without setup (a quick try in a shell)
            self.setup(view.player, view.rules, 0)
        observation, mask = observe_view(view)
        return int(self.policy(observation, mask))


class OpenSpielBot(Bot):
    """An OpenSpiel bot playing `python_kingdomino` as a Bot; subclass and define `make_bot`."""

    def make_bot(self, game, seat: int, seed: int):
        """A pyspiel.Bot (e.g. open_spiel's MCTSBot) for `seat` of `game`, its randomness from
        `seed`."""
        raise NotImplementedError  # abstract

    def setup(self, seat, rules, seed):
        # OpenSpiel is an extra ([rl]): imported by the bot that plays it, not by this module
        import pyspiel

        from kdtourney.env import openspiel

        self._game = pyspiel.load_game(openspiel.GAME_NAME, rules.to_dict())
        self._bot = self.make_bot(self._game, seat, seed)
        self._state_of_view = openspiel.state_of_view

    def act(self, view):
        return int(self._bot.step(self._state_of_view(self._game, view)))
