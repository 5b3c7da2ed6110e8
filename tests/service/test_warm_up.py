"""A worker's warm-up (kdtourney.service.worker.warm_up) compiles, or loads, every kernel the games
will call: a sandboxed bot copies the cache as its sandbox starts, and would compile whatever is
missing there in its private /tmp, in every one of its processes."""

import os
import subprocess
import sys
import warnings

import pytest

from kdtourney.engine import kernel_parts as engine_parts
from kdtourney.registry import BotRegistry
from kdtourney.service import worker as workers
from kdtourney.tournament.definition import prepare

# each script prints the kernels its games loaded that the warm-up had not
_LOADED = """
import sys

from kdtourney.engine import jit
from kdtourney.service import worker as workers
from kdtourney.tournament.definition import prepare
from kdtourney.registry import BotRegistry
from kdtourney.engine import Game


def loaded():
    return {(d.py_func.__module__, d.__name__, sig) for name, module in list(sys.modules.items())
            if name.startswith("kdtourney") for d in vars(module).values()
            if isinstance(d, jit.KernelDispatcher) for sig in d.overloads}
"""

_SERVED = _LOADED + """
from kdtourney.external import kdtp
from kdtourney.registry import serve


def play_served(registry, rules, specs):
    \"\"\"What `kdtourney serve` does in the sandbox: its start, then the decisions of a game read
    from the harness's act lines.\"\"\"
    serve.warm_up()
    game = Game(rules, 5)
    bots = [registry.create(specs[seat % len(specs)]) for seat in range(rules.players)]
    for seat, bot in enumerate(bots):
        bot.setup(seat, rules, 9 + seat)
    while not game.is_over:
        player, legal = game.current_player, game.legal_actions()
        view = kdtp.view_of(kdtp.decode(kdtp.act_line(game.view(player), legal, None)), rules)
        game.apply(bots[player].act(view))
    for bot in bots:
        bot.finish(game.scores(), game.ranking())
"""

_ISOLATED = _SERVED + """
registry = BotRegistry()
t = prepare(registry, bots="mcts:iterations=20,greedy,random", players=[4], games=3, seed=1)
workers.warm_up(t, registry, isolate=True, first=1)
warmed = loaded()
play_served(registry, t.rules_for(4), t.specs)
print(sorted(str(k) for k in loaded() - warmed))
"""

# sandboxed, a worker warms up built-in entrants only (a folder bot's code runs in its sandbox):
# a folder bot subclassing mcts, at the table with random only
_SUBCLASSED = _SERVED + """
import pathlib
import tempfile

folder = pathlib.Path(tempfile.mkdtemp())
(folder / "mine.py").write_text(
    "from kdtourney.bots.mcts import MCTSBot\\n\\n\\nclass Mine(MCTSBot):\\n    name = 'mine'\\n")
registry = BotRegistry([folder], env=False, cwd=False, entry_points=False)
t = prepare(registry, bots="mine:iterations=20,random", players=[2], games=2, seed=1)
workers.warm_up(t, registry, builtin_only=True, isolate=True)
warmed = loaded()
play_served(registry, t.rules_for(2), t.specs)
print(sorted(str(k) for k in loaded() - warmed))
"""


def assert_nothing_loaded_after_warm_up(script):
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_a_served_bot_finds_every_kernel_it_calls_warmed_up():
    """After a worker's warm-up for bots played in their own process, a whole game of served bots
    (their start, then their decisions on views read from act lines) calls no kernel that the
    warm-up did not load: in a sandbox, they all come from the copy of the cache."""
    assert_nothing_loaded_after_warm_up(_ISOLATED)


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_a_sandboxed_folder_bot_built_on_a_builtin_finds_its_kernels_warmed_up():
    """Sandboxed, the workers warm up every built-in bot, not only the built-in entrants: a
    folder bot may call a built-in's kernels by subclassing it, and in its sandbox's private copy
    of the cache it would compile the missing ones during its first decisions, on its clock."""
    assert_nothing_loaded_after_warm_up(_SUBCLASSED)


_TUNED = _LOADED + """
registry = BotRegistry(env=False, cwd=False, entry_points=False)
specs = ["mcts:c=0.1:iterations=20", "mcts:c=0.9:iterations=40", "greedy"]
assert workers.kernel_specs(specs) == [specs[0], specs[2]]
t = prepare(registry, bots=",".join(specs), players=[2], games=6, seed=1)
workers.warm_up(t, registry)
warmed = loaded()
rules = t.rules_for(2)
game = Game(rules, 5)
bots = [registry.create(specs[1]), registry.create(specs[1])]
for seat, bot in enumerate(bots):
    bot.setup(seat, rules, 9 + seat)
while not game.is_over:
    game.apply(bots[game.current_player].act(game.view(game.current_player)))
print(sorted(str(k) for k in loaded() - warmed))
"""


@pytest.mark.process
@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_a_bot_warms_up_once_for_all_its_numeric_values():
    """A tune seats dozens of values of one bot: the warm-up plays one of them (a warm-up game of
    mcts at 1,000 iterations for each of a batch's 32 values held a tune's start by 3 s), and the
    kernels that one loads are every kernel the others call."""
    assert_nothing_loaded_after_warm_up(_TUNED)


def test_a_sandboxed_warm_up_warns_of_no_bot_nobody_entered(recwarn):
    """Sandboxed, every built-in warms up (above), but their warnings are not the user's: a run of
    random and greedy said 'value-greedy: no value network for 2 players'. An entrant's own
    warning still shows."""
    warnings.simplefilter("always")
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    quiet = prepare(registry, bots="random,greedy", players=[2], games=2, seed=1)
    workers.warm_bots(quiet, registry, builtin_only=True)
    assert [str(w.message) for w in recwarn] == []
    entered = prepare(registry, bots="value-greedy,random", players=[2], games=2, seed=1)
    workers.warm_bots(entered, registry, builtin_only=True)
    assert any("value-greedy" in str(w.message) for w in recwarn)


def test_the_warm_up_compiles_apart_each_part_the_bots_name_once_and_none_cached(monkeypatch):
    """The big kernels the bots name (Bot.kernel_parts) are steps of their own, which several
    workers share out: mcts at two iteration counts and greedy name each kernel once, the games'
    kernels follow; none the cache already holds (a later run does not even look at them); no bot
    naming any, none."""
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    specs = ["mcts:iterations=5", "mcts:iterations=7", "greedy", "random"]
    named = [k for s in ("mcts", "greedy") for k, _ in registry.create(s).kernel_parts()]
    named += [k for k, _ in engine_parts()]
    monkeypatch.setattr(workers.jit, "in_cache", lambda kernel: False)
    steps = workers.kernel_parts(registry, False, specs)
    assert sorted(id(key[1]) for key, _ in steps) == sorted(id(k) for k in set(named))
    assert workers.kernel_parts(registry, False, ["random"]) == []
    monkeypatch.setattr(workers.jit, "in_cache", lambda kernel: True)
    assert workers.kernel_parts(registry, False, specs) == []
