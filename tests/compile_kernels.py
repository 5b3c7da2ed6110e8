"""Fill Numba's cache before the tests: `python tests/compile_kernels.py SLOT`, run by conftest.py
in several processes at once (under pytest-xdist one per test process, slots 0, 1, ...; slots 0
and 1 in a session of one process) when a session runs slow tests that start processes.

On a fresh clone, compiling is most of a first run's time, and the tests would compile each
kernel when the first test needing it runs, in one process at a time. Processes warming up at once
share the kernels out as a command's workers do (kdtourney.service.worker.warm_up, from the step
of their slot: a kernel compiles in one process and the others load it), so on two cores the
compiling takes about half the time. On a warm cache they only load the kernels (a few seconds)."""

import sys

import numpy as np

from kdtourney.env.batch import BatchEnv
from kdtourney.registry import BotRegistry
from kdtourney.service.worker import warm_up
from kdtourney.tournament.definition import Tournament

# the built-in bots, and the settings of theirs that call kernels of their own (under the bonuses
# the shipped value networks were trained for); mcts's levers compile for 20 s on their own
SPECS = ("random", "greedy", "mce", "mce:policy=greedy", "mcts", "mcts:eval=mix",
         "mcts:policy=heuristic:root=halving:endgame=exact", "expectimax", "value-greedy",
         "heuristic")


def warm_env():
    env = BatchEnv(2, seed=0)
    env.reset()
    env.step(env.random_actions(np.random.default_rng(0)))


def main(slot: int) -> None:
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    table = Tournament(entrants=SPECS, specs=SPECS, format="round-robin", players=(4,), games=1,
                       seed=0, rules={"harmony": True, "middle_kingdom": True})
    if slot:
        warm_env()
    warm_up(table, registry, isolate=True, first=slot)  # isolate: the protocol's kernels too
    if not slot:
        warm_env()


if __name__ == "__main__":
    main(int(sys.argv[1]))
