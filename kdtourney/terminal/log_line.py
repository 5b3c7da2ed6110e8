"""The progress line a log reader expects every so often (as cutechess-cli prints it): games,
the leader against the next entrant (wins, losses, draws of their encounters), Elo difference
with its 95% interval, and the likelihood of superiority.

    PairTally().add(results)   the rows of one finished game (entrant, rank per seat)
    PairTally.line(first, second)   'greedy vs random: 31-7-2 (0.800), Elo +241 +- 96, LOS 100.0%'

The figures count each encounter as independent, as cutechess does: a quick reading while the
games come in. The report's intervals (block bootstrap, kdtourney.stats) are the ones to quote.
"""

from __future__ import annotations

import math
from collections import defaultdict


class PairTally:
    """Wins, losses and draws of every ordered pair of entrants, from the ranks inside each game
    (each pair of seats is one encounter, as the ratings count them)."""

    def __init__(self):
        self.wld = defaultdict(lambda: [0, 0, 0])

    def add(self, results) -> None:
        rows = [(r["entrant"], r["rank"]) for r in results if r.get("rank") is not None]
        for i, (a, rank_a) in enumerate(rows):
            for b, rank_b in rows[i + 1:]:
                if a == b:
                    continue
                k = 0 if rank_a < rank_b else (1 if rank_a > rank_b else 2)
                self.wld[(a, b)][k] += 1
                self.wld[(b, a)][(1, 0, 2)[k]] += 1

    def line(self, first: str, second: str) -> str | None:
        """`first` against `second`, or None if they never met."""
        w, losses, d = self.wld.get((first, second), (0, 0, 0))
        n = w + losses + d
        if not n:
            return None
        score = (w + d / 2) / n
        elo, margin = elo_interval(w, losses, d)
        los = likelihood_of_superiority(w, losses)
        if not math.isfinite(elo):  # a perfect score: no estimate
            shown = f"Elo {'+inf' if score == 1 else '-inf'}"
        else:  # an interval that reaches a perfect score is unbounded
            shown = f"Elo {round(elo):+d} +- {margin:.0f}" if math.isfinite(margin) else \
                f"Elo {round(elo):+d} +- inf"
        return (f"{first} vs {second}: {w}-{losses}-{d} ({score:.3f}), {shown}, "
                f"LOS {100 * los:.1f}%")


def elo_interval(wins: int, losses: int, draws: int) -> tuple[float, float]:
    """(Elo difference, half-width of its 95% interval) from a score's normal approximation, as
    cutechess-cli computes them; infinite for a perfect score."""
    n = wins + losses + draws
    score = (wins + draws / 2) / n
    if score in (0.0, 1.0):
        return (math.inf if score == 1 else -math.inf), math.inf
    var = (wins * (1 - score) ** 2 + losses * score ** 2 + draws * (0.5 - score) ** 2) / n
    half = 1.959964 * math.sqrt(var / n)

    def elo(p):
        return -400 * math.log10(1 / p - 1) if 0 < p < 1 else math.copysign(math.inf, p - 0.5)

    return elo(score), (elo(min(score + half, 1)) - elo(max(score - half, 0))) / 2


def likelihood_of_superiority(wins: int, losses: int) -> float:
    """P(the first is stronger), from wins and losses (draws say nothing of it)."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1 + math.erf((wins - losses) / math.sqrt(2 * (wins + losses))))


__all__ = ["PairTally", "elo_interval", "likelihood_of_superiority"]
