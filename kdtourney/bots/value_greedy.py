"""`value-greedy`: the value network with no search, one decision ahead."""

import warnings

import numpy as np

from kdtourney.bots import net_kernels as NK
from kdtourney.bots import valuenet
from kdtourney.bots.base import Bot
from kdtourney.bots.greedy import GreedyBot
from kdtourney.engine import kernels as K


class ValueGreedyBot(Bot):
    """No search: the legal action whose next position the value network rates best for it.

    A decision's next position is valued by the network of these rules (its predicted final
    victory margin for the bot; a finished game by its real margin), the first of equal values
    played. The networks are the files of the class attribute `weights` (the shipped ones; a
    subclass in a bots folder names its own, listed in KDTOURNEY_FILES). Under rules none of them
    is for, the bot plays as `greedy` and warns once.
    """

    name = "value-greedy"
    weights = valuenet.SHIPPED

    def __init__(self):
        valuenet.networks(self.weights)  # a bad weights file is an error before play
        self._net = None
        self._greedy = GreedyBot()
        self._sc = K.scratch(1)
        self._actions = np.empty((1, K.MAX_ACTIONS), dtype=np.int64)
        self._values = np.empty(K.MAX_ACTIONS, dtype=np.float64)

    def setup(self, seat, rules, seed):
        self._greedy.setup(seat, rules, seed)
        net = valuenet.network_for(self.weights, rules)
        self._net = None if net is None else (net.arrays, NK.net_buffers(net.arrays, rules.players))
        if net is None:
            warnings.warn(f"{self.name}: no value network for {valuenet.describe_rules(rules)}; "
                          "it plays as greedy", stacklevel=2)

    def act(self, view):
        if self._net is None:  # no network for these rules
            return self._greedy.act(view)
        action, _ = NK.best_successor(*view.arrays, *self._net, self._sc, self._actions,
                                      self._values)
        return int(action)
