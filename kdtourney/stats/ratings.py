"""Elo ratings from tournament results: Bradley-Terry maximum likelihood over every game's
pairwise outcomes, block-bootstrap intervals, likelihood of superiority (the model, its prior and
the bounds of perfect records: docs/ratings.md).

    pair_counts(results)           the results as wins and meetings per (block, entrant pair)
    fit_elo(results, anchor)       Elo per entrant, strongest first (a Series)
    fit_totals(wins, games)        the same fit from K x K totals, mean 0
    bootstrap_elo(results, n_boot) Elo with intervals over resampled blocks (interval_table, also
                                   Plackett-Luce's: bootstrap_interval's, a perfect record's bound)
    rank_key(table)                what the entrants are ranked by
    los_matrix(draws)              P(row entrant stronger than column entrant)
    elo_history(results, points)   Elo after growing prefixes of the blocks
    record_bounds(pc), anchored    a perfect record's one-sided bound; fits shifted to the scale

`results` is the store's results table (or a PairCounts); `anchor` None (mean 0) or (name, Elo).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd

from kdtourney.stats.descriptive import block_resamples, percentile_interval
from kdtourney.stats.outcomes import ELO_PER_NAT, pair_outcomes

__all__ = [
    "PairCounts",
    "pair_counts",
    "fit_elo",
    "fit_totals",
    "bootstrap_elo",
    "interval_table",
    "bootstrap_interval",
    "rank_key",
    "los_matrix",
    "elo_history",
    "anchored",
    "record_bounds",
]

_DEFAULT_PRIOR = 1.0


# --------------------------------------------------------------------------------------------------
# Aggregation
# --------------------------------------------------------------------------------------------------


class BlockRecords:
    """What PairCounts and plackett_luce.OrderCounts share: entrants and blocks by number."""

    entrants: tuple[str, ...]
    blocks: np.ndarray

    @property
    def n_entrants(self) -> int:
        return len(self.entrants)

    @property
    def n_blocks(self) -> int:
        return len(self.blocks)


@dataclass(frozen=True)
class PairCounts(BlockRecords):
    """Pairwise outcomes aggregated per (block, entrant pair).

    Entrant pairs are canonical (``pair_i < pair_j``, indices into ``entrants``). Record ``r`` says
    that in block ``rec_block[r]`` the pair ``rec_pair[r]`` met ``rec_n[r]`` times and ``pair_i``
    scored ``rec_w[r]`` of those (wins + half ties). Blocks are numbered 0..n_blocks-1 in order of
    their first game index and records are sorted by block, so the records of the first ``k`` blocks
    are a prefix.
    """

    entrants: tuple[str, ...]
    blocks: np.ndarray  # original block labels, in block-number order
    block_games: np.ndarray  # number of games per block
    pair_i: np.ndarray
    pair_j: np.ndarray
    rec_block: np.ndarray
    rec_pair: np.ndarray
    rec_w: np.ndarray
    rec_n: np.ndarray

    @property
    def n_pairs(self) -> int:
        return len(self.pair_i)

    def totals(self, block_weights: np.ndarray | None = None, n_records: int | None = None):
        """(wins, meetings) per canonical pair, each block weighted by ``block_weights``."""
        rb, rp, rw, rn = self.rec_block, self.rec_pair, self.rec_w, self.rec_n
        if n_records is not None:
            rb, rp, rw, rn = rb[:n_records], rp[:n_records], rw[:n_records], rn[:n_records]
        if block_weights is None:
            w = np.bincount(rp, rw, minlength=self.n_pairs)
            n = np.bincount(rp, rn, minlength=self.n_pairs)
        else:
            c = block_weights[rb]
            w = np.bincount(rp, c * rw, minlength=self.n_pairs)
            n = np.bincount(rp, c * rn, minlength=self.n_pairs)
        return w, n


def pair_counts(results: pd.DataFrame) -> PairCounts:
    """Reduce a results table (one row per player per game) to :class:`PairCounts`, from the
    pairwise outcomes of :func:`kdtourney.stats.outcomes.pair_outcomes` (which leave out
    self-play)."""
    if len(results) == 0:
        raise ValueError("results is empty")
    pairs = pair_outcomes(results)
    entrants = np.array(sorted(results["entrant"].astype(str).unique()), dtype=object)
    code = pd.Series(np.arange(len(entrants)), index=entrants)

    # Blocks numbered by their first game index.
    first_game = results.groupby("block")["game"].min().sort_values(kind="stable")
    block_labels = first_game.index.to_numpy()
    block_number = pd.Series(np.arange(len(block_labels)), index=block_labels)
    block_games = (results.groupby("block")["game"].nunique().reindex(block_labels)
                   .to_numpy(dtype=np.int64))

    K = len(entrants)
    a = code.reindex(pairs["entrant_a"]).to_numpy()
    b = code.reindex(pairs["entrant_b"]).to_numpy()
    i, j = np.minimum(a, b), np.maximum(a, b)
    w = np.where(a == i, pairs["score"], 1.0 - pairs["score"])
    key = block_number.reindex(pairs["block"]).to_numpy() * (K * K) + i * K + j
    ukey, inv = np.unique(key, return_inverse=True)  # sorted => sorted by block
    rec_w = np.bincount(inv, w, minlength=len(ukey))
    rec_n = np.bincount(inv, minlength=len(ukey)).astype(float)
    upair, rec_pair = np.unique(ukey % (K * K), return_inverse=True)
    return PairCounts(
        entrants=tuple(str(e) for e in entrants),
        blocks=block_labels,
        block_games=block_games,
        pair_i=upair // K,
        pair_j=upair % K,
        rec_block=ukey // (K * K),
        rec_pair=rec_pair.astype(np.int64),
        rec_w=rec_w,
        rec_n=rec_n,
    )


# --------------------------------------------------------------------------------------------------
# Fitting
# --------------------------------------------------------------------------------------------------


def _log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _fit_batch(w, n, pair_i, pair_j, K, prior=_DEFAULT_PRIOR, tol=1e-10, max_iter=100):
    """Batched penalised Bradley-Terry fit.

    ``w``, ``n``: arrays (M, n_pairs) of wins of ``pair_i`` over ``pair_j`` and meetings. Returns
    strengths theta (M, K) in natural-log units (not anchored). Damped Newton with backtracking on
    the penalised log-likelihood, which is strictly concave for ``prior > 0``.
    """
    w = np.atleast_2d(np.asarray(w, dtype=float))
    n = np.atleast_2d(np.asarray(n, dtype=float))
    M = w.shape[0]
    if prior <= 0:
        raise ValueError("prior must be positive (it keeps the fit finite)")
    W = np.zeros((M, K, K))
    N = np.zeros((M, K, K))
    W[:, pair_i, pair_j] = w
    W[:, pair_j, pair_i] = n - w
    N[:, pair_i, pair_j] = n
    N[:, pair_j, pair_i] = n
    half = 0.5 * prior
    theta = np.zeros((M, K))
    ll = _loglik(theta, W, half)
    eye = np.eye(K)
    active = np.ones(M, dtype=bool)
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        th = theta[idx]
        d = th[:, :, None] - th[:, None, :]
        p = _sigmoid(d)
        q = _sigmoid(th)
        grad = (W[idx] - N[idx] * p).sum(axis=2) + prior * (0.5 - q)
        h = N[idx] * p * (1.0 - p)
        A = -h + eye * (h.sum(axis=2) + prior * q * (1.0 - q))[:, :, None]
        step = np.linalg.solve(A, grad[:, :, None])[:, :, 0]
        # backtracking: halve the step where the objective did not improve
        t = np.ones(idx.size)
        ll_old = ll[idx]
        for _ in range(40):
            cand = th + t[:, None] * step
            ll_new = _loglik(cand, W[idx], half)
            bad = ll_new < ll_old - 1e-12 * (1.0 + np.abs(ll_old))
            if not bad.any():
                break
            t = np.where(bad, 0.5 * t, t)
        theta[idx] = cand
        ll[idx] = ll_new
        done = np.abs(t[:, None] * step).max(axis=1) < tol
        active[idx[done]] = False
    return theta


def _loglik(th, W, half):
    """Penalised log-likelihood per batch row (ties as half wins; prior = virtual draws vs 0)."""
    d = th[:, :, None] - th[:, None, :]
    ll = (W * _log_sigmoid(d)).sum(axis=(1, 2))
    ll += (half * (_log_sigmoid(th) + _log_sigmoid(-th))).sum(axis=1)
    return ll


def anchored(elo: np.ndarray, present: np.ndarray, entrants, anchor) -> np.ndarray:
    """Rows of ``elo`` (M, K) shifted to mean 0, or to ``anchor`` (name, Elo); absent entrants
    (``present`` False: no comparison) NaN. KeyError for an anchor not among ``entrants``."""
    elo = np.where(present, elo, np.nan)
    if anchor is None:
        shift = np.nanmean(elo, axis=1, keepdims=True)
        return elo - shift
    name, value = anchor
    try:
        k = list(entrants).index(str(name))
    except ValueError:
        raise KeyError(f"anchor entrant {name!r} not among {list(entrants)}") from None
    return elo - elo[:, k : k + 1] + float(value)


def _present(n, pc: PairCounts):
    """(M, K) mask: entrant has at least one comparison."""
    n = np.atleast_2d(n)
    cnt = np.zeros((n.shape[0], pc.n_entrants))
    np.add.at(cnt.T, pc.pair_i, n.T)
    np.add.at(cnt.T, pc.pair_j, n.T)
    return cnt > 0


def _fit_counts(pc: PairCounts, w, n, anchor, prior):
    theta = _fit_batch(w, n, pc.pair_i, pc.pair_j, pc.n_entrants, prior=prior)
    return anchored(theta * ELO_PER_NAT, _present(n, pc), pc.entrants, anchor)


def fit_elo(results: pd.DataFrame | PairCounts, anchor=None,
            prior: float = _DEFAULT_PRIOR) -> pd.Series:
    """Maximum likelihood Bradley-Terry Elo from all games at once.

    Parameters
    ----------
    results : the results table (one row per player per game; uses ``game``, ``block``, ``entrant``,
        ``rank``) or a precomputed :class:`PairCounts`.
    anchor : None for mean-0 ratings, or ``(entrant, elo)`` to pin one entrant.
    prior : virtual drawn games per entrant against a strength-0 opponent (docs/ratings.md);
        keeps ratings finite for an entrant that won or lost everything.

    Returns a Series (index entrant, name ``"elo"``) sorted from strongest to weakest.
    """
    pc = results if isinstance(results, PairCounts) else pair_counts(results)
    w, n = pc.totals()
    elo = _fit_counts(pc, w[None], n[None], anchor, prior)[0]
    s = pd.Series(elo, index=pd.Index(pc.entrants, name="entrant"), name="elo")
    return s.sort_values(ascending=False, kind="stable")


def fit_totals(wins, games, prior: float = _DEFAULT_PRIOR) -> np.ndarray:
    """The fit of `fit_elo` (mean 0, entrants without games included at 0) from K x K totals:
    wins[i, j], i's score against j (ties half), and games[i, j], their comparisons."""
    wins, games = np.asarray(wins, float), np.asarray(games, float)
    i, j = np.triu_indices(len(wins), 1)
    theta = _fit_batch(wins[i, j][None], games[i, j][None], i, j, len(wins), prior=prior)[0]
    elo = theta * ELO_PER_NAT
    return elo - elo.mean()


def _bootstrap_draws(pc: PairCounts, n_boot, rng, anchor, prior, n_blocks=None, batch=256):
    """Bootstrap Elo draws (n_boot, K) over the first ``n_blocks`` blocks."""
    B = pc.n_blocks if n_blocks is None else int(n_blocks)
    n_rec = int(np.searchsorted(pc.rec_block, B))  # records of the first B blocks
    out = np.empty((n_boot, pc.n_entrants))
    start = 0
    for counts in block_resamples(rng, n_boot, B, width=pc.n_blocks, rows=batch):
        m = len(counts)
        ws = np.empty((m, pc.n_pairs))
        ns = np.empty((m, pc.n_pairs))
        for r in range(m):
            ws[r], ns[r] = pc.totals(counts[r], n_rec)
        out[start : start + m] = _fit_counts(pc, ws, ns, anchor, prior)
        start += m
    return out


def bootstrap_elo(
    results: pd.DataFrame | PairCounts,
    n_boot: int = 1000,
    seed: int = 0,
    anchor=None,
    level: float = 0.95,
    prior: float = _DEFAULT_PRIOR,
    return_draws: bool = False,
):
    """Elo with block-bootstrap percentile intervals.

    Blocks are resampled with replacement (as many as there are blocks) and the Bradley-Terry fit is
    repeated on each resample.  ``elo`` is the fit on the full data, ``lo``/``hi`` the
    `bootstrap_interval` of the draws (percentiles widened for few blocks; same anchoring).

    Returns a DataFrame indexed by entrant (strongest first) with columns ``elo, lo, hi, games``
    (``games`` = games the entrant played, counted once per game). The draws (a DataFrame, a row per
    resample and a column per entrant) are stored in ``table.attrs["draws"]`` and, with
    ``return_draws=True``, returned as a second value:
    ``table, draws = bootstrap_elo(..., return_draws=True)``. Pass either to :func:`los_matrix`.
    An entrant absent from a resample is NaN in that draw and ignored.
    """
    if isinstance(results, PairCounts):
        pc, games = results, None
    else:
        pc = pair_counts(results)
        games = results.groupby(results["entrant"].astype(str))["game"].nunique()
    point = fit_elo(pc, anchor=anchor, prior=prior).reindex(pd.Index(pc.entrants)).to_numpy()
    draws = _bootstrap_draws(pc, n_boot, np.random.default_rng(seed), anchor, prior)
    table = interval_table(point, draws, pc.entrants, pc, level, anchor, prior, games)
    return (table, table.attrs["draws"]) if return_draws else table


def _t_quantile(p: float, dof: int) -> float:
    """Student's t quantile: exact for 1 and 2 degrees of freedom, else the Cornish-Fisher
    expansion in 1/dof (Abramowitz & Stegun 26.7.5; relative error < 1.3e-3 at dof 3 for
    p = 0.975, < 1e-7 from dof 20)."""
    if dof == 1:
        return math.tan(math.pi * (p - 0.5))
    if dof == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = NormalDist().inv_cdf(p)
    g = ((z**3 + z) / 4, (5 * z**5 + 16 * z**3 + 3 * z) / 96,
         (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
         (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160)
    return z + sum(gk / dof ** (k + 1) for k, gk in enumerate(g))


def bootstrap_interval(draws: np.ndarray, level: float, n_blocks: int):
    """(lo, hi) per column of bootstrap draws over `n_blocks` resampled blocks: the percentile
    interval at the level whose normal quantile is t_{(1+level)/2, B-1} sqrt(B / (B-1)), B =
    `n_blocks` (the expanded percentile interval; below two blocks, `level` itself)."""
    # a percentile interval over few blocks is too narrow: its spread is the plug-in one and its
    # quantile a normal one (docs/ratings.md: 91% -> 94% with 25 blocks)
    if n_blocks >= 2:
        p = (1.0 + level) / 2.0
        z = _t_quantile(p, n_blocks - 1) * math.sqrt(n_blocks / (n_blocks - 1))
        level = 1.0 - 2.0 * NormalDist().cdf(-z)
    return percentile_interval(draws, level)


def interval_table(point, draws: np.ndarray, entrants, pc: PairCounts, level: float, anchor,
                   prior: float, games: pd.Series | None = None) -> pd.DataFrame:
    """The rating table of a fit (`bootstrap_elo`, `plackett_luce.bootstrap_pl`): ``elo`` (the
    fit, `point`, in `entrants` order), ``lo, hi`` (`bootstrap_interval` of its `draws` over
    ``pc``'s blocks), ``games`` (per entrant, when given) and ``record``: a perfect record's
    interval is `record_bounds`'; ranked by `rank_key`, the draws (a DataFrame) in
    ``attrs["draws"]``, with ``attrs["level"]`` and ``attrs["n_boot"]``."""
    idx = pd.Index(entrants, name="entrant")
    lo, hi = bootstrap_interval(draws, level, pc.n_blocks)
    table = pd.DataFrame({"elo": point, "lo": lo, "hi": hi}, index=idx)
    if games is not None:
        table["games"] = games.reindex(idx).fillna(0).astype(int).to_numpy()
    record, blo, bhi = record_bounds(pc, level, anchor, prior)
    bound = pd.DataFrame({"record": record, "lo": blo, "hi": bhi}, index=list(pc.entrants))
    bound = bound.reindex(idx)
    perfect = (bound["record"].fillna("") != "").to_numpy()
    table["record"] = bound["record"].fillna("").to_numpy()
    table.loc[perfect, "lo"] = bound.loc[perfect, "lo"].to_numpy()
    table.loc[perfect, "hi"] = bound.loc[perfect, "hi"].to_numpy()
    table = table.loc[rank_key(table).sort_values(ascending=False, kind="stable").index]
    table.attrs.update(draws=pd.DataFrame(draws, columns=idx), level=level, n_boot=len(draws))
    return table


def record_bounds(pc: PairCounts, level: float = 0.95, anchor=None,
                  prior: float = _DEFAULT_PRIOR):
    """(record, lo, hi), arrays in ``pc.entrants`` order: ``record`` "won all" or "lost all" for
    an entrant that won (lost) every comparison, else ""; for those, the one-sided interval: the
    Elo refitted with the entrant's score against each opponent at the binomial bound of a sweep
    over its n blocks, ((1 - level) / 2) ** (1 / n), everyone else as they played, and +-inf on
    the other side (docs/ratings.md); NaN for the others."""
    w, n = pc.totals()
    K = pc.n_entrants
    wins = np.bincount(pc.pair_i, w, K) + np.bincount(pc.pair_j, n - w, K)
    meetings = np.bincount(pc.pair_i, n, K) + np.bincount(pc.pair_j, n, K)
    perfect = [k for k in np.flatnonzero(meetings > 0) if wins[k] in (0, meetings[k])]
    record = np.full(K, "", dtype=object)
    lo, hi = np.full(K, np.nan), np.full(K, np.nan)
    if perfect:
        # each perfect record refitted as the score at its bound: every pair it met scored so
        rows = np.repeat(w[None], len(perfect), axis=0)
        for r, k in enumerate(perfect):
            mine = (pc.pair_i[pc.rec_pair] == k) | (pc.pair_j[pc.rec_pair] == k)
            blocks = len(np.unique(pc.rec_block[mine]))
            bound = ((1.0 - level) / 2.0) ** (1.0 / blocks)  # the lowest score of a sweep
            score = bound if wins[k] == meetings[k] else 1.0 - bound
            rows[r, pc.pair_i == k] = score * n[pc.pair_i == k]
            rows[r, pc.pair_j == k] = (1.0 - score) * n[pc.pair_j == k]
        fits = _fit_counts(pc, rows, np.repeat(n[None], len(perfect), axis=0), anchor, prior)
        for r, k in enumerate(perfect):
            if wins[k] == meetings[k]:
                record[k], lo[k], hi[k] = "won all", fits[r, k], np.inf
            else:
                record[k], lo[k], hi[k] = "lost all", -np.inf, fits[r, k]
    return record, lo, hi


def rank_key(table: pd.DataFrame) -> pd.Series:
    """What the entrants are ranked by, strongest first: the Elo, but for a perfect record, whose
    Elo the prior sets, never past its bound (a sweep at least its lower bound, an entrant that
    lost every comparison at most its upper one), so that no bound ranks above an entrant whose
    Elo it lies below."""
    key = table["elo"].astype(float).copy()
    won, lost = table["record"] == "won all", table["record"] == "lost all"
    key[won] = np.maximum(key[won], table.loc[won, "lo"])
    key[lost] = np.minimum(key[lost], table.loc[lost, "hi"])
    return key


def los_matrix(draws) -> pd.DataFrame:
    """Likelihood of superiority: P(row entrant stronger than column entrant).

    ``draws`` is the bootstrap draws DataFrame (rows = draws, columns = entrants) or the table
    returned by :func:`bootstrap_elo` (its ``attrs["draws"]`` is used). Each cell is the fraction of
    draws in which ``elo_row > elo_col``, ties counted half, over draws where both are defined. The
    diagonal is NaN. Order follows the columns of ``draws`` (or the table's index).
    """
    if isinstance(draws, pd.DataFrame) and "draws" in draws.attrs:
        order = list(draws.index)
        draws = draws.attrs["draws"][order]
    if not isinstance(draws, pd.DataFrame):
        raise TypeError("los_matrix expects the bootstrap draws DataFrame or bootstrap_elo's table")
    x = draws.to_numpy(dtype=float)
    a = x[:, :, None]
    b = x[:, None, :]
    valid = ~(np.isnan(a) | np.isnan(b))
    score = (a > b) + 0.5 * (a == b)
    with np.errstate(invalid="ignore", divide="ignore"):
        los = (score * valid).sum(axis=0) / valid.sum(axis=0)
    np.fill_diagonal(los, np.nan)
    return pd.DataFrame(los, index=draws.columns.copy(), columns=draws.columns.copy())


def elo_history(
    results: pd.DataFrame,
    points: int = 20,
    anchor=None,
    n_boot: int = 100,
    seed: int = 0,
    level: float = 0.95,
    prior: float = _DEFAULT_PRIOR,
) -> pd.DataFrame:
    """Elo against games played, for convergence plots.

    Blocks are ordered by their first game index and the fit is repeated on the first ``k`` blocks
    for ``points`` values of ``k`` evenly spaced up to all blocks (prefixes end on block boundaries
    so that the block bootstrap stays valid; when blocks are contiguous in game index these are game
    prefixes). With ``n_boot > 0`` each prefix also gets block-bootstrap percentile intervals
    (``n_boot=0`` skips them; columns ``lo``/``hi`` are then NaN).

    Returns a long DataFrame with columns ``games`` (games in the prefix), ``blocks``, ``entrant``,
    ``elo``, ``lo``, ``hi``; an entrant with no comparison yet in a prefix is NaN.
    """
    pc = pair_counts(results)
    B = pc.n_blocks
    ks = np.unique(np.clip(np.round(np.linspace(B / points, B, points)).astype(int), 1, B))
    cum_games = np.cumsum(pc.block_games)
    rng = np.random.default_rng(seed)
    n_rec = np.searchsorted(pc.rec_block, ks)
    ws = np.empty((len(ks), pc.n_pairs))
    ns = np.empty((len(ks), pc.n_pairs))
    for r, nr in enumerate(n_rec):
        ws[r], ns[r] = pc.totals(None, int(nr))
    elo = _fit_counts(pc, ws, ns, anchor, prior)
    frames = []
    for r, k in enumerate(ks):
        if n_boot > 0:
            draws = _bootstrap_draws(pc, n_boot, rng, anchor, prior, n_blocks=k)
            lo, hi = bootstrap_interval(draws, level, k)
        else:
            lo = hi = np.full(pc.n_entrants, np.nan)
        frames.append(
            pd.DataFrame(
                {
                    "games": int(cum_games[k - 1]),
                    "blocks": int(k),
                    "entrant": list(pc.entrants),
                    "elo": elo[r],
                    "lo": lo,
                    "hi": hi,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
