"""The ladder's matchmaking: which table plays the next block. Pure functions of what is stored
(the pairwise results so far and the blocks already scheduled), tested and benchmarked on
simulated results without playing a game (benchmarks/bench_ladder.py).

The rule
--------
A block teaches most where the ratings are least certain and the game is closest to even, so:

1. The *seed* of the table is the entrant whose rating is least certain, its uncertainty grown by
   how long it has waited and by how far it lags behind the field: priority
   ``sd * (1 + waited / entrants) * (1 + BEHIND * behind)``, where ``sd`` is the standard error
   of its Elo (``NEW_SD`` for an entrant without games), ``waited`` the blocks scheduled since it
   last sat at a table and ``behind`` the share of the field's median number of blocks it lacks
   (1 for a newcomer, 0 once it has the median). So a new entrant plays at once and keeps playing
   until it has caught up (Halite's matchmaker seeds by games played); the waiting term keeps
   anyone from being starved: a settled entrant's priority grows until it is picked.
2. The other seats are drawn at random, without replacement, with weight
   ``(p (1 - p)) ** 2 * sqrt(sd_seed ** 2 + sd ** 2) / (1 + met / mean_met)``: ``p`` the expected
   score of the seed against the opponent (close games carry the most information; the square
   sharpens the preference for near ratings, as Halite's matchmaker draws among the nearest),
   the uncertainties of both (a game with an uncertain opponent also settles the opponent), and
   the pair's meetings so far against the seed's mean (no pair is worn out). A pair that has
   met less than 1/STARVED of its even share of the seed's blocks gets the highest weight of the
   table: every entrant meets the whole field over time, at least at that rate.
3. With probability ``EXPLORE`` the whole table, every seat, is drawn uniformly instead (steps 1
   and 2 skipped): a safety net for ratings that are confidently wrong.

Uncertainty is the standard error of the Bradley-Terry fit from its information
(``sum_j w_ij n_ij p_ij (1 - p_ij)`` in natural-log units): cheap enough to recompute before every
chunk. ``w`` counts the dependence of a game's pairwise outcomes: an entrant's P - 1 outcomes in
a P-player game all follow from its one rank, and at even ratings (rank uniform) their sum varies
as (P^2 - 1) / 12 where independent outcomes would give (P - 1) / 4, so each counts
``3 / (P + 1)`` of an independent one (`dependence`: 1 at 2 players, 0.75 at 3, 0.6 at 4). It is
only the matchmaker's guide; the list's intervals are the block bootstrap's (kdtourney.stats.ratings),
as everywhere else.

Rules: MATCH_RULE is the version of the rule, recorded in a ladder's store when it is made, and a
ladder keeps it. Rule 1 (before it was recorded) drew only the opponents uniformly in step 3 (the
seed was still the most uncertain entrant) and counted every pairwise outcome as independent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kdtourney.stats.outcomes import ELO_PER_NAT, elo_to_score
from kdtourney.stats.ratings import fit_totals

NEW_SD = 350.0   # the Elo uncertainty of an entrant without games
EXPLORE = 0.1    # the chance that a table's other seats are drawn uniformly
STARVED = 8      # a pair below 1/STARVED of its even share of meetings is drawn first
BEHIND = 3       # the weight of the blocks an entrant lacks to the field's median
MATCH_RULE = 2   # the version of the rule (module docstring); 1: before it was recorded
RULES = (1, 2)


def check_rule(rule: int) -> None:
    """ValueError (one line) for a rule this kdtourney does not know."""
    if rule not in RULES:
        raise ValueError(f"matchmaking rule {rule} is unknown to this kdtourney (it knows "
                         f"{', '.join(map(str, RULES))})")


def dependence(n_players, rule: int = MATCH_RULE):
    """What one pairwise outcome of an `n_players` game is worth in the information, against an
    independent one (module docstring; rule 1: 1)."""
    check_rule(rule)
    n = np.asarray(n_players, dtype=float)
    return 3.0 / (n + 1.0) if rule >= 2 else np.ones_like(n)


@dataclass
class Standing:
    """What the matchmaker knows, per entrant (index into `entrants`): elo (fit, mean 0), sd (its
    standard error), blocks (played or scheduled), last (the block it last sat in, -1: never);
    meetings[i, j]: blocks in which i and j met (played or scheduled); block: the next block."""

    entrants: list
    elo: np.ndarray
    sd: np.ndarray
    blocks: np.ndarray
    last: np.ndarray
    meetings: np.ndarray
    block: int = 0
    wins: np.ndarray = field(default=None, repr=False)
    games: np.ndarray = field(default=None, repr=False)

    @classmethod
    def from_counts(cls, entrants, wins, games, blocks, last, meetings, block,
                    worth=None) -> "Standing":
        """The standing of `entrants` from K x K pairwise totals: wins[i, j] (i's score against
        j, ties half) and games[i, j] (comparisons), and the per-entrant and per-pair block
        counts (see the class). worth[i, j]: the comparisons counted as independent ones (the
        games' `dependence`; default `games`), for the uncertainty."""
        wins, games = np.asarray(wins, float), np.asarray(games, float)
        worth = games if worth is None else np.asarray(worth, float)
        elo = fit_totals(wins, games)
        p = elo_to_score(elo[:, None] - elo[None, :])
        info = (worth * p * (1 - p)).sum(axis=1)
        played = games.sum(axis=1) > 0
        with np.errstate(divide="ignore"):
            sd = np.where(played, ELO_PER_NAT / np.sqrt(np.maximum(info, 1e-9)), NEW_SD)
        return cls(list(entrants), elo, np.minimum(sd, NEW_SD), np.asarray(blocks, float),
                   np.asarray(last, float), np.asarray(meetings, float), int(block), wins, games)

    def scheduled(self, table) -> None:
        """Count a scheduled block at `table` (entrant indexes) before its games are in, so that
        the next choice of the same chunk looks elsewhere."""
        table = list(table)
        for i in set(table):
            self.blocks[i] += 1
            self.last[i] = self.block
        for a in set(table):
            for b in set(table):
                if a != b:
                    self.meetings[a, b] += 1
        self.block += 1


def seed_priority(st: Standing) -> np.ndarray:
    """Step 1 of the rule (module docstring): uncertainty grown by the wait and by the blocks
    missing to the field's median."""
    waited = np.where(st.last < 0, st.block + 1, st.block - st.last)
    median = np.median(st.blocks)
    behind = np.clip(1 - st.blocks / median, 0, 1) if median > 0 else 0.0
    return st.sd * (1 + waited / len(st.entrants)) * (1 + BEHIND * behind)


def opponent_weights(st: Standing, seed: int) -> np.ndarray:
    """Step 2 of the rule: the weight of each entrant as an opponent of `seed` (0 for itself)."""
    p = elo_to_score(st.elo[seed] - st.elo)
    met = st.meetings[seed]
    others = np.arange(len(st.entrants)) != seed
    mean_met = met[others].mean() if others.any() else 0.0
    w = (p * (1 - p)) ** 2 * np.sqrt(st.sd[seed] ** 2 + st.sd ** 2) / (1 + met / (mean_met + 1))
    w = np.where(others, w, 0.0)
    starved = others & (met < st.blocks[seed] / max(1, len(st.entrants) - 1) / STARVED)
    return np.where(starved, w.max(), w)


def choose_table(st: Standing, players: int, rng: np.random.Generator, *,
                 rule: int = MATCH_RULE) -> tuple:
    """The entrant indexes of the next table (the seed first), `players` seats; with fewer
    entrants than seats, entrants sit more than once (every one at least once). `rule`: the
    ladder's (module docstring)."""
    check_rule(rule)
    k = len(st.entrants)
    if k < 2:
        raise ValueError("a table needs two entrants")
    if rule >= 2 and rng.random() < EXPLORE:
        return uniform_table(st, players, rng)
    priority = seed_priority(st)
    best = np.flatnonzero(priority >= priority.max() * (1 - 1e-12))
    seed = int(rng.choice(best))
    if rule == 1 and rng.random() < EXPLORE:
        w = np.where(np.arange(k) != seed, 1.0, 0.0)
    else:
        w = opponent_weights(st, seed)
        if not w.sum() > 0:
            w = np.where(np.arange(k) != seed, 1.0, 0.0)
    n = min(players - 1, k - 1)
    others = [int(i) for i in rng.choice(k, size=n, replace=False, p=w / w.sum())]
    table = [seed] + others
    while len(table) < players:  # a small field at a large table: fill by the same weights
        table.append(int(rng.choice(table)))
    return tuple(table)


def uniform_table(st: Standing, players: int, rng: np.random.Generator) -> tuple:
    """A table drawn uniformly from the field (step 3 of the rule; the benchmark's reference)."""
    k = len(st.entrants)
    n = min(players, k)
    table = [int(i) for i in rng.choice(k, size=n, replace=False)]
    while len(table) < players:
        table.append(int(rng.choice(table)))
    return tuple(table)


def table_rng(seed: int, block: int) -> np.random.Generator:
    """The random draws of the choice of block `block`: fixed by the ladder's seed and the block."""
    return np.random.default_rng([seed, 2, block])


__all__ = ["Standing", "choose_table", "uniform_table", "seed_priority", "opponent_weights",
           "table_rng", "dependence", "check_rule", "NEW_SD", "EXPLORE", "STARVED", "BEHIND",
           "MATCH_RULE", "RULES"]
