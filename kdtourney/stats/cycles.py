"""Cycles in the head-to-head matrix and a game-theoretic ranking of the population (what they
mean: docs/ratings.md).

    pair_scores(results, n_boot)   every pair's pairwise score with its block-bootstrap interval
    cycles(scores)                 the three-entrant cycles (A beats B, B beats C, C beats A)
    meta_ranking(scores)           alpha-Rank (OpenSpiel) over the pairwise meta-game: the share
                                   of time an evolving population spends on each entrant; None
                                   without open_spiel (the rl extra)

`scores` is `pair_scores`' PairScores. A cycle is named from the point estimates; ``clear`` when
every one of its intervals leaves out 0.5.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kdtourney.stats.descriptive import block_resamples, percentile_interval
from kdtourney.stats.outcomes import elo_to_score
from kdtourney.stats.ratings import fit_elo, pair_counts

__all__ = ["PairScores", "pair_scores", "Cycle", "cycles", "meta_ranking", "ALPHA_EPS"]

ALPHA_EPS = 0.01  # alpha-Rank's infinite-alpha noise: the chance a worse entrant takes over


@dataclass(frozen=True)
class PairScores:
    """K x K matrices (entrant order `entrants`): ``score`` of the row against the column (wins
    plus half the ties over meetings; NaN where they never met, 0.5 on the diagonal), its
    interval ``lo`` and ``hi``, and the ``meetings``; ``elo`` the pairwise Elo fit, which fills
    the pairs that never met in `meta_ranking`."""

    entrants: tuple[str, ...]
    score: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    meetings: np.ndarray
    elo: np.ndarray

    def frame(self, what: str = "score") -> pd.DataFrame:
        return pd.DataFrame(getattr(self, what), index=list(self.entrants),
                            columns=list(self.entrants))


def _matrix(i, j, K, ij, ji, diagonal=np.nan) -> np.ndarray:
    """A K x K matrix with `ij` at (i, j), `ji` at (j, i), `diagonal` on it, NaN elsewhere."""
    out = np.full((K, K), np.nan)
    out[i, j], out[j, i] = ij, ji
    np.fill_diagonal(out, diagonal)
    return out


def pair_scores(results: pd.DataFrame, n_boot: int = 1000, seed: int = 0,
                level: float = 0.95) -> PairScores:
    """Every pair's score (`PairScores`) from the pairwise outcomes of every game; intervals
    from the blocks resampled as the ratings resample them."""
    pc = pair_counts(results)
    K, i, j = pc.n_entrants, pc.pair_i, pc.pair_j
    w, n = pc.totals()
    draws = np.empty((n_boot, pc.n_pairs))
    rows = max(1, 4_000_000 // max(1, len(pc.rec_block)))
    done = 0
    with np.errstate(invalid="ignore", divide="ignore"):
        score = w / n
        for chunk in block_resamples(np.random.default_rng(seed), n_boot, pc.n_blocks):
            for counts in np.array_split(chunk, -(-len(chunk) // rows)):
                c = counts[:, pc.rec_block]  # (m, records): each record's weight per resample
                at = (np.arange(len(c))[:, None] * pc.n_pairs + pc.rec_pair).ravel()
                size = len(c) * pc.n_pairs
                wr = np.bincount(at, (c * pc.rec_w).ravel(), size).reshape(len(c), -1)
                nr = np.bincount(at, (c * pc.rec_n).ravel(), size).reshape(len(c), -1)
                draws[done:done + len(c)] = wr / nr
                done += len(c)
    lo, hi = percentile_interval(draws, level) if n_boot else (score * np.nan, score * np.nan)
    return PairScores(entrants=pc.entrants, score=_matrix(i, j, K, score, 1.0 - score, 0.5),
                      lo=_matrix(i, j, K, lo, 1.0 - hi), hi=_matrix(i, j, K, hi, 1.0 - lo),
                      meetings=_matrix(i, j, K, n, n, 0.0),
                      elo=fit_elo(pc).reindex(list(pc.entrants)).to_numpy())


@dataclass(frozen=True)
class Cycle:
    """Three entrants, each beating the next and the last the first: ``edges`` (winner, loser,
    score, lo, hi) in that order; ``clear`` when every interval is above 0.5."""

    edges: tuple

    @property
    def clear(self) -> bool:
        return all(lo > 0.5 for _, _, _, lo, _ in self.edges)

    @property
    def weakest(self) -> float:
        return min(lo for _, _, _, lo, _ in self.edges)

    def text(self) -> str:
        """'A beats B (62% [55%, 69%]), B beats C (...), C beats A (...)'."""
        return ", ".join(f"{a} beats {b} ({s:.0%} [{lo:.0%}, {hi:.0%}])"
                         for a, b, s, lo, hi in self.edges)


def cycles(scores: PairScores, limit: int = 10) -> list[Cycle]:
    """The three-entrant cycles of the point estimates (each pair met; a cycle among more
    entrants always holds one of three where every pair met), the clearest first (by its
    weakest interval's lower end), at most `limit`."""
    S, names = scores.score, scores.entrants
    found = []
    for a, b, c in itertools.combinations(range(len(names)), 3):
        for x, y, z in ((a, b, c), (a, c, b)):
            if S[x, y] > 0.5 and S[y, z] > 0.5 and S[z, x] > 0.5:
                found.append(Cycle(tuple(
                    (names[p], names[q], S[p, q], scores.lo[p, q], scores.hi[p, q])
                    for p, q in ((x, y), (y, z), (z, x)))))
    found.sort(key=lambda cycle: -cycle.weakest)
    return found[:limit]


def meta_ranking(scores: PairScores) -> pd.Series | None:
    """alpha-Rank (infinite alpha, noise `ALPHA_EPS`) of the symmetric meta-game whose payoff is
    the row's score against the column, pairs that never met filled from the pairwise Elo: the
    stationary share of each entrant, largest first. None without open_spiel."""
    try:  # an optional dependency: open_spiel, in the rl extra
        from open_spiel.python.egt import alpharank
    except ImportError:
        return None
    S = scores.score.copy()
    predicted = elo_to_score(scores.elo[:, None] - scores.elo[None, :])
    S = np.where(np.isnan(S), predicted, S)
    pi = alpharank.compute([S], use_inf_alpha=True, inf_alpha_eps=ALPHA_EPS)[2]
    share = pd.Series(np.clip(pi, 0.0, 1.0), index=list(scores.entrants), name="alpha_rank")
    return share.sort_values(ascending=False, kind="stable")
