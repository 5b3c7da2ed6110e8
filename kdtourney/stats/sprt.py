"""The sequential probability ratio test of `kdtourney sprt`, on blocks of games: mathematics
only (how it decides and what it was measured to do: docs/sprt.md).

A block (one deal under every rotation of its table) gives one score in [0, 1], the candidate's
mean pairwise score against the baseline seats. H0: the Elo difference is elo0; H1: it is elo1.

    block_scores(results, candidate)   the candidate's score per block, blocks in order
                                       (block_score: of one block's rows; candidate_pairs:
                                       the pairwise outcomes they are the means of)
    SPRT(elo0, elo1, alpha, beta)      a test fed block scores (`update`): its status, LLR path,
                                       decision and Elo estimate corrected for stopping
    run_sprt(results, candidate, ...)  an SPRT fed a whole results table
    llr_path, score_counts, first_crossing, stopped_estimate, sprt_bounds
                                       the same steps on arrays of many tests at once (the
                                       benchmark and the tests simulate thousands)
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from kdtourney.stats.outcomes import elo_to_score, pair_outcomes

__all__ = [
    "sprt_bounds",
    "llr_path",
    "score_counts",
    "first_crossing",
    "stopped_estimate",
    "block_score",
    "block_scores",
    "candidate_pairs",
    "SPRT",
    "run_sprt",
    "DEFAULT_MIN_BLOCKS",
]

DEFAULT_MIN_BLOCKS = 15  # no decision before: fewer blocks show too few of the scores possible
_PSEUDO = 1e-3  # weight of the pseudo-observations at 0 and 1
_ELO_RANGE = 1500.0  # the estimate is searched within +-_ELO_RANGE; beyond, it is +-inf


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's (lower, upper) LLR bounds: (log(beta/(1-alpha)), log((1-beta)/alpha))."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError("alpha and beta must lie in (0, 1)")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


# --------------------------------------------------------------------------------------------------
# Log-likelihood ratio
# --------------------------------------------------------------------------------------------------


def _total(x: np.ndarray) -> np.ndarray:
    """Sum over the last axis, strictly in order: a value with no count adds an exact 0.0, so the
    LLR after a block is the same to the last bit whatever values later blocks add (numpy's
    pairwise sum groups its terms by the array's length)."""
    return np.add.accumulate(x, axis=-1)[..., -1]


def _tilt(p: np.ndarray, a: np.ndarray, support: np.ndarray) -> np.ndarray:
    """lam solving sum_k p_k a_k / (1 + lam a_k) = 0 over the `support` (each row of p a
    distribution, 0 outside the support; a = values - s); the sum falls with lam.  Each row
    iterates until its own step is within tolerance: most take about ten steps, a few sixty."""
    shape, k = p.shape[:-1], p.shape[-1]
    a = np.broadcast_to(np.where(support, a, 0.0), p.shape).reshape(-1, k)
    support = np.broadcast_to(support, p.shape).reshape(-1, k)
    p = p.reshape(-1, k)
    lo = -1.0 / np.where(support, a, -np.inf).max(axis=-1)
    hi = -1.0 / np.where(support, a, np.inf).min(axis=-1)
    lam = np.zeros(len(p))
    rows = np.arange(len(p))  # the rows still iterating
    for _ in range(100):
        pr, ar, x = p[rows], a[rows], lam[rows]
        q = 1.0 + x[:, None] * ar
        f = _total(pr * ar / q)
        slope = -_total(pr * ar * ar / (q * q))
        lo[rows], hi[rows] = np.where(f > 0, x, lo[rows]), np.where(f > 0, hi[rows], x)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = x - f / slope
        inside = (newton > lo[rows]) & (newton < hi[rows])
        # Newton, or bisection where it jumps out of the bracket
        new = np.where(inside, newton, (lo[rows] + hi[rows]) / 2)
        lam[rows] = new
        rows = rows[~(np.abs(new - x) <= 1e-12 * (1.0 + np.abs(x)))]
        if not len(rows):
            break
    return lam.reshape(shape)


def score_counts(scores, elo0: float, elo1: float, pseudo: float = _PSEUDO):
    """(values, counts): the values the block scores of ``scores`` take, with 0 and 1 added for the
    pseudo-observations, and the counts of each value after each block, (n, K) or (runs, n, K),
    the pseudo-observations included where the values seen do not yet lie on both sides of s0 and
    of s1."""
    x = np.asarray(scores, dtype=float)
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    values, index = np.unique(np.round(x, 9), return_inverse=True)
    values = np.r_[0.0, values, 1.0]  # the pseudo-observations' places
    counts = np.zeros(x.shape + (len(values),))
    np.put_along_axis(counts, index.reshape(x.shape)[..., None] + 1, 1.0, axis=-1)
    counts = counts.cumsum(axis=-2)
    seen = counts > 0
    low = np.where(seen, values, np.inf).min(axis=-1)
    high = np.where(seen, values, -np.inf).max(axis=-1)
    need = ~((low < min(s0, s1)) & (high > max(s0, s1)))
    counts[..., 0] += pseudo * need
    counts[..., -1] += pseudo * need
    return values, counts


def _jumps(counts, values, s0: float, s1: float):
    """(p, support, jumps): the distribution of the counts (..., K), its support, and the LLR of
    one block of each value, log p_s1 - log p_s0 (the tilts of p to s1 and to s0)."""
    support = counts > 0
    p = counts / _total(counts)[..., None]
    jumps = np.zeros(counts.shape)
    for s, sign in ((s0, 1.0), (s1, -1.0)):
        a = values - s
        lam = _tilt(p, a, support)
        jumps = jumps + sign * np.log(np.where(support, 1.0 + lam[..., None] * a, 1.0))
    return p, support, jumps


def llr_path(scores, elo0: float, elo1: float, start: int = 0) -> np.ndarray:
    """The GSPRT log-likelihood ratio after each block score of ``scores`` (docs/sprt.md), from
    block ``start`` on (the LLR after a block does not depend on the blocks
    after it: a test fed block after block computes only the new ones); works on one sequence
    (n,) or on rows of sequences (runs, n) at once."""
    values, counts = score_counts(scores, elo0, elo1)
    counts = counts[..., start:, :]
    _, _, jumps = _jumps(counts, values, elo_to_score(elo0), elo_to_score(elo1))
    return _total(counts * jumps)


def first_crossing(llr, bounds: tuple[float, float], min_blocks: int):
    """(status, blocks): the first block, counted from 1 and not before ``min_blocks``, where the
    LLR path leaves the bounds, and 'H0' or 'H1'; ('continue', None) if it never does."""
    llr = np.asarray(llr, dtype=float)
    n = np.arange(1, len(llr) + 1)
    out = np.flatnonzero(((llr <= bounds[0]) | (llr >= bounds[1])) & (n >= min_blocks))
    if not len(out):
        return "continue", None
    k = int(out[0])
    return ("H1" if llr[k] >= bounds[1] else "H0"), k + 1


# --------------------------------------------------------------------------------------------------
# Elo estimate corrected for stopping
# --------------------------------------------------------------------------------------------------

_SQRT2 = math.sqrt(2.0)
_erfc = np.vectorize(math.erfc, otypes=[float])


def _log_normal_cdf(z):
    z = np.asarray(z, dtype=float)
    far = z < -30.0  # math.erfc underflows near -38: the asymptotic series instead
    near = np.where(far, 0.0, z)
    out = np.log(0.5 * _erfc(-near / _SQRT2))
    zf = np.where(far, z, -31.0)
    tail = (-0.5 * zf * zf - np.log(-zf) - 0.5 * math.log(2 * math.pi)
            + np.log1p(-1 / zf**2 + 3 / zf**4))
    return np.where(far, tail, out)


def _outcome_cdf(mu, var, T, y, a: float, b: float) -> np.ndarray:
    """P(an outcome no better than the observed one) for a Brownian motion from 0 with drift
    ``mu`` and variance ``var`` per block, absorbed at a < 0 < b; observed: at time T the value y
    (y = b: H1 accepted at T; y = a: H0 accepted at T).  = P(absorbed at a before T) +
    P(not absorbed by T and below y).  Vectorised: the arguments broadcast together."""
    mu, var, T, y = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (mu, var, T, y)))
    gamma = mu / var
    A = b - a
    series = (var * T / A**2 >= 0.02) & (np.abs(gamma * A) <= 30.0)
    out = np.empty(mu.shape)
    if series.any():
        out[series] = _by_series(gamma[series], var[series], T[series], y[series], a, b)
    one = ~series
    if one.any():  # a short time or a strong drift: one barrier at a time is exact enough
        m, s, g, v = mu[one] * T[one], np.sqrt(var[one] * T[one]), gamma[one], y[one]
        out[one] = (np.exp(_log_normal_cdf((v - m) / s))
                    + np.exp(2 * g * a + _log_normal_cdf((2 * a - v + m) / s))
                    - np.exp(2 * g * b + _log_normal_cdf((v - m - 2 * b) / s)))
    return np.clip(out, 0.0, 1.0)


def _by_series(gamma, var, T, y, a, b):
    """_outcome_cdf from the eigenfunction series of the motion killed at a and b (on z = x - a
    in (0, A): density exp(gamma (z - z0) - gamma^2 var T / 2) (2/A) sum_n exp(-lam_n T)
    sin(n pi z0 / A) sin(n pi z / A)); P(absorbed at a before T) = h(z0) - E[h(z_T); alive], h the
    probability of leaving at a from z."""
    A, z0, Y = b - a, -a, y - a
    terms = int(math.ceil(math.sqrt(80.0 / (math.pi**2 * float((var * T).min()) / A**2)))) + 2
    k = (np.arange(1, terms + 1) * math.pi / A)[:, None]
    g = gamma[None, :]
    decay = -g * z0 - g * g * var * T / 2 - var * k * k * T / 2
    sin0 = np.sin(k * z0)

    def integral(c, upper):  # sum_n sin0 exp(decay) int_0^upper exp(c z) sin(k z) dz, times 2/A
        def primitive(z):
            return np.exp(decay + c * z) * (c * np.sin(k * z) - k * np.cos(k * z)) / (c * c + k * k)
        return (sin0 * (primitive(upper) - primitive(0.0))).sum(axis=0) * 2 / A

    below = integral(g, Y)
    e = np.exp(-2 * np.abs(gamma) * A)
    up, down = integral(-g, A), integral(g, A)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rising = gamma > 0
        h0 = np.where(rising, (np.exp(-2 * gamma * z0) - e) / (1 - e),
                      (np.exp(2 * gamma * (A - z0)) - 1) / (np.exp(2 * gamma * A) - 1))
        alive_h = np.where(rising, (up - e * down) / (1 - e),
                           (np.exp(2 * gamma * A) * up - down) / (np.exp(2 * gamma * A) - 1))
    flat = np.abs(gamma * A) < 1e-9
    if flat.any():  # no drift: h(z) = 1 - z / A, and int_0^A sin(kz) (1 - z/A) dz = 1/k
        h0 = np.where(flat, 1 - z0 / A, h0)
        alive_h = np.where(flat, (sin0 * np.exp(decay) / k).sum(axis=0) * 2 / A, alive_h)
    return h0 - alive_h + below


def stopped_estimate(blocks, llr, counts, values, elo0: float, elo1: float,
                     bounds: tuple[float, float], level: float = 0.95):
    """(elo, lo, hi): the Elo difference corrected for stopping (docs/sprt.md) and
    its ``level`` interval, from the test's state after ``blocks`` blocks: LLR ``llr`` and the
    counts (..., K) of the block score ``values`` (`score_counts`, at that block).  The drift and
    variance of the LLR per block under an Elo difference are those of one block's LLR when the
    blocks' distribution is tilted to that mean.  Floats for one test; arrays for many (leading
    dimensions).  NaN before two blocks."""
    blocks, llr = np.broadcast_arrays(np.asarray(blocks, dtype=float), np.asarray(llr, dtype=float))
    a, b = bounds
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    p, support, jumps = _jumps(np.asarray(counts, dtype=float), values, s0, s1)
    with np.errstate(divide="ignore", invalid="ignore"):
        # an overshoot counts as meeting the bound on the way, at the path's mean slope
        T = np.where(llr >= b, blocks * b / llr, np.where(llr <= a, blocks * a / llr, blocks))
    T, y = T[..., None], np.clip(llr, a, b)[..., None]
    # the means a distribution on the support can have, kept off the ends
    low = np.where(support, values, np.inf).min(axis=-1)[..., None]
    high = np.where(support, values, -np.inf).max(axis=-1)[..., None]
    p, support, jumps = p[..., None, :], support[..., None, :], jumps[..., None, :]
    targets = np.array([0.5, (1 + level) / 2, (1 - level) / 2])
    lo = np.full(T.shape[:-1] + (3,), -_ELO_RANGE)
    hi = -lo
    for _ in range(50):  # bisection: the cdf falls as the Elo difference rises
        mid = (lo + hi) / 2
        s = np.clip(elo_to_score(mid), low + 1e-6 * (high - low), high - 1e-6 * (high - low))
        a_s = values - s[..., None]
        lam = _tilt(np.broadcast_to(p, a_s.shape), a_s, np.broadcast_to(support, a_s.shape))
        tilted = np.where(support, p / np.where(support, 1 + lam[..., None] * a_s, 1.0), 0.0)
        drift = _total(tilted * jumps)
        var = np.maximum(_total(tilted * (jumps - drift[..., None]) ** 2), 1e-12)
        cdf = _outcome_cdf(drift, var, T, y, a, b)
        lo, hi = np.where(cdf > targets, mid, lo), np.where(cdf > targets, hi, mid)
    est = (lo + hi) / 2
    est = np.where(np.abs(est) > _ELO_RANGE - 1e-6, np.sign(est) * np.inf, est)  # beyond the search
    est = np.where((blocks >= 2)[..., None], est, np.nan)
    if est.ndim == 1:
        return float(est[0]), float(est[1]), float(est[2])
    return est[..., 0], est[..., 1], est[..., 2]


# --------------------------------------------------------------------------------------------------
# Block scores from the results table
# --------------------------------------------------------------------------------------------------


def candidate_pairs(results: pd.DataFrame, candidate: str, baseline=None) -> pd.Series:
    """The candidate's pairwise outcomes against the baseline seats: for every game, every pair
    (candidate seat, baseline seat) scores 1 if the candidate ranks better, 0.5 if equal, 0 if
    worse (:func:`kdtourney.stats.outcomes.pair_outcomes`). ``baseline``: an entrant name, an
    iterable of names, or None for every entrant other than the candidate. A Series of scores
    named by block (its ``block``)."""
    candidate = str(candidate)
    pairs = pair_outcomes(results)
    a, b = pairs["entrant_a"], pairs["entrant_b"]
    if baseline is None:
        is_base = lambda names: names != candidate  # noqa: E731
    else:
        names = {str(n) for n in ([baseline] if isinstance(baseline, str) else baseline)}
        is_base = lambda entrants: entrants.isin(names - {candidate})  # noqa: E731
    first = (a == candidate) & is_base(b)
    second = (b == candidate) & is_base(a)
    x = pd.concat([pairs.loc[first, "score"], 1.0 - pairs.loc[second, "score"]])
    return pd.Series(x.to_numpy(), index=pairs["block"].reindex(x.index).to_numpy(),
                     name="score").rename_axis("block")


def block_scores(results: pd.DataFrame, candidate: str, baseline=None) -> pd.Series:
    """Candidate's block scores, one per block, in order of the blocks' first game index: the
    mean of its `candidate_pairs` in the block. Blocks without any such pair are left out.
    Returns a Series named ``"score"`` indexed by block, with the pair count per block in
    ``attrs["pairs"]`` (a Series).
    """
    g = candidate_pairs(results, candidate, baseline).groupby(level="block")
    scores = g.mean()
    start = results.groupby("block")["game"].min().reindex(scores.index)
    order = start.sort_values(kind="stable").index
    out = scores.reindex(order).rename("score")
    out.index.name = "block"
    out.attrs["pairs"] = g.size().reindex(order)
    return out


def block_score(rows: pd.DataFrame, candidate: str, baseline=None) -> float:
    """Score of one block (``rows`` = that block's results rows); NaN when there is no pair."""
    if len(rows) == 0:
        return math.nan
    rows = rows.assign(block=0)
    s = block_scores(rows, candidate, baseline)
    return float(s.iloc[0]) if len(s) else math.nan


# --------------------------------------------------------------------------------------------------
# Sequential test
# --------------------------------------------------------------------------------------------------


class SPRT:
    """GSPRT of H1: Elo difference ``elo1`` against H0: ``elo0`` on block scores.

    >>> t = SPRT(0, 20)
    >>> t.update([0.6, 0.5, 0.75])   # returns the status
    'continue'
    >>> t.llr, t.bounds, t.elo_estimate()   # doctest: +SKIP
    """

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05,
                 min_blocks: int = DEFAULT_MIN_BLOCKS):
        if not elo1 > elo0:
            raise ValueError("need elo1 > elo0")
        self.elo0, self.elo1 = float(elo0), float(elo1)
        self.alpha, self.beta = float(alpha), float(beta)
        self.min_blocks = int(min_blocks)
        self.bounds = sprt_bounds(alpha, beta)
        self.scores: list[float] = []
        self._path = np.zeros(0)

    def update(self, block_score: float | Iterable[float]) -> str:
        """Add one block score (or several, in order); NaN scores are ignored.  Returns the status,
        which the first crossing of a bound latches."""
        values = np.atleast_1d(np.asarray(block_score, dtype=float)).tolist()
        added = [float(x) for x in values if not math.isnan(float(x))]
        for x in added:
            if not 0.0 <= x <= 1.0:
                raise ValueError(f"block score {x} outside [0, 1]")
        if added:
            self.scores += added
            self._path = np.r_[self._path, llr_path(self.scores, self.elo0, self.elo1,
                                                    start=len(self._path))]
        return self.status

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def path(self) -> np.ndarray:
        """The LLR after each block."""
        return self._path

    @property
    def llr(self) -> float:
        return float(self._path[-1]) if self.n else 0.0

    @property
    def mean(self) -> float:
        return float(np.mean(self.scores)) if self.n else math.nan

    @property
    def _crossing(self):
        return first_crossing(self._path, self.bounds, self.min_blocks)

    @property
    def status(self) -> str:
        """``"continue"``, ``"H1"`` (accepted at the first crossing) or ``"H0"``."""
        return self._crossing[0]

    @property
    def decided_at(self) -> int | None:
        """Blocks counted when the decision was taken, None before."""
        return self._crossing[1]

    def elo_estimate(self, level: float = 0.95) -> tuple[float, float, float]:
        """(elo, lo, hi) where the test stands (at its decision, once decided), corrected for
        stopping (docs/sprt.md)."""
        n = self.decided_at or self.n
        if n < 2:
            return math.nan, math.nan, math.nan
        values, counts = score_counts(self.scores[:n], self.elo0, self.elo1)
        return stopped_estimate(n, float(self._path[n - 1]), counts[-1], values, self.elo0,
                                self.elo1, self.bounds, level)

    def summary(self) -> dict:
        elo, lo, hi = self.elo_estimate()
        return {
            "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
            "blocks": self.n, "mean_score": self.mean, "llr": self.llr,
            "lower": self.bounds[0], "upper": self.bounds[1], "status": self.status,
            "decided_at": self.decided_at, "elo": elo, "elo_lo": lo, "elo_hi": hi,
        }  # fmt: skip

    def __repr__(self) -> str:
        return (
            f"SPRT(elo0={self.elo0:g}, elo1={self.elo1:g}, n={self.n}, llr={self.llr:.3f}, "
            f"bounds=({self.bounds[0]:.3f}, {self.bounds[1]:.3f}), status={self.status!r})"
        )


def run_sprt(
    results: pd.DataFrame, candidate: str, elo0: float, elo1: float, baseline=None,
    alpha: float = 0.05, beta: float = 0.05, min_blocks: int = DEFAULT_MIN_BLOCKS,
) -> SPRT:  # fmt: skip
    """Feed the candidate's block scores (blocks in order of first game) into a fresh
    :class:`SPRT`."""
    t = SPRT(elo0, elo1, alpha=alpha, beta=beta, min_blocks=min_blocks)
    t.update(block_scores(results, candidate, baseline).to_numpy())
    return t
