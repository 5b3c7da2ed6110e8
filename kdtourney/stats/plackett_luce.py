"""Plackett-Luce ratings on whole finishing orders, on the Elo scale of the pairwise Bradley-Terry
fit and with the same block bootstrap (kdtourney.stats.ratings; the model, its ties and what
it was measured to do: docs/ratings.md).

    order_counts(results)          the results as the stages of every game's finishing order
                                   (who finished first among the seats still in), per block
    fit_pl(results, anchor)        Plackett-Luce Elo per entrant, strongest first (a Series)
    bootstrap_pl(results, n_boot)  with block-bootstrap percentile intervals, a perfect record
                                   bounded as `ratings.bootstrap_elo` bounds it

A game of n seats is n - 1 stages: the best of the seats still in finishes next. Seats that share
a place count as each of their orders, equally weighted, so a 2-player game is exactly one
Bradley-Terry comparison (a shared place half a win each). `results` is the store's results table
(``game``, ``block``, ``entrant``, ``rank``; ``seat`` orders equal ranks) or an OrderCounts.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kdtourney.stats.descriptive import block_resamples
from kdtourney.stats.outcomes import ELO_PER_NAT
from kdtourney.stats.ratings import BlockRecords, anchored, interval_table, pair_counts

__all__ = ["OrderCounts", "order_counts", "fit_pl", "bootstrap_pl", "SEATS"]

SEATS = 4  # the most seats of a stage (a Kingdomino table)
_PRIOR = 1.0  # as the pairwise fit's: one virtual drawn game against strength 0 per entrant
_CELLS = 4_000_000  # a batch of fits holds about this many (resample, stage, seat) cells


@dataclass(frozen=True)
class OrderCounts(BlockRecords):
    """The stages of every game, aggregated per (block, stage kind).

    A stage kind ``t`` is the row ``members[t]``: the entrant that finished next first, then the
    others still in (entrant indexes, ascending, -1 where the table had fewer seats). Record ``r``
    says that block ``rec_block[r]`` holds ``rec_w[r]`` stages of kind ``rec_term[r]`` (a
    fraction where a shared place splits a game into its orders). Blocks are numbered by their
    first game index, as in `ratings.PairCounts`, and records are sorted by block.
    """

    entrants: tuple[str, ...]
    blocks: np.ndarray
    members: np.ndarray
    rec_block: np.ndarray
    rec_term: np.ndarray
    rec_w: np.ndarray

    @property
    def n_terms(self) -> int:
        return len(self.members)

    def totals(self, block_weights: np.ndarray | None = None) -> np.ndarray:
        """Stages per kind, each block weighted by ``block_weights``."""
        w = self.rec_w if block_weights is None else block_weights[self.rec_block] * self.rec_w
        return np.bincount(self.rec_term, w, minlength=self.n_terms)


def _stages(order: np.ndarray) -> np.ndarray:
    """The stage rows (G * (n - 1), SEATS) of finishing orders `order` (G, n): the next to finish
    first, the rest ascending, -1 beyond."""
    G, n = order.shape
    rows = np.full((G, n - 1, SEATS), -1, dtype=np.int64)
    for k in range(n - 1):
        rows[:, k, 0] = order[:, k]
        rows[:, k, 1:n - k] = np.sort(order[:, k + 1:], axis=1)
    return rows.reshape(-1, SEATS)


def _tied_orders(codes: np.ndarray, ranks: np.ndarray) -> list[np.ndarray]:
    """Every finishing order of one game consistent with its ranks (seats sharing a place in
    each of their orders)."""
    groups = [list(codes[ranks == r]) for r in np.unique(ranks)]
    return [np.concatenate(choice) for choice in
            itertools.product(*(list(itertools.permutations(g)) for g in groups))]


def _game_stages(results: pd.DataFrame, code: pd.Series):
    """(stage rows, weight per row, game index per row) of every game of `results`."""
    order = ["game", "rank", "seat"] if "seat" in results.columns else ["game", "rank"]
    rows = results.sort_values(order, kind="stable")
    game = rows["game"].to_numpy()
    codes = code.reindex(rows["entrant"].astype(str)).to_numpy()
    rank = rows["rank"].to_numpy(dtype=float)
    starts = np.r_[0, np.flatnonzero(game[1:] != game[:-1]) + 1]
    sizes = np.diff(np.r_[starts, len(game)])
    tied = np.zeros(len(starts), dtype=bool)
    same = np.r_[False, (rank[1:] == rank[:-1]) & (game[1:] == game[:-1])]
    tied[np.searchsorted(starts, np.flatnonzero(same), side="right") - 1] = True
    parts, weights, games = [], [], []
    for n in np.unique(sizes[sizes >= 2]):
        plain = np.flatnonzero((sizes == n) & ~tied)
        if len(plain):
            at = starts[plain][:, None] + np.arange(n)
            parts.append(_stages(codes[at]))
            weights.append(np.ones(len(plain) * (n - 1)))
            games.append(np.repeat(game[starts[plain]], n - 1))
    for g in np.flatnonzero(tied):  # rare: every order of the shared places, equally weighted
        at = slice(starts[g], starts[g] + sizes[g])
        orders = _tied_orders(codes[at], rank[at])
        parts.append(_stages(np.array(orders)))
        weights.append(np.full(len(orders) * (sizes[g] - 1), 1.0 / len(orders)))
        games.append(np.full(len(orders) * (sizes[g] - 1), game[starts[g]]))
    if not parts:
        return np.zeros((0, SEATS), dtype=np.int64), np.zeros(0), np.zeros(0, dtype=game.dtype)
    return np.concatenate(parts), np.concatenate(weights), np.concatenate(games)


def order_counts(results: pd.DataFrame) -> OrderCounts:
    """Reduce a results table (one row per player per game) to :class:`OrderCounts`. A stage
    among seats of one entrant only says nothing and is left out."""
    if len(results) == 0:
        raise ValueError("results is empty")
    entrants = np.array(sorted(results["entrant"].astype(str).unique()), dtype=object)
    code = pd.Series(np.arange(len(entrants)), index=entrants)
    first_game = results.groupby("block")["game"].min().sort_values(kind="stable")
    block_labels = first_game.index.to_numpy()
    block_of_game = results.groupby("game")["block"].first()
    block_number = pd.Series(np.arange(len(block_labels)), index=block_labels)
    members, weight, games = _game_stages(results, code)
    others = np.where(members[:, 1:] >= 0, members[:, 1:], members[:, :1])
    informative = (others != members[:, :1]).any(axis=1)
    members, weight, games = members[informative], weight[informative], games[informative]
    base = len(entrants) + 1
    key = ((members + 1) * base ** np.arange(SEATS)).sum(axis=1)
    ukey, term = np.unique(key, return_inverse=True)
    blocks = block_number.reindex(block_of_game.reindex(games).to_numpy()).to_numpy()
    rkey, rec = np.unique(blocks.astype(np.int64) * len(ukey) + term, return_inverse=True)
    first = np.unique(term, return_index=True)[1]
    return OrderCounts(entrants=tuple(str(e) for e in entrants), blocks=block_labels,
                       members=members[first], rec_block=rkey // max(len(ukey), 1),
                       rec_term=rkey % max(len(ukey), 1),
                       rec_w=np.bincount(rec, weight, minlength=len(rkey)))


# --------------------------------------------------------------------------------------------------
# Fitting
# --------------------------------------------------------------------------------------------------


def _terms(theta: np.ndarray, members: np.ndarray):
    """(strengths of the stages' seats (M, T, SEATS), -inf where empty; their log-sum-exp (M, T);
    the seats' chances of finishing next (M, T, SEATS))."""
    th = np.where(members >= 0, theta[:, np.maximum(members, 0)], -np.inf)
    top = th[:, :, :1]  # the winner's seat is never empty
    e = np.exp(th - top)
    total = e.sum(axis=2)
    return th, top[:, :, 0] + np.log(total), e / total[:, :, None]


def _loglik(theta, w, members, prior):
    th, lse, _ = _terms(theta, members)
    ll = (w * (th[:, :, 0] - lse)).sum(axis=1)
    return ll - prior * 0.5 * (np.logaddexp(0.0, -theta) + np.logaddexp(0.0, theta)).sum(axis=1)


def _newton_step(theta, w, members, prior):
    """The Newton step of the penalised log-likelihood at `theta` (M, K): its gradient scattered
    from the stages' seats, its curvature sum_t w_t (diag p_t - p_t p_t'), batched by bincount."""
    M, K = theta.shape
    _, _, p = _terms(theta, members)
    seat = np.maximum(members, 0)
    offset = (np.arange(M) * K)[:, None, None]
    win = np.zeros((1, 1, SEATS))
    win[..., 0] = 1.0
    grad = np.bincount((offset + seat[None]).ravel(), (w[:, :, None] * (win - p)).ravel(),
                       minlength=M * K).reshape(M, K)
    q = 0.5 * (1.0 + np.tanh(0.5 * theta))
    grad += prior * (0.5 - q)
    pair = (seat[:, :, None] * K + seat[:, None, :])[None]  # (1, T, SEATS, SEATS)
    curve = w[:, :, None, None] * (np.eye(SEATS) * p[:, :, :, None] - p[:, :, :, None]
                                   * p[:, :, None, :])
    A = np.bincount((offset[..., None] * K + pair).ravel(), curve.ravel(),
                    minlength=M * K * K).reshape(M, K, K)
    A += np.eye(K) * (prior * q * (1.0 - q))[:, :, None]
    return np.linalg.solve(A, grad[:, :, None])[:, :, 0]


def _fit_batch(w, members, K, prior=_PRIOR, theta=None, tol=1e-10, max_iter=100):
    """Penalised Plackett-Luce fits of stage counts `w` (M, T): strengths (M, K) in natural-log
    units, not anchored; damped Newton with backtracking from `theta` (default 0), as
    `ratings`' fit (the objective is strictly concave for prior > 0)."""
    if prior <= 0:
        raise ValueError("prior must be positive (it keeps the fit finite)")
    w = np.atleast_2d(np.asarray(w, dtype=float))
    theta = np.zeros((len(w), K)) if theta is None else np.array(theta, dtype=float)
    ll = _loglik(theta, w, members, prior)
    active = np.arange(len(w))
    for _ in range(max_iter):
        if not len(active):
            break
        th, wa = theta[active], w[active]
        step = _newton_step(th, wa, members, prior)
        t = np.ones(len(active))
        for _ in range(40):  # halve the step where the objective did not improve
            cand = th + t[:, None] * step
            new = _loglik(cand, wa, members, prior)
            bad = new < ll[active] - 1e-12 * (1.0 + np.abs(ll[active]))
            if not bad.any():
                break
            t = np.where(bad, 0.5 * t, t)
        theta[active], ll[active] = cand, new
        active = active[~(np.abs(t[:, None] * step).max(axis=1) < tol)]
    return theta


def _present(w, oc: OrderCounts) -> np.ndarray:
    """(M, K): the entrant sits in a stage with weight."""
    seats = np.zeros((oc.n_terms, oc.n_entrants))
    for j in range(SEATS):
        used = np.flatnonzero(oc.members[:, j] >= 0)
        seats[used, oc.members[used, j]] = 1.0
    return (np.atleast_2d(w) > 0) @ seats > 0


def _fit_counts(oc: OrderCounts, w, anchor, prior, theta=None) -> np.ndarray:
    w = np.atleast_2d(w)
    theta = _fit_batch(w, oc.members, oc.n_entrants, prior, theta)
    return anchored(theta * ELO_PER_NAT, _present(w, oc), oc.entrants, anchor)


def fit_pl(results: pd.DataFrame | OrderCounts, anchor=None, prior: float = _PRIOR) -> pd.Series:
    """Maximum likelihood Plackett-Luce Elo from all games at once: `ratings.fit_elo`'s
    arguments and its Series (name ``"pl"``), strongest first."""
    oc = results if isinstance(results, OrderCounts) else order_counts(results)
    elo = _fit_counts(oc, oc.totals(), anchor, prior)[0]
    s = pd.Series(elo, index=pd.Index(oc.entrants, name="entrant"), name="pl")
    return s.sort_values(ascending=False, kind="stable")


def _draws(oc: OrderCounts, n_boot: int, rng, anchor, prior, start) -> np.ndarray:
    """Bootstrap draws (n_boot, K): the blocks resampled as `ratings.bootstrap_elo` resamples
    them (the same seed, the same resamples), each refitted from the full fit `start`."""
    out = np.empty((n_boot, oc.n_entrants))
    rows = max(1, _CELLS // max(1, oc.n_terms * SEATS * SEATS))
    done = 0
    for counts in block_resamples(rng, n_boot, oc.n_blocks):
        for lo in range(0, len(counts), rows):
            part = counts[lo:lo + rows]
            w = np.stack([oc.totals(c) for c in part])
            theta = np.repeat(start[None], len(part), axis=0)
            out[done:done + len(part)] = _fit_counts(oc, w, anchor, prior, theta)
            done += len(part)
    return out


def bootstrap_pl(results: pd.DataFrame, n_boot: int = 1000, seed: int = 0, anchor=None,
                 level: float = 0.95, prior: float = _PRIOR, return_draws: bool = False):
    """Plackett-Luce Elo with block-bootstrap percentile intervals: `ratings.bootstrap_elo`'s
    arguments, table (``elo, lo, hi, games, record``, ranked by `ratings.rank_key`) and draws
    (``attrs["draws"]``). A perfect record (an entrant ahead of, or behind, every other entrant
    in every game) gets the pairwise fit's one-sided bound (`ratings.record_bounds`): the pairwise
    outcomes of Plackett-Luce are Bradley-Terry's."""
    oc = order_counts(results)
    start = _fit_batch(oc.totals()[None], oc.members, oc.n_entrants, prior)[0]
    point = anchored(start[None] * ELO_PER_NAT, _present(oc.totals()[None], oc), oc.entrants,
                     anchor)[0]
    draws = _draws(oc, n_boot, np.random.default_rng(seed), anchor, prior, start)
    games = results.groupby(results["entrant"].astype(str))["game"].nunique()
    table = interval_table(point, draws, oc.entrants, pair_counts(results), level, anchor, prior,
                           games)
    return (table, table.attrs["draws"]) if return_draws else table

