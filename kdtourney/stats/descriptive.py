"""Descriptive statistics of tournament results, per entrant, pair, seat and player count, and
the block bootstrap behind every interval (docs/ratings.md).

    entrant_summary(results)        one row per entrant: counts, means with intervals, quantiles
    head_to_head(results)           every ordered pair's pairwise record (head_to_head_matrix:
                                    one of its columns as an entrant x opponent matrix)
    by_seat, by_player_count        means per (player count, seat) and per (entrant, count)
    block_bootstrap_means(...)      group means with block-bootstrap percentile intervals
    block_resamples(rng, n, blocks) the resamples themselves, in chunks
    percentile_interval(draws)      (lo, hi) per column of bootstrap draws

`results` is the store's results table, one row per player per game (``game``, ``block``,
``n_players``, ``seat``, ``entrant``, ``score``, ``rank``, ``win_share``, ``margin``, ...;
optional columns that are absent are skipped); the block is the unit every interval resamples.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from kdtourney.stats.outcomes import pair_outcomes

__all__ = [
    "entrant_summary",
    "head_to_head",
    "head_to_head_matrix",
    "by_seat",
    "by_player_count",
    "block_bootstrap_means",
    "block_resamples",
    "percentile_interval",
]

_QUANTILES = (0.05, 0.25, 0.50, 0.75, 0.95)


def block_resamples(rng: np.random.Generator, n_boot: int, n_blocks: int, width: int | None = None,
                    rows: int | None = None):
    """The block bootstrap, the one behind every interval: `n_boot` resamples of `n_blocks` blocks
    drawn with replacement, yielded in chunks of at most `rows` resamples (default: about 4 million
    cells). Each chunk is an array (m, width) of multiplicities, column k counting block k (numbered
    by first game); columns from `n_blocks` to `width` (default `n_blocks`) stay 0, for a resample
    of the first blocks only. The same generator state gives the same resamples, however chunked.
    """
    width = n_blocks if width is None else width
    rows = rows or max(1, 4_000_000 // max(width, 1))
    p = np.full(n_blocks, 1.0 / max(n_blocks, 1))
    for start in range(0, n_boot, rows):
        m = min(rows, n_boot - start)
        counts = np.zeros((m, width))
        counts[:, :n_blocks] = rng.multinomial(n_blocks, p, size=m)
        yield counts


def block_bootstrap_means(
    values: pd.DataFrame,
    group: pd.Series | np.ndarray,
    block: pd.Series | np.ndarray,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, pd.DataFrame]:
    """Group means of several columns with block-bootstrap percentile intervals.

    ``values``: numeric columns (one row per observation); ``group``: group label per row;
    ``block``: block label per row (blocks numbered by first appearance, as for the ratings, so that
    the same seed resamples the same blocks). Returns ``{column: DataFrame(index=group,
    columns=[mean, lo, hi])}``. With ``n_boot=0`` the intervals are NaN. A resample's mean is its
    sum over its count of rows (a ratio estimator: blocks of unequal size, groups absent from some
    blocks); every column and group shares the same resamples.
    """
    g_codes, groups = pd.factorize(np.asarray(group), sort=True)
    b_codes, blocks = pd.factorize(np.asarray(block))
    K, B = len(groups), len(blocks)
    cell = g_codes * B + b_codes
    count = np.bincount(cell, minlength=K * B).reshape(K, B).astype(float)
    cols = list(values.columns)
    sums = {c: np.bincount(cell, values[c].to_numpy(dtype=float), minlength=K * B).reshape(K, B)
            for c in cols}
    out = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        point = {c: sums[c].sum(axis=1) / count.sum(axis=1) for c in cols}
    draws = {c: np.empty((n_boot, K)) for c in cols}
    start = 0
    for C in block_resamples(np.random.default_rng(seed), n_boot, B):
        m = len(C)
        n_b = C @ count.T
        with np.errstate(invalid="ignore", divide="ignore"):
            for c in cols:
                draws[c][start : start + m] = (C @ sums[c].T) / n_b
        start += m
    idx = pd.Index(groups, name=getattr(group, "name", None))
    for c in cols:
        if n_boot > 0:
            lo, hi = percentile_interval(draws[c], level)
        else:
            lo = hi = np.full(K, np.nan)
        out[c] = pd.DataFrame({"mean": point[c], "lo": lo, "hi": hi}, index=idx)
    return out


def percentile_interval(draws: np.ndarray, level: float = 0.95):
    """(lo, hi) percentile interval per column of bootstrap draws, NaN draws ignored (an all-NaN
    column gives NaN)."""
    a = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanquantile(draws, a, axis=0), np.nanquantile(draws, 1.0 - a, axis=0)


def entrant_summary(results: pd.DataFrame, n_boot: int = 1000, seed: int = 0,
                    level: float = 0.95) -> pd.DataFrame:
    """One row per entrant (sorted by mean win share, best first).

    Columns:

    - ``games`` (player-games), ``blocks`` (blocks played in), ``wins`` (sum of ``win_share``);
    - ``win_share``, ``score``, ``margin`` means, each with ``_lo``/``_hi`` block-bootstrap
      percentile interval at ``level`` (``n_boot`` resamples, ``seed``);
    - ``score_q05, score_q25, score_q50, score_q75, score_q95`` (linear-interpolated quantiles);
    - ``rank`` (mean rank), ``largest_territory``, ``crowns``, ``discards`` (means per game);
    - ``faults`` (count) and ``fault_rate``;
    - ``time_total`` (mean decision time per game, seconds) and ``time_max`` (largest single
      decision time over all the entrant's games). Decision counts are not in the data, so no
      per-decision mean.
    """
    df = results
    ent = df["entrant"].astype(str).rename("entrant")
    gb = df.groupby(ent)
    out = pd.DataFrame(index=pd.Index(sorted(ent.unique()), name="entrant"))
    out["games"] = gb.size()
    out["blocks"] = gb["block"].nunique()
    if "win_share" in df:
        out["wins"] = gb["win_share"].sum()
    boot_cols = [c for c in ("win_share", "score", "margin") if c in df]
    if boot_cols:
        bs = block_bootstrap_means(df[boot_cols], ent, df["block"], n_boot=n_boot, seed=seed,
                                   level=level)
        for c in boot_cols:
            t = bs[c].reindex(out.index)
            out[c] = t["mean"]
            out[f"{c}_lo"] = t["lo"]
            out[f"{c}_hi"] = t["hi"]
    if "score" in df:
        for q in _QUANTILES:
            out[f"score_q{int(round(q * 100)):02d}"] = gb["score"].quantile(q)
    for c in ("rank", "largest_territory", "crowns", "discards"):
        if c in df:
            out[c] = gb[c].mean()
    if "fault" in df:
        out["faults"] = gb["fault"].sum().astype(int)
        out["fault_rate"] = out["faults"] / out["games"]
    if "time_total" in df:
        out["time_total"] = gb["time_total"].mean()
    if "time_max" in df:
        out["time_max"] = gb["time_max"].max()
    if "win_share" in out:
        out = out.sort_values("win_share", ascending=False, kind="stable")
    return out


def head_to_head(results: pd.DataFrame) -> pd.DataFrame:
    """Pairwise record of every ordered pair of entrants that met in a game.

    Indexed by (``entrant``, ``opponent``) with columns ``wins``, ``ties``, ``losses`` (pairwise:
    better rank in the same game wins), ``meetings`` (pairs of seats, so a 4-player game with both
    entrants once is one meeting) and ``score`` = (wins + ties / 2) / meetings, from the row
    entrant's side. Self-play pairs are excluded (:func:`kdtourney.stats.outcomes.pair_outcomes`).
    ``head_to_head_matrix`` pivots it.
    """
    p = pair_outcomes(results)
    score = np.r_[p["score"], 1.0 - p["score"]]  # every pair from both sides
    both = pd.DataFrame({"entrant": np.r_[p["entrant_a"], p["entrant_b"]],
                         "opponent": np.r_[p["entrant_b"], p["entrant_a"]],
                         "wins": score == 1.0, "ties": score == 0.5, "losses": score == 0.0})
    out = both.groupby(["entrant", "opponent"], sort=True).sum().astype(int)
    out["meetings"] = out["wins"] + out["ties"] + out["losses"]
    out["score"] = (out["wins"] + 0.5 * out["ties"]) / out["meetings"]
    return out


def head_to_head_matrix(results: pd.DataFrame, value: str = "score") -> pd.DataFrame:
    """Square matrix (row entrant vs column entrant) of one ``head_to_head`` column; NaN if never
    met."""
    h2h = head_to_head(results)
    ents = sorted(results["entrant"].astype(str).unique())
    mat = h2h[value].unstack("opponent")
    return mat.reindex(index=ents, columns=ents).rename_axis(index="entrant", columns="opponent")


def _means(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    gb = df.groupby(keys, sort=True)
    out = pd.DataFrame({"games": gb.size()})
    for c in ("win_share", "score", "margin", "rank"):
        if c in df:
            out[c] = gb[c].mean()
    if "fault" in df:
        out["faults"] = gb["fault"].sum().astype(int)
    return out


def by_seat(results: pd.DataFrame) -> pd.DataFrame:
    """Mean ``win_share``, ``score``, ``margin``, ``rank`` and ``games`` per (``n_players``,
    ``seat``).

    Seat effects only make sense within one player count, so ``n_players`` is always part of the
    index.
    """
    return _means(results, ["n_players", "seat"])


def by_player_count(results: pd.DataFrame) -> pd.DataFrame:
    """Mean ``win_share``, ``score``, ``margin``, ``rank``, ``games``, ``faults`` per (entrant,
    n_players)."""
    df = results.assign(entrant=results["entrant"].astype(str))
    return _means(df, ["entrant", "n_players"])
