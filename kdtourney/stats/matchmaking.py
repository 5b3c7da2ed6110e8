"""The ladder's matchmaking: which table plays the next block, pure functions of what is stored
(the pairwise results so far and the blocks already scheduled); the rule in words, and what it
buys on simulated entrants (benchmarks/bench_ladder.py): docs/ladder.md.

    Standing.from_counts(...)          what the matchmaker knows: each entrant's Elo and its
                                       standard error, blocks played, last block, meetings
    choose_table(standing, players, rng)   the next table, its seed (first seat) first
    seed_priority, opponent_weights    its two steps; uniform_table its exploration
    dependence(n_players)              what one pairwise outcome of a game is worth
    table_rng(seed, block)             the draws of block `block`'s choice

MATCH_RULE is the version of the rule a new ladder records; `rule=` keeps an older one (rule 1:
the uniform tables kept the most uncertain entrant in the first seat, and every pairwise outcome
counted as independent). ValueError for a rule this kdtourney does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kdtourney.stats.outcomes import ELO_PER_NAT, elo_to_score
from kdtourney.stats.ratings import fit_totals

NEW_SD = 350.0   # the Elo uncertainty of an entrant without games
EXPLORE = 0.1    # the chance that a table is drawn uniformly (rule 1: its other seats)
STARVED = 8      # a pair below 1/STARVED of its even share of meetings is drawn first
BEHIND = 3       # the weight of the blocks an entrant lacks to the field's median
MATCH_RULE = 2   # the version of the rule (docs/ladder.md); 1: before it was recorded
RULES = (1, 2)


def check_rule(rule: int) -> None:
    """ValueError (one line) for a rule this kdtourney does not know."""
    if rule not in RULES:
        raise ValueError(f"matchmaking rule {rule} is unknown to this kdtourney (it knows "
                         f"{', '.join(map(str, RULES))})")


def dependence(n_players, rule: int = MATCH_RULE):
    """What one pairwise outcome of an `n_players` game is worth in the information, against an
    independent one: 3 / (P + 1) (rule 1: 1). An entrant's P - 1 outcomes in a game all follow
    from its one rank: at even ratings their sum varies as (P^2 - 1) / 12, where independent
    outcomes would give (P - 1) / 4."""
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
    wins: np.ndarray | None = field(default=None, repr=False)
    games: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def from_counts(cls, entrants, wins, games, blocks, last, meetings, block,
                    worth=None) -> Standing:
        """The standing of `entrants` from K x K pairwise totals: wins[i, j] (i's score against
        j, ties half) and games[i, j] (comparisons), and the per-entrant and per-pair block
        counts (see the class). worth[i, j]: the comparisons counted as independent ones (the
        games' `dependence`; default `games`), for the uncertainty: the fit's standard error from
        its information, sum_j worth_ij p_ij (1 - p_ij), cheap enough for every chunk (the
        matchmaker's guide only: the list's intervals are the block bootstrap's)."""
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
    """Step 1 of the rule, the seed's priority: sd * (1 + waited / entrants) * (1 + BEHIND *
    behind), sd the Elo's standard error (NEW_SD without games), waited the blocks since the
    entrant last sat at a table, behind the share of the field's median blocks it lacks (1 for a
    newcomer). A newcomer plays until it has caught up; no one waits for ever."""
    waited = np.where(st.last < 0, st.block + 1, st.block - st.last)
    median = np.median(st.blocks)
    behind = np.clip(1 - st.blocks / median, 0, 1) if median > 0 else 0.0
    return st.sd * (1 + waited / len(st.entrants)) * (1 + BEHIND * behind)


def opponent_weights(st: Standing, seed: int) -> np.ndarray:
    """Step 2 of the rule: the weight of each entrant as an opponent of `seed` (0 for itself),
    (p (1 - p))^2 * sqrt(sd_seed^2 + sd^2) / (1 + met / (mean_met + 1)): p the seed's expected
    score (close games teach most), the uncertainty of both, the pair's meetings so far against
    the seed's mean. A pair below 1/STARVED of its even share of the seed's blocks gets the
    highest weight."""
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
    entrants than seats, entrants sit more than once (every one at least once). With probability
    EXPLORE the whole table is drawn uniformly instead. `rule`: the ladder's."""
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
