"""The standings of a tournament: the one computation behind the table `kdtourney run` prints and
the one on the report page, so that both show the same figures and intervals."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from kdtourney.stats import descriptive as stats
from kdtourney.stats import ratings
from kdtourney.stats.outcomes import balanced_blocks

#: Bootstrap resamples of the blocks behind every interval of the standings.
N_BOOT = 1000


@dataclass
class Standings:
    """summary: `stats.entrant_summary` (means with intervals, counts, faults), rows strongest
    first; elo: `ratings.bootstrap_elo`'s table (with its draws in attrs and a `games` column), or
    None when no two entrants met."""

    summary: pd.DataFrame
    elo: pd.DataFrame | None

    @property
    def order(self) -> list[str]:
        return list(self.summary.index)


def standings(results: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0,
              anchor=None) -> Standings:
    """Per-entrant means and Elo with block-bootstrap intervals (`n_boot` resamples, `seed`), the
    entrants ordered by Elo, strongest first (by win share when there is no Elo); over the
    balanced blocks only (`kdtourney.stats.outcomes.balanced_blocks`)."""
    results = balanced_blocks(results).assign(entrant=lambda r: r["entrant"].astype(str))
    summary = stats.entrant_summary(results, n_boot=n_boot, seed=seed)
    pc = ratings.pair_counts(results) if results["entrant"].nunique() >= 2 else None
    if pc is None or pc.n_pairs == 0:
        return Standings(summary, None)
    elo = ratings.bootstrap_elo(pc, n_boot=n_boot, seed=seed, anchor=anchor)
    games = results.groupby("entrant")["game"].nunique()
    elo["games"] = games.reindex(elo.index).fillna(0).astype(int)
    order = list(elo.index) + [e for e in summary.index if e not in elo.index]
    return Standings(summary.loc[order], elo)
