"""`mcts` evaluating its leaves with a value network of your own: the weights file beside this
module (examples/learned/train.py --out my_value.npz), shipped and hashed with the bot."""

from pathlib import Path

from kdtourney.bots.mcts import MCTSBot

KDTOURNEY_FILES = ["my_value.npz"]


class MyMCTS(MCTSBot):
    name = "my-mcts"
    weights = (Path(__file__).parent / "my_value.npz",)

    def __init__(self, iterations=1000, time=None, eval="net", depth=2):
        super().__init__(iterations=iterations, time=time, eval=eval, depth=depth)
