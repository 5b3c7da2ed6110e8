"""What the ladder's matchmaking buys, measured on simulated entrants with known strengths.

    python benchmarks/bench_ladder.py [--runs 20] [--entrants 30] [--seed 0]

Blocks as in benchmarks/bench_sprt.py (tests/sprt_support.py): a 2-player block is one deal under
both seatings, the deal favouring one seat by 0.4 in win probability between equals. Between
unequal entrants the favour shrinks with the room left (0.8 min(L, 1 - L), L the expected score
of the Elo difference), so that the expected score stays L at any difference (bench_sprt's
differences are small; here they reach hundreds of Elo, where L + 0.4 would pass 1 and bend the
truth). The entrants' true Elo are drawn from N(0, 200) and centred. The same block model, the
same ratings (kdtourney.stats.ratings: the fit and the block bootstrap) and the same random
seeds serve both schedulers:

- `matchmaking`: kdtourney.stats.matchmaking.choose_table, the ladder's rule;
- `uniform`: tables drawn uniformly from the field.

Two figures per scheduler, each the median over the runs (and the quartiles):

1. newcomer: an established ladder of `--entrants` entrants has played 300 blocks per entrant
   (uniform tables, the same for both schedulers; the field's median 95% interval is printed)
   and a new entrant joins; games played on the ladder until the
   newcomer's 95% block-bootstrap interval lies within its true Elo +-25 (checked every 10 blocks,
   or every 5% of the blocks played since it joined when that is more;
   the bootstrap, 200 resamples, runs once the fit's estimate and standard error are within
   reach). Capped at 50,000 games.
2. ranking: from scratch, the Spearman rank correlation of the fitted list against the truth after
   `--games` games (several values).

Blocks are chosen `CHUNK` at a time from one standing, as the ladder chooses them between runs of
the arena. Figures, not timings: the load on the machine does not change them.

--speed: what a running ladder costs beside `run`, timed:

    python benchmarks/bench_ladder.py --speed [--seconds 300] [--rounds 1] [--workers 2]

Four Python bots (greedy, random, mce with 40 iterations, crown-grabber of examples/, renamed),
each a module in a subfolder of its own (as a ladder's submissions are), played `--sandbox` (so
each through `kdtourney serve` in a sandbox of its own) at 4-player tables, their kernels in the
cache first (an in-process `run` of 3 games): a
`kdtourney ladder` of the folder with its page rewritten beside play, and a `kdtourney run` of
the same four bots at the same tables (every block the four of them under every rotation), under
the same sandbox rules, the same workers, one after the other (ladder first in odd rounds, run
first in even ones). Each command is stopped by Ctrl-C (SIGINT) `--seconds` after it started.
Prints for each: the games stored in that time (by the store's `finished_at`) per second from
the command's start, the same from its first stored game (start-up left out), and the bot
processes started per game (each bot module writes a line to its stderr, so to its log, when a
process imports it: the workers' bot processes, not the start-up's listing in a sandbox); the
ratio ladder/run of each rate, and the load (os.getloadavg) before and after each command.

--chunks: what the ladder's harness costs per chunk outside its games, as the store grows:

    python benchmarks/bench_ladder.py --chunks [--sizes 1000,10000,100000] [--measure 64]

The real `kdtourney ladder` path (kdtourney.commands.ladder.play_ladder: its store, feed,
matchmaker, driver) among 20 built-in entrants at 2-player tables, chunks of 16 blocks (32 games),
over a game service whose games take no time (tests/ladder_support.py: each step hands back 8 games
with results drawn from known strengths), so that all the time measured is the harness's. The ladder
is grown to each size by playing it so, then resumed for `--measure` chunks: printed are the
resume's start (the one read of the history: the store's blocks and games), the time per chunk
(from the first chunk queued to the last) and its parts: choosing the chunk (the matchmaker and
its standing), taking in the blocks made whole (the tallies), recording the blocks, storing the
games; and the page the ladder rewrites beside play (kdtourney ladder's `_ladder_page`: the list,
its bootstrap and the page, from the store), built once at that size.
"""

import argparse
import datetime
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from sprt_support import SWING  # noqa: E402

from kdtourney.stats.matchmaking import Standing, choose_table, uniform_table  # noqa: E402
from kdtourney.stats.outcomes import elo_to_score  # noqa: E402
from kdtourney.stats.ratings import PairCounts, bootstrap_elo  # noqa: E402

CHUNK = 4
WARM_BLOCKS_PER_ENTRANT = 600
TOLERANCE = 25.0
CAP_GAMES = 50_000
SCHEDULERS = {"matchmaking": choose_table, "uniform": uniform_table}
FIELD_HALF_WIDTHS = []  # the established field's median 95% half-width when the newcomer joins


def block_score(rng, elo):
    """The score of a 2-player duplicate block (0, 0.5 or 1) for an entrant `elo` stronger."""
    expected = elo_to_score(elo)
    swing = 2 * SWING * min(expected, 1 - expected)
    return float((rng.random(2) < expected + swing * np.array([1.0, -1.0])).mean())


class Ladder:
    """Simulated 2-player duplicate blocks among entrants of known strength."""

    def __init__(self, truth, rng):
        self.truth = np.asarray(truth, float)
        self.rng = rng
        k = len(truth)
        self.wins, self.games, self.meetings = np.zeros((k, k)), np.zeros((k, k)), np.zeros((k, k))
        self.blocks, self.last = np.zeros(k), np.full(k, -1.0)
        self.records = []  # (block, i, j, i's block score)

    @property
    def n_blocks(self):
        return len(self.records)

    def standing(self, k=None):
        k = k or len(self.truth)
        s = slice(0, k)
        return Standing.from_counts(list(range(k)), self.wins[s, s], self.games[s, s],
                                    self.blocks[:k].copy(), self.last[:k].copy(),
                                    self.meetings[s, s].copy(), self.n_blocks)

    def field(self, k=None):
        """The standing without the fit, which uniform tables do not read (the warm-up's speed)."""
        k = k or len(self.truth)
        zero = np.zeros(k)
        return Standing(list(range(k)), zero, zero, self.blocks[:k].copy(), self.last[:k].copy(),
                        self.meetings[:k, :k].copy(), self.n_blocks)

    def play(self, scheduler, blocks, k=None):
        """Play `blocks` blocks among the first `k` entrants, chosen `CHUNK` at a time."""
        for _ in range(0, blocks, CHUNK):
            st = self.standing(k) if scheduler is not uniform_table else self.field(k)
            tables = []
            for _ in range(CHUNK):
                table = scheduler(st, 2, self.rng)
                st.scheduled(table)
                tables.append(table)
            for i, j in tables:
                x = block_score(self.rng, self.truth[i] - self.truth[j])
                b = self.n_blocks
                self.records.append((b, i, j, x))
                self.wins[i, j] += 2 * x
                self.wins[j, i] += 2 * (1 - x)
                self.games[i, j] += 2
                self.games[j, i] += 2
                self.meetings[i, j] += 1
                self.meetings[j, i] += 1
                self.blocks[[i, j]] += 1
                self.last[[i, j]] = b

    def pair_counts(self):
        """The records as kdtourney.stats.ratings.PairCounts (what the bootstrap resamples)."""
        r = np.array(self.records)
        a, b = r[:, 1].astype(int), r[:, 2].astype(int)
        i, j = np.minimum(a, b), np.maximum(a, b)
        w = 2 * np.where(a == i, r[:, 3], 1 - r[:, 3])
        k = len(self.truth)
        pairs, rec_pair = np.unique(i * k + j, return_inverse=True)
        return PairCounts(entrants=tuple(str(e) for e in range(k)), blocks=np.arange(len(r)),
                          block_games=np.full(len(r), 2), pair_i=pairs // k, pair_j=pairs % k,
                          rec_block=np.arange(len(r)), rec_pair=rec_pair.astype(np.int64),
                          rec_w=w, rec_n=np.full(len(r), 2.0))


def truths(rng, k):
    t = rng.normal(0, 200, k)
    return t - t.mean()


def newcomer_games(seed, entrants, scheduler):
    rng = np.random.default_rng([seed, 1])
    lad = Ladder(truths(rng, entrants + 1), rng)
    lad.play(uniform_table, WARM_BLOCKS_PER_ENTRANT * entrants // 2, k=entrants)
    rng_play = np.random.default_rng([seed, 2])  # the same draws after the warm-up for both
    lad.rng = rng_play
    start = lad.n_blocks
    new = entrants
    field = bootstrap_elo(lad.pair_counts(), n_boot=200, seed=seed).drop(str(new))
    FIELD_HALF_WIDTHS.append(float(((field["hi"] - field["lo"]) / 2).median()))
    while 2 * (lad.n_blocks - start) < CAP_GAMES:
        lad.play(scheduler, max(10, (lad.n_blocks - start) // 20))  # checks 5% apart at least
        st = lad.standing()
        err = abs(st.elo[new] - lad.truth[new])
        # not yet within reach: skip the bootstrap (the fit's standard error, which takes games
        # for independent, overstates a duplicate block's spread: about 1.7 times its bootstrap's)
        if err + 1.1 * st.sd[new] > TOLERANCE:
            continue
        table = bootstrap_elo(lad.pair_counts(), n_boot=200, seed=seed)
        lo, hi = table.loc[str(new), "lo"], table.loc[str(new), "hi"]
        if lad.truth[new] - TOLERANCE <= lo and hi <= lad.truth[new] + TOLERANCE:
            return 2 * (lad.n_blocks - start)
    return CAP_GAMES


def rank_correlations(seed, entrants, scheduler, games):
    rng = np.random.default_rng([seed, 3])
    lad = Ladder(truths(rng, entrants), rng)
    out = {}
    for n in sorted(games):
        lad.play(scheduler, n // 2 - lad.n_blocks)
        elo = lad.standing().elo
        ranks = pd.DataFrame({"fit": elo, "truth": lad.truth}).rank()
        out[n] = float(np.corrcoef(ranks["fit"], ranks["truth"])[0, 1])  # Spearman's
    return out


def quartiles(values):
    q1, q2, q3 = np.percentile(values, [25, 50, 75])
    return f"{q2:.0f} [{q1:.0f}, {q3:.0f}]" if max(abs(q1), abs(q3)) >= 2 else \
        f"{q2:.3f} [{q1:.3f}, {q3:.3f}]"


# --speed -----------------------------------------------------------------------------------------

STARTED = "bench-ladder: a process of this bot started"
SPEED_BOTS = {  # subfolder: (module's code after the marker line)
    "served-greedy": "from kdtourney.bots.greedy import GreedyBot\n\n\n"
                     "class ServedGreedy(GreedyBot):\n    name = 'served-greedy'\n",
    "served-random": "from kdtourney.bots.random_bot import RandomBot\n\n\n"
                     "class ServedRandom(RandomBot):\n    name = 'served-random'\n",
    "served-mce": "from kdtourney.bots.mce import MCEBot\n\n\n"
                  "class ServedMCE(MCEBot):\n    name = 'served-mce'\n\n"
                  "    def __init__(self, iterations: int = 40):\n"
                  "        super().__init__(iterations=iterations)\n",
    "served-crowns": (Path(__file__).resolve().parent.parent / "examples" / "bots" / "crown-grabber"
                      / "crown_grabber.py").read_text().replace('"crown-grabber"',
                                                                 '"served-crowns"'),
}
KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")


def speed_bots(folder: Path) -> list[str]:
    for name, code in SPEED_BOTS.items():
        (folder / name).mkdir(parents=True)
        (folder / name / f"{name.replace('-', '_')}.py").write_text(
            f"import sys\n\nprint({STARTED!r}, file=sys.stderr, flush=True)\n\n" + code)
    return list(SPEED_BOTS)


def timed(command, out: Path, seconds: float):
    """Run `command` (a kdtourney command line writing its store to `out`), Ctrl-C it `seconds`
    after it started; (games stored meanwhile per second from the start, per second from the
    first stored game, games counted, bot processes started per game, load before, after)."""
    from kdtourney import store

    load = os.getloadavg()
    start = datetime.datetime.now(datetime.UTC)
    with open(f"{out}.out", "w+") as output:  # (a pipe left unread could fill and block it)
        proc = subprocess.Popen([KDTOURNEY, *command, "--out", str(out)], stdout=output,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                # Ctrl-C as in a terminal, even when this runs in the background
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(seconds)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=300)
        output.seek(0)
        text = output.read()
    if proc.returncode not in (0, 130):
        raise SystemExit(f"{command[0]} failed ({proc.returncode}):\n{text}")
    if proc.returncode == 0:
        raise SystemExit(f"{command[0]} ended before {seconds:g} s: give it more games")
    finished = store.load_games(out)["finished_at"].map(datetime.datetime.fromisoformat)
    # finished_at is to the second: count what finished within the window
    end = start + datetime.timedelta(seconds=seconds)
    within = finished[finished < end]
    if len(within) < 2:
        raise SystemExit(f"{command[0]} stored {len(within)} games in {seconds:g} s: give it more "
                         "--seconds")
    steady = (len(within) - 1) / (end - within.min()).total_seconds()
    starts = sum(path.read_text(errors="replace").count(STARTED)
                 for path in (out / "logs").glob("*.log"))
    return len(within) / seconds, steady, len(within), starts / max(1, len(within)), load, \
        os.getloadavg()


def speed(seconds: float, rounds: int, workers: int, run_games: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from kdtp_support import ALLOW_ARGS

    with tempfile.TemporaryDirectory() as tmp:
        bots = Path(tmp) / "bots"
        names = speed_bots(bots)
        # the kernels of the bots compiled into the cache before any sandbox copies it (a served
        # bot would compile what is missing in its private /tmp, at each start)
        subprocess.run([KDTOURNEY, "run", "--bots", "greedy,random,mce:iterations=40", "--games",
                        "3", "--quiet", "--no-report", "--out", str(Path(tmp) / "warm")],
                       check=True, stdout=subprocess.DEVNULL)
        common = ["--sandbox", *ALLOW_ARGS, "--bots-dir", str(bots), "--players", "4",
                  "--workers", str(workers), "--seed", "1", "--quiet"]
        commands = {"ladder": ["ladder", *common],
                    "run": ["run", *common, "--bots", ",".join(names), "--games",
                            str(run_games), "--no-report"]}
        ratios = []
        for r in range(rounds):
            order = ["ladder", "run"] if r % 2 == 0 else ["run", "ladder"]
            figures = {}
            for what in order:
                figures[what] = timed(commands[what], Path(tmp) / f"{what}{r}", seconds)
                rate, steady, games, starts, before, after = figures[what]
                print(f"round {r + 1} {what}: {rate:.3f} games/s ({games} games in {seconds:g} s; "
                      f"{steady:.3f} games/s from the first stored game), {starts:.2f} bot "
                      f"processes started per game; load before "
                      f"{' '.join(f'{x:.2f}' for x in before)}, after "
                      f"{' '.join(f'{x:.2f}' for x in after)}", flush=True)
            ratios.append((figures["ladder"][0] / figures["run"][0],
                           figures["ladder"][1] / figures["run"][1]))
            print(f"round {r + 1} ratio ladder/run: {ratios[-1][0]:.3f} (from the start), "
                  f"{ratios[-1][1]:.3f} (from the first stored game)", flush=True)
        if rounds > 1:
            print(f"median ratio ladder/run: {np.median([a for a, _ in ratios]):.3f} (from the "
                  f"start), {np.median([b for _, b in ratios]):.3f} (from the first stored game)")


# --chunks ----------------------------------------------------------------------------------------


class Timers:
    """Seconds spent in some functions (wrapped in place) since `reset`."""

    def __init__(self, **functions):  # name: (owner, attribute)
        self.spent = dict.fromkeys(functions, 0.0)
        for name, (owner, attribute) in functions.items():
            setattr(owner, attribute, self._timed(name, getattr(owner, attribute)))

    def _timed(self, name, function):
        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent[name] += time.perf_counter() - t
        return timed

    def reset(self):
        self.spent = dict.fromkeys(self.spent, 0.0)


def chunks(sizes, measure: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import ladder_support

    from kdtourney.commands import driver, ladder_feed
    from kdtourney.report.ladder import ladder_board, write_ladder_page
    from kdtourney.store import reader

    timers = Timers(choose=(ladder_feed.LadderFeed, "choose"),
                    tallies=(ladder_feed.LadderFeed, "incoming_results"),
                    record=(driver, "schedule_blocks"), store=(driver.Driver, "_take"))
    print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min) at the start; "
          f"{len(ladder_support.ENTRANTS)} entrants, 2-player blocks, 32 games per chunk",
          flush=True)
    with tempfile.TemporaryDirectory() as tmp, ladder_support.instant_games():
        folder = Path(tmp) / "ladder"
        for size in sizes:
            grown = time.perf_counter()
            ladder_support.play(folder, size)
            grown = time.perf_counter() - grown
            marks = []
            timers.reset()
            started = time.perf_counter()
            outcome = ladder_support.play(folder, size + 32 * (measure + 1),
                                          after_chunk=lambda _: marks.append(time.perf_counter()))
            per_chunk = (marks[-1] - marks[0]) / (len(marks) - 1)
            parts = ", ".join(f"{name} {1e3 * spent / outcome.chunks:.1f}"
                              for name, spent in timers.spent.items())
            page = time.perf_counter()
            with reader(folder):
                write_ladder_page(folder, ladder_board(folder), running=True)
            page = time.perf_counter() - page
            print(f"{size:>7} games stored: resume's start {marks[0] - started:.2f} s; "
                  f"{1e3 * per_chunk:.1f} ms per chunk ({1e3 * per_chunk / 32:.2f} ms per game; "
                  f"parts in ms per chunk: {parts}); the page {page:.2f} s "
                  f"(grown to this size in {grown:.0f} s; load "
                  f"{' '.join(f'{x:.2f}' for x in os.getloadavg())})", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--entrants", type=int, default=30)
    ap.add_argument("--games", default="600,1500,3000", help="games for the rank correlation")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--speed", action="store_true", help="a sandboxed ladder beside run, timed")
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--run-games", type=int, default=4000,
                    help="the run's games: more than it plays in --seconds")
    ap.add_argument("--chunks", action="store_true",
                    help="the harness's cost per chunk as the store grows")
    ap.add_argument("--sizes", default="1000,10000,100000", help="games stored (--chunks)")
    ap.add_argument("--measure", type=int, default=64, help="chunks measured per size (--chunks)")
    args = ap.parse_args()
    if args.chunks:
        return chunks([int(n) for n in args.sizes.split(",")], args.measure)
    if args.speed:
        return speed(args.seconds, args.rounds, args.workers, args.run_games)
    games = [int(g) for g in args.games.split(",")]
    print(f"{args.entrants} entrants, 2-player duplicate blocks, {args.runs} runs per figure "
          "(median [quartiles])")
    for name, scheduler in SCHEDULERS.items():
        counts = []
        for r in range(args.runs):
            counts.append(newcomer_games(args.seed + r, args.entrants, scheduler))
            print(f"  {name} run {r}: {counts[-1]} games", file=sys.stderr, flush=True)
        capped = sum(c >= CAP_GAMES for c in counts)
        print(f"{name}: games until a newcomer is within +-{TOLERANCE:.0f} Elo (95% interval): "
              f"{quartiles(counts)}"
              + (f" ({capped} runs capped at {CAP_GAMES})" if capped else ""),
              flush=True)
        corr = [rank_correlations(args.seed + r, args.entrants, scheduler, games)
                for r in range(args.runs)]
        if name == "matchmaking":
            print(f"the field when the newcomer joins: 95% intervals +-"
                  f"{np.median(FIELD_HALF_WIDTHS):.0f} Elo (median)", flush=True)
        for n in games:
            print(f"{name}: rank correlation with the truth after {n} games: "
                  f"{quartiles([c[n] for c in corr])}", flush=True)


if __name__ == "__main__":
    main()
