"""What `kdtourney sprt` promises, measured on simulated duplicate blocks; and (--wall) what an SPRT
costs beyond its games.

    python benchmarks/bench_sprt.py [--runs 20000] [--players 2,4] [--seed 0] [--min-blocks 15]
    python benchmarks/bench_sprt.py --wall [--games 2000] [--runs 3] [--workers 2]

--wall: an SPRT of greedy against greedy to --games games with bounds it cannot reach (alpha and
beta 1e-9, elo0 -0.05, elo1 +0.05: it plays to its cap), and `run_tournament` playing the same
tables (the SPRT's gauntlet, the same games) with the same workers, side by side, interleaved
(sprt, run, sprt, run, ...), each in a new folder. Prints each pair's wall seconds, their ratio,
the median ratio and the load (os.getloadavg) before and after; and the CPU seconds of this
process (the parent: storing, evaluating), steadier than wall time on a busy machine. The SPRT
plays every block on one game service; the ratio is what the evaluations and the
store's reads cost. The first pair's SPRT also starts the workers' fork server, which the rest
reuse (the median of a few pairs is the figure).

Blocks as in tests/sprt_support.py: one deal per block, played under every rotation of the table,
a seat favoured by 0.4 in win probability.  For elo0 = 0, elo1 = 50, alpha = beta = 0.05, prints
`name: value` lines per player count: alpha (H1 accepted at 0 Elo), beta (H0 accepted at 50 Elo),
each with its binomial standard error, the tests left undecided, the mean blocks to a decision;
and for a candidate 25 Elo stronger: the mean score where H1 is accepted (as printed before the
correction), the corrected estimate (its median over all tests and P(estimate > 25)) and how often
the 95% interval printed with the verdict covers 25.  Figures, not timings: the load on the
machine does not change them.
"""

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from sprt_support import decisions, duplicate_blocks  # noqa: E402

from kdtourney.stats.outcomes import score_to_elo  # noqa: E402
from kdtourney.stats.sprt import DEFAULT_MIN_BLOCKS  # noqa: E402

CHUNK = 1000


def rates(rng, players, runs, min_blocks):
    blocks = 300 if players == 2 else 200
    out = {}
    for elo in (0, 50, 25):
        status, at, est = [], [], []
        for i in range(0, runs, CHUNK):
            x = duplicate_blocks(rng, elo, min(CHUNK, runs - i), blocks, players)
            s, n, e = decisions(x, 0, 50, min_blocks, estimate=elo == 25)
            status.append(s), at.append(n)
            if elo == 25:
                mean = (x * (np.arange(blocks) < n[:, None])).sum(axis=1) / n
                est.append(np.vstack([e, mean]))
        out[elo] = np.concatenate(status), np.concatenate(at), (np.hstack(est) if est else None)
    return out


def cpu():
    """CPU seconds so far of this process (the workers are the fork server's children: their CPU
    reaches it, not this process)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def wall(games, runs, workers):
    from kdtourney.commands import sprt as sequential
    from kdtourney.commands.run import run_tournament
    from kdtourney.registry import BotRegistry

    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    tournament, test = sequential.prepare_test(
        registry, candidate="greedy", baseline="greedy", elo0=-0.05, elo1=0.05, alpha=1e-9,
        beta=1e-9, max_games=games, seed=1)
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(runs):
            t0, c0 = time.perf_counter(), cpu()
            out = sequential.play_sprt(tournament, test, Path(tmp) / f"sprt{r}", registry,
                                       workers=workers)
            sprt_s, sprt_cpu = time.perf_counter() - t0, cpu() - c0
            assert out.verdict == "undecided" and out.state.stored == games, out.verdict_line()
            t0, c0 = time.perf_counter(), cpu()
            ran = run_tournament(tournament, Path(tmp) / f"run{r}", registry, workers=workers)
            run_s, run_cpu = time.perf_counter() - t0, cpu() - c0
            assert ran.complete and ran.played == games
            ratios.append(sprt_s / run_s)
            print(f"pair {r + 1}: sprt {sprt_s:.1f} s ({out.evaluations} evaluations; CPU of this "
                  f"process {sprt_cpu:.1f} s), run {run_s:.1f} s (CPU {run_cpu:.1f} s), ratio "
                  f"{ratios[-1]:.3f}")
    print(f"median ratio sprt/run: {statistics.median(ratios):.3f} ({games} games, {workers} "
          f"workers, {runs} pairs)")
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--players", default="2,4")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-blocks", type=int, default=DEFAULT_MIN_BLOCKS)
    ap.add_argument("--wall", action="store_true")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if args.wall:
        return wall(args.games, args.runs or 3, args.workers)
    args.runs = args.runs or 20000
    for players in (int(p) for p in args.players.split(",")):
        rng = np.random.default_rng([args.seed, players])
        out = rates(rng, players, args.runs, args.min_blocks)
        p = f"{players}p "
        for name, elo, wrong in (("alpha", 0, "H1"), ("beta", 50, "H0")):
            status, at, _ = out[elo]
            r = np.mean(status == wrong)
            print(f"{p}{name}: {100 * r:.2f}% +- {100 * np.sqrt(r * (1 - r) / len(status)):.2f}")
            print(f"{p}undecided at {elo} Elo: {100 * np.mean(status == 'continue'):.2f}%")
            print(f"{p}mean blocks at {elo} Elo: {at.mean():.1f}")
        status, _, (elo, lo, hi, mean) = out[25]
        passed = status == "H1"
        print(f"{p}at 25 Elo, H1 accepted: {100 * passed.mean():.1f}%")
        print(f"{p}at 25 Elo, uncorrected Elo where H1 accepted (median): "
              f"{np.median(score_to_elo(mean[passed])):+.1f}")
        print(f"{p}at 25 Elo, corrected estimate where H1 accepted (median): "
              f"{np.median(elo[passed]):+.1f}")
        print(f"{p}at 25 Elo, corrected estimate over all tests (median): {np.median(elo):+.1f}")
        print(f"{p}at 25 Elo, P(estimate > 25): {np.mean(elo > 25):.3f}")
        print(f"{p}at 25 Elo, 95% interval covers 25: "
              f"{100 * np.mean((lo <= 25) & (25 <= hi)):.1f}%")


if __name__ == "__main__":
    main()
