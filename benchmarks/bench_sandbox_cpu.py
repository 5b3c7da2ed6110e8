"""Does a bot that burns CPU take it from its opponent? mcts's iterations per decision against a
quiet and against a spinning opponent, with as many games at once as there are cores.

    python benchmarks/bench_sandbox_cpu.py [--games 16] [--rounds 2] [--modes sandbox,isolate]

`mcts:time=0.05` (as a folder bot that also writes its iterations of each decision to its log)
plays 2-player games against
- `quiet`: a KDTP program that answers the first legal action at once (benchmarks/kdtp/
  first_legal.py), and
- `spinner`: a KDTP program whose processes spin between and during its decisions (a thread of
  its own all the time, HELPERS processes in sessions of their own started at every game, and
  THINK seconds of spinning per decision; benchmarks/kdtp/spinner.py),
on `--workers` = the number of cores, in each mode: `sandbox` (`--sandbox`: the spinner frozen
between its decisions, within its CPU quota while it decides, its helpers killed with each game)
and `isolate` (`--isolate`: every bot in its own process, nothing frozen, no quota: the trusted
bots' way). The runs alternate quiet and spinner `--rounds` times, so the machine's other work
weighs on both alike.

Prints `MODE_OPPONENT_iterations_per_decision: MEAN` per run and, per mode,
`MODE_spinner_over_quiet: RATIO` (the mean of the spinner's runs over the quiet ones') and
`MODE_spinner_over_quiet_median_of_rounds: RATIO` (the median of each round's spinner run over
its quiet run, which the machine's other work moves less). Needs bwrap for the sandbox mode.
Timings move with other work on the machine: compare figures taken in one run.
"""

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import textwrap
from pathlib import Path

from kdtourney.commands.run import run_tournament
from kdtourney.commands.setup import available_cores
from kdtourney.engine import warm_up
from kdtourney.match.settings import PlaySettings
from kdtourney.registry import BotRegistry
from kdtourney.tournament.definition import prepare

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_kdtp import PYTHON_ALLOWED  # noqa: E402

COUNTING_MCTS = textwrap.dedent('''
    """mcts:time=0.05, writing its iterations of each decision to stderr (the entrant's log)."""
    import sys

    from kdtourney.bots.mcts import MCTSBot


    class CountingMCTS(MCTSBot):
        """mcts that writes ITERATIONS n to stderr after each decision."""

        name = "counting-mcts"

        def __init__(self, time=0.05):
            super().__init__(time=time)

        def act(self, view):
            action = super().act(view)
            if sys.stdout is sys.stderr:  # served (not the workers' warm-up): stderr is its log
                print(f"ITERATIONS {self.last_iterations}", file=sys.stderr, flush=True)
            return action
''')


def build(folder: Path, helpers: int, think: float) -> Path:
    """A bots folder of one subfolder per bot, as a sandbox wants them."""
    for name in ("counting", "quiet", "spinner"):
        (folder / name).mkdir(parents=True)
    (folder / "counting" / "counting_mcts.py").write_text(COUNTING_MCTS)
    shutil.copy(HERE / "kdtp" / "first_legal.py", folder / "quiet")
    shutil.copy(HERE / "kdtp" / "spinner.py", folder / "spinner")
    (folder / "quiet" / "quiet.toml").write_text(
        f'name = "quiet"\ncommand = ["{sys.executable}", "first_legal.py"]\n')
    (folder / "spinner" / "spinner.toml").write_text(
        f'name = "spinner"\ncommand = ["{sys.executable}", "spinner.py", "{helpers}", '
        f'"{think}"]\n')
    return folder


def iterations(registry, opponent: str, games: int, workers: int, play: PlaySettings,
               seed: int) -> float:
    """mcts's mean iterations per decision over `games` games against `opponent`."""
    t = prepare(registry, bots=f"counting-mcts,{opponent}", players="2", games=games, seed=seed)
    with tempfile.TemporaryDirectory() as tmp:
        out = run_tournament(t, Path(tmp) / "t", registry, workers=workers, play=play)
        assert out.complete, out.notes
        log = (Path(tmp) / "t" / "logs" / "counting-mcts.log").read_text()
    counts = [int(n) for n in re.findall(r"ITERATIONS (\d+)", log)]
    return statistics.mean(counts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=16, help="games per run")
    parser.add_argument("--rounds", type=int, default=2, help="runs per opponent and mode")
    parser.add_argument("--modes", default="sandbox,isolate", help="sandbox, isolate or both")
    parser.add_argument("--helpers", type=int, default=4, help="the spinner's helper processes")
    parser.add_argument("--think", type=float, default=0.05, help="the spinner's seconds a "
                        "decision")
    args = parser.parse_args()
    modes = args.modes.split(",")
    if "sandbox" in modes and shutil.which("bwrap") is None:
        sys.exit("the sandbox mode needs bubblewrap (bwrap)")
    workers = available_cores()
    print(f"# {workers} workers (one per core), load average {os.getloadavg()[0]:.1f}")
    warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        bots = build(Path(tmp) / "bots", args.helpers, args.think)
        for mode in modes:
            play = (PlaySettings(sandbox=True, sandbox_allow=PYTHON_ALLOWED) if mode == "sandbox"
                    else PlaySettings(isolate=True))
            registry = BotRegistry([bots], env=False, cwd=False, entry_points=False,
                                   sandbox=play.sandbox_for(None))
            means = {"quiet": [], "spinner": []}
            for round_ in range(args.rounds):
                for opponent in means:
                    mean = iterations(registry, opponent, args.games, workers, play, round_ + 1)
                    means[opponent].append(mean)
                    print(f"{mode}_{opponent}_iterations_per_decision: {mean:.0f}", flush=True)
            ratio = statistics.mean(means["spinner"]) / statistics.mean(means["quiet"])
            print(f"{mode}_spinner_over_quiet: {ratio:.3f}")
            paired = statistics.median(s / q for s, q in zip(means["spinner"], means["quiet"]))
            print(f"{mode}_spinner_over_quiet_median_of_rounds: {paired:.3f}")
    print(f"# load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
