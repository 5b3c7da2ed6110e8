"""KDTOURNEY_PLAIN_NJIT=1 compiles the kernels by plain numba.njit, without engine/jit.py's
patches (docs/engine.md): a game of greedy against a small mcts plays the same both ways."""

import json
import os
import subprocess
import sys

import pytest

from kdtourney.engine import jit_cache

# one game's actions, greedy in seat 0 against mcts (100 iterations), and whether the process
# compiled its kernels by engine/jit.py's dispatcher and optimisation patch
_PLAY = """
import json, sys
from numba.core.codegen import CPUCodeLibrary
from kdtourney.bots.greedy import GreedyBot
from kdtourney.bots.mcts import MCTSBot
from kdtourney.engine import Game, Rules, jit, kernels

rules = Rules(2, harmony=True, middle_kingdom=True)
bots = [GreedyBot(), MCTSBot(iterations=100)]
game = Game(rules, 7)
for seat, bot in enumerate(bots):
    bot.setup(seat, rules, 70 + seat)
while not game.is_over:
    game.apply(bots[game.current_player].act(game.view(game.current_player)))
patched = (isinstance(kernels.apply_action, jit.KernelDispatcher),
           CPUCodeLibrary._optimize_final_module is jit._optimize_kernel_module)
print(json.dumps({"actions": [int(a) for a in game.history], "patched": patched}))
"""


def _play(plain: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != jit_cache.PLAIN_VARIABLE}
    if plain:
        env[jit_cache.PLAIN_VARIABLE] = "1"
    done = subprocess.run([sys.executable, "-c", _PLAY], env=env, capture_output=True, text=True,
                          timeout=1200, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.timeout(1500)  # the plain kernels' first compile: minutes on a loaded machine
def test_plain_njit_plays_the_same_game():
    patched, plain = _play(plain=False), _play(plain=True)
    assert patched["patched"] == [True, True]
    assert plain["patched"] == [False, False]
    assert len(plain["actions"]) > 40
    assert plain["actions"] == patched["actions"]
