"""The kernels a bot names to be compiled apart in a warm-up (Bot.kernel_parts) are those its
decisions call, with the very types they call them with."""

import os
import subprocess
import sys

import pytest

from kdtourney.registry import BotRegistry

# on an empty cache, a bot's decisions compile every kernel they call, each for the types of its
# calls: each part must be one of them (a part of other types would be compiled for nothing)
CHECK = """
from kdtourney.engine import Rules, jit, kernel_parts
from kdtourney.registry import BotRegistry
from kdtourney.service.worker import warm_bot
for spec in ("mcts:iterations=20", "greedy"):
    bot = BotRegistry.from_sources({}).create(spec)
    parts = bot.kernel_parts()
    assert parts, spec
    warm_bot(bot, Rules(players=2), lambda: None)
    for kernel, examples in parts:
        called = list(kernel.overloads)
        assert called == [jit.signature(examples)], (spec, kernel.py_func.__name__, called)
for kernel, examples in kernel_parts():  # the games' kernels, which warm_bot's game called
    assert list(kernel.overloads) == [jit.signature(examples)], kernel.py_func.__name__
"""


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_a_bots_kernel_parts_are_the_specialisations_its_decisions_compile(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


def test_mcts_names_no_part_where_its_playouts_are_not_the_greedy_ones():
    assert BotRegistry.from_sources({}).create("mcts:policy=random").kernel_parts() == []
    assert BotRegistry.from_sources({}).create("mcts").kernel_parts()
