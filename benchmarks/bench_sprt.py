"""What `kdtourney sprt` promises, measured on simulated duplicate blocks.

    python benchmarks/bench_sprt.py [--runs 20000] [--players 2,4] [--seed 0] [--min-blocks 15]

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
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from sprt_support import decisions, duplicate_blocks  # noqa: E402

from kdtourney.arena.sprt import DEFAULT_MIN_BLOCKS  # noqa: E402
from kdtourney.outcomes import score_to_elo  # noqa: E402

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--players", default="2,4")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-blocks", type=int, default=DEFAULT_MIN_BLOCKS)
    args = ap.parse_args()
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
        print(f"{p}at 25 Elo, 95% interval covers 25: {100 * np.mean((lo <= 25) & (25 <= hi)):.1f}%")


if __name__ == "__main__":
    main()
