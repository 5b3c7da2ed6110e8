"""How often the 95% intervals of the two ratings hold the true strength, and how far the
estimates are from it: the pairwise Bradley-Terry Elo (kdtourney.stats.ratings) and the
Plackett-Luce Elo on whole finishing orders (kdtourney.stats.plackett_luce).

    python benchmarks/bench_ratings_coverage.py [--reps 10] [--games 100,1000,10000]
                                                [--players 2,3,4] [--boot 200]

Each replicate is a tournament of 5 entrants of known Elo (-200, -100, 0, 100, 200): blocks of
one deal played in every rotation of its seats by a draw of the entrants, each game a
Plackett-Luce draw (strength + Gumbel noise). Prints one line per (players, games, model):
the share of (replicate, entrant) intervals holding the truth (goal 93-97%; with --reps R its
standard error is about sqrt(0.05 * 0.95 / (5 R))), the root mean square error and the mean
interval width, in Elo. The default run is short; docs/ratings.md gives a longer run's figures.
"""

import argparse
import time

import numpy as np
import pandas as pd

from kdtourney.stats.outcomes import ELO_PER_NAT
from kdtourney.stats.plackett_luce import bootstrap_pl
from kdtourney.stats.ratings import bootstrap_elo

TRUTH = np.array([-200.0, -100.0, 0.0, 100.0, 200.0])
NAMES = np.array([f"e{k}" for k in range(len(TRUTH))])


def tournament(rng, games: int, n: int) -> pd.DataFrame:
    """`games` games (rounded up to whole blocks) of `n` players: each block a draw of `n`
    entrants in every rotation of the seats."""
    blocks = -(-games // n)
    who = np.argsort(rng.random((blocks, len(TRUTH))), axis=1)[:, :n]
    seats = np.stack([np.roll(who, -r, axis=1) for r in range(n)], axis=1).reshape(-1, n)
    perf = TRUTH[seats] / ELO_PER_NAT + rng.gumbel(size=seats.shape)
    rank = (-perf).argsort(axis=1).argsort(axis=1) + 1
    G = len(seats)
    return pd.DataFrame({"game": np.repeat(np.arange(G), n),
                         "block": np.repeat(np.arange(G) // n, n), "n_players": n,
                         "seat": np.tile(np.arange(n), G), "entrant": NAMES[seats.ravel()],
                         "rank": rank.ravel()})


def run(reps: int, games: int, n: int, boot: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    hold = {"elo": [], "pl": []}
    err = {"elo": [], "pl": []}
    width = {"elo": [], "pl": []}
    truth = pd.Series(TRUTH - TRUTH.mean(), index=NAMES)
    for rep in range(reps):
        df = tournament(rng, games, n)
        for model, fit in (("elo", bootstrap_elo), ("pl", bootstrap_pl)):
            t = fit(df, n_boot=boot, seed=rep)
            tr = truth.reindex(t.index)
            hold[model] += list((t["lo"] <= tr) & (tr <= t["hi"]))
            err[model] += list(t["elo"] - tr)
            width[model] += list(t["hi"] - t["lo"])
    return {m: (np.mean(hold[m]), float(np.sqrt(np.mean(np.square(err[m])))),
                float(np.mean(np.where(np.isfinite(width[m]), width[m], np.nan))))
            for m in hold}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--games", default="100,1000,10000")
    ap.add_argument("--players", default="2,3,4")
    ap.add_argument("--boot", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(f"reps {a.reps}, bootstrap {a.boot}, truth Elo {TRUTH.tolist()}")
    print("players   games  model  coverage  rmse   width")
    for n in (int(x) for x in a.players.split(",")):
        for games in (int(x) for x in a.games.split(",")):
            t = time.perf_counter()
            out = run(a.reps, games, n, a.boot, a.seed)
            for model, (cov, rmse, w) in out.items():
                print(f"{n:7d} {games:7d}  {model:5s}  {cov:7.1%}  {rmse:6.1f} {w:6.1f}")
            print(f"  ({time.perf_counter() - t:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
