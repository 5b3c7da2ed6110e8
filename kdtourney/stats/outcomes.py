"""Pairwise outcomes of ranked tables and the Elo scale: the one definition that the ratings, the
statistics and the SPRT share (docs/ratings.md).

    pair_outcomes(results)    one row per two seats of a game held by different entrants: the
                              better rank scores 1, the worse 0, a shared place 0.5 each
    balanced_blocks(results)  the rows of the blocks with a result for every seating: every
                              statistic counts only these (a block with a failed game is left
                              out, not scored from the seatings that remain)
    elo_to_score(d)           the expected pairwise score of an Elo difference d,
                              1 / (1 + 10 ** (-d / 400)); score_to_elo its inverse
    ELO_PER_NAT               Elo points per natural-log unit of Bradley-Terry strength
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["ELO_PER_NAT", "elo_to_score", "score_to_elo", "pair_outcomes", "balanced_blocks"]

#: Elo points per natural-log unit of Bradley-Terry strength (400 / ln 10 ~ 173.7).
ELO_PER_NAT = 400.0 / math.log(10.0)


def elo_to_score(elo):
    """Expected pairwise score for an Elo difference (a float for a number, else an array)."""
    score = 1.0 / (1.0 + 10.0 ** (-np.asarray(elo, dtype=float) / 400.0))
    return float(score) if score.ndim == 0 else score


def score_to_elo(score):
    """Elo difference for an expected pairwise score, the inverse of `elo_to_score`; +-inf at 1
    and 0 (a float for a number, else an array)."""
    s = np.asarray(score, dtype=float)
    with np.errstate(divide="ignore"):
        elo = -400.0 * np.log10(1.0 / s - 1.0)
    return float(elo) if elo.ndim == 0 else elo


def pair_outcomes(results: pd.DataFrame) -> pd.DataFrame:
    """The pairwise outcomes of every game of a results table (one row per player per game, with
    columns ``game``, ``block``, ``entrant``, ``rank``; ``seat`` orders the players if present).

    One row per two seats of a game held by different entrants, the earlier seat first: ``game``,
    ``block``, ``entrant_a``, ``entrant_b`` and ``score`` (1, 0.5 or 0: a's outcome against b).
    """
    missing = {"game", "block", "entrant", "rank"} - set(results.columns)
    if missing:
        raise ValueError(f"results lacks columns {sorted(missing)}")
    if results.empty:  # nothing stored yet (a run interrupted before its first game)
        return pd.DataFrame({"game": [], "block": [], "entrant_a": [], "entrant_b": [],
                             "score": []})
    order = ["game", "seat"] if "seat" in results.columns else ["game"]
    rows = results.sort_values(order, kind="stable")
    game = rows["game"].to_numpy()
    codes, entrants = pd.factorize(rows["entrant"].astype(str))
    rank = rows["rank"].to_numpy(dtype=float)
    block = rows["block"].to_numpy()
    starts = np.r_[0, np.flatnonzero(game[1:] != game[:-1]) + 1]
    sizes = np.diff(np.r_[starts, len(game)])
    width = int(sizes.max()) if len(sizes) else 0
    # position of each row in its game: one column of (games x width) arrays per seat
    pos = np.arange(len(game)) - np.repeat(starts, sizes)
    where = (np.repeat(np.arange(len(starts)), sizes), pos)
    E = np.full((len(starts), width), -1)
    R = np.zeros((len(starts), width))
    E[where], R[where] = codes, rank
    parts = []
    for s in range(width):
        for t in range(s + 1, width):
            a, b = E[:, s], E[:, t]
            ok = np.flatnonzero((a >= 0) & (b >= 0) & (a != b))
            ra, rb = R[ok, s], R[ok, t]
            parts.append((ok, a[ok], b[ok], np.where(ra < rb, 1.0, np.where(ra == rb, 0.5, 0.0))))
    g = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=int)
    names = np.asarray(entrants, dtype=object)
    out = pd.DataFrame({
        "game": game[starts][g], "block": block[starts][g],
        "entrant_a": names[np.concatenate([p[1] for p in parts])] if parts else [],
        "entrant_b": names[np.concatenate([p[2] for p in parts])] if parts else [],
        "score": np.concatenate([p[3] for p in parts]) if parts else [],
    })  # fmt: skip
    return out.sort_values("game", kind="stable", ignore_index=True)


def balanced_blocks(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of the blocks that have a result for every seating (``n_players`` games: one per
    rotation), the others left out (docs/ratings.md). Needs ``game``, ``block`` and
    ``n_players``."""
    if results.empty:
        return results
    games = results.groupby("block")["game"].nunique()
    seats = results.groupby("block")["n_players"].first()
    complete = games.index[games.to_numpy() >= seats.reindex(games.index).to_numpy()]
    if len(complete) == len(games):
        return results
    return results[results["block"].isin(complete)]
