"""Skill with its uncertainty, updated game by game: openskill's Plackett-Luce model (Weng-Lin),
as the leaderboards of free-for-all games rank (when it parts from the batch fits: docs/ratings.md).

    online_skill(results, k=3)     mu, sigma, mu - k sigma and games per entrant after every game
                                   in order, ranked by mu - k sigma (a DataFrame)
    skill_history(results, name)   one entrant's mu and sigma after each of its games

`results` is the store's results table (``game``, ``entrant``, ``rank``; ``finished_at`` orders
the games where present, then ``game``). A game where one entrant holds several seats counts
only its other entrants' places (the entrant's first seat kept).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from openskill.models import PlackettLuce

__all__ = ["online_skill", "skill_history", "CONSERVATIVE_K"]

CONSERVATIVE_K = 3.0  # the leaderboards' mu - 3 sigma: a skill the entrant has with ~99.9%


def _games(results: pd.DataFrame):
    """Each game's (entrants, ranks) in the order played, one seat per entrant."""
    first = results.groupby("game", sort=True).first()
    when = (first.sort_values("finished_at", kind="stable").index
            if "finished_at" in first.columns else first.index)
    position = pd.Series(np.arange(len(when)), index=when)
    rows = results.assign(position=position.reindex(results["game"]).to_numpy())
    rows = rows.sort_values(["position", "seat"] if "seat" in rows.columns else ["position"],
                            kind="stable").drop_duplicates(["game", "entrant"])
    at = rows["position"].to_numpy()
    names = rows["entrant"].astype(str).to_numpy()
    ranks = rows["rank"].to_numpy(dtype=float)
    starts = np.r_[0, np.flatnonzero(at[1:] != at[:-1]) + 1, len(at)]
    for a, b in zip(starts[:-1], starts[1:]):
        if b - a >= 2:
            yield names[a:b], ranks[a:b]


def _replay(results: pd.DataFrame, follow: str | None = None):
    """(final ratings by entrant, games played by entrant, `follow`'s (mu, sigma) per game)."""
    model = PlackettLuce()
    skill: dict = {}
    played: dict[str, int] = {}
    trace: list[tuple[float, float]] = []
    for names, ranks in _games(results):
        teams = [[skill.get(n) or model.rating(name=n)] for n in names]
        rated = model.rate(teams, ranks=list(ranks))
        for n, (r,) in zip(names, rated):
            skill[n] = r
            played[n] = played.get(n, 0) + 1
            if n == follow:
                trace.append((r.mu, r.sigma))
    return skill, played, trace


def online_skill(results: pd.DataFrame, k: float = CONSERVATIVE_K) -> pd.DataFrame:
    """Per entrant (index): ``mu``, ``sigma``, ``conservative`` (mu - k sigma), ``games``; the
    strongest by ``conservative`` first. An entrant in no game with another is left out."""
    skill, played, _ = _replay(results)
    table = pd.DataFrame({"mu": [r.mu for r in skill.values()],
                          "sigma": [r.sigma for r in skill.values()],
                          "games": [played[n] for n in skill]},
                         index=pd.Index(list(skill), name="entrant"))
    table["conservative"] = table["mu"] - k * table["sigma"]
    table.attrs["k"] = k
    return table.sort_values("conservative", ascending=False, kind="stable")


def skill_history(results: pd.DataFrame, entrant: str) -> pd.DataFrame:
    """``mu`` and ``sigma`` of `entrant` after each of its games (rows in order played)."""
    _, _, trace = _replay(results, follow=str(entrant))
    return pd.DataFrame(trace, columns=["mu", "sigma"])
