"""`value-greedy` with a value network of your own: the weights file beside this module."""

from pathlib import Path

from kdtourney.bots.value_greedy import ValueGreedyBot

KDTOURNEY_FILES = ["my_value.npz"]


class MyValueGreedy(ValueGreedyBot):
    name = "my-value-greedy"
    weights = (Path(__file__).parent / "my_value.npz",)
