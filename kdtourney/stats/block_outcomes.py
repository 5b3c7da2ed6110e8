"""What an SPRT's blocks scored: the multiplayer analogue of fishtest's pentanomial table (a
2-player block of two games scores 0, 1/4, 1/2, 3/4 or 1: exactly the pentanomial) and what the
duplicate block does to the test's variance (docs/sprt.md, "What the blocks scored").

    block_outcomes(results, candidate, baseline, n_boot)   a BlockOutcomes: the block scores'
        distribution (values, counts), their variance, the variance the same comparisons would
        have if independent, and the ratio with its block-bootstrap interval

The ratio below 1 is the share of the games the test needs with the duplicate blocks against
games dealt independently: their seatings cancel the deal's luck.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kdtourney.stats.descriptive import block_resamples, percentile_interval
from kdtourney.stats.sprt import candidate_pairs

__all__ = ["BlockOutcomes", "block_outcomes"]


@dataclass(frozen=True)
class BlockOutcomes:
    """``values`` the block scores seen (ascending) and ``counts`` how many blocks scored each;
    ``block_var`` the variance of a block's score; ``independent_var`` the variance it would
    have if its comparisons were independent (the comparisons' variance over their number per
    block); ``ratio`` = block_var / independent_var with its interval ``ratio_lo``, ``ratio_hi``;
    ``blocks`` and ``pairs`` (comparisons per block, mean)."""

    values: np.ndarray
    counts: np.ndarray
    block_var: float
    independent_var: float
    ratio: float
    ratio_lo: float
    ratio_hi: float
    blocks: int
    pairs: float


def _ratio(c, mean, m, sx, sxx):
    """(block variance, independent variance) under block weights c (..., B): the blocks'
    scores `mean`, comparisons `m`, their sums `sx` and sums of squares `sxx`."""
    total = c.sum(axis=-1)
    mu = (c * mean).sum(axis=-1) / total
    block_var = (c * (mean - mu[..., None]) ** 2).sum(axis=-1) / (total - 1)
    p = (c * sx).sum(axis=-1) / (c * m).sum(axis=-1)
    pair_var = (c * sxx).sum(axis=-1) / (c * m).sum(axis=-1) - p * p
    return block_var, pair_var * (c / m).sum(axis=-1) / total


def block_outcomes(results: pd.DataFrame, candidate: str, baseline=None, n_boot: int = 1000,
                   seed: int = 0, level: float = 0.95) -> BlockOutcomes | None:
    """The candidate's `BlockOutcomes` against `baseline` (as `sprt.block_scores` counts them);
    None with fewer than two blocks."""
    x = candidate_pairs(results, candidate, baseline)
    g = x.groupby(level="block")
    m = g.size().to_numpy(dtype=float)
    if len(m) < 2:
        return None
    sx, sxx = g.sum().to_numpy(), (x * x).groupby(level="block").sum().to_numpy()
    mean = sx / m
    values, counts = np.unique(np.round(mean, 9), return_counts=True)
    block_var, independent = _ratio(np.ones(len(m)), mean, m, sx, sxx)
    parts = []
    for c in block_resamples(np.random.default_rng(seed), n_boot, len(m)):
        b, i = _ratio(c, mean, m, sx, sxx)
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append(b / i)
    ratios = np.concatenate(parts) if parts else np.array([np.nan])
    ratios = ratios[np.isfinite(ratios)]
    lo, hi = percentile_interval(ratios[:, None], level) if len(ratios) else ([np.nan], [np.nan])
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = float(block_var / independent)
    return BlockOutcomes(values=values, counts=counts, block_var=float(block_var),
                         independent_var=float(independent), ratio=ratio,
                         ratio_lo=float(lo[0]), ratio_hi=float(hi[0]), blocks=len(m),
                         pairs=float(m.mean()))
