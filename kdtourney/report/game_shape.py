"""What the games looked like, per player count (the variant is the tournament's rules): the
evaluation section's last part (kdtourney.report.evaluation; what it measures: docs/ratings.md).

    game_shape(results, games, rules, n_boot)   rows per player count: decisions per game,
                                                legal actions per decision (placement and claim
                                                apart), seat win shares with intervals, where
                                                the score came from; branching_plot(rows)
    decision_times(results)                     per entrant: its games' mean time a decision
                                                (median, 95th percentile) and its slowest one

`games`: the stored games (``moves``, seeds) whose results are in `results`, or None (no replay:
no legal actions, no score's origin); at most SAMPLE games a player count are replayed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kdtourney.engine import Game
from kdtourney.engine.tiles import CASTLE
from kdtourney.report.plots import COLORS, Plot, new_figure, styled, svg_plot
from kdtourney.stats.descriptive import block_bootstrap_means
from kdtourney.store.deals import rules_for, stored_deals

__all__ = ["game_shape", "branching_plot", "decision_times", "territory_points", "SAMPLE"]

SAMPLE = 100  # games replayed a player count: enough for means to a few percent


def territory_points(squares: dict) -> list[int]:
    """Points (squares x crowns) of every territory of a kingdom's ``squares()``."""
    seen, points = set(), []
    for start, (terrain, _) in squares.items():
        if start in seen or terrain == CASTLE:
            continue
        stack, size, crowns = [start], 0, 0
        seen.add(start)
        while stack:
            r, c = stack.pop()
            size, crowns = size + 1, crowns + squares[(r, c)][1]
            for near in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if near not in seen and squares.get(near, (None,))[0] == terrain:
                    seen.add(near)
                    stack.append(near)
        points.append(size * crowns)
    return points


def _replay(row, rules: dict) -> tuple[list, list, list]:
    """((round, legal placements) per place decision, legal claims per claim decision, per seat
    (best territory, other territories, bonus) points) of one stored game, its deals summed."""
    place, claim, parts = [], [], np.zeros((int(row["n_players"]), 3))
    table = rules_for(rules, int(row["n_players"]))
    for seed, actions in stored_deals(row):
        game = Game(table, seed)
        for action in actions:
            if game.phase == "place":
                place.append((game.round, len(game.legal_actions())))
            else:
                claim.append(len(game.legal_actions()))
            game.apply(action)
        for seat in range(game.n_players):
            score = game.score(seat)
            best = max(territory_points(game.kingdom(seat).squares()), default=0)
            parts[seat] += (best, score.territories - best, score.bonus)
    return place, claim, parts.tolist()


def _replayed(games: pd.DataFrame, rules: dict, seed: int) -> dict:
    """Per player count, the replays of at most SAMPLE of its games (drawn with `seed`)."""
    out = {}
    for n, rows in games.groupby("n_players"):
        pick = rows.sample(min(SAMPLE, len(rows)), random_state=seed).sort_values("game")
        place, claim, parts = [], [], []
        for row in pick.to_dict("records"):
            try:
                p, c, s = _replay(row, rules)
            except (ValueError, KeyError, TypeError):  # a row the engine refuses: not counted
                continue
            place += p
            claim += c
            parts += s
        out[int(n)] = (np.array(place, dtype=float).reshape(-1, 2), np.array(claim),
                       np.array(parts).reshape(-1, 3))
    return out


def _spread(x: np.ndarray) -> dict | None:
    return ({"mean": float(x.mean()), "median": float(np.median(x)), "max": int(x.max()),
             "forced": float((x == 1).mean())} if len(x) else None)


def game_shape(results: pd.DataFrame, games: pd.DataFrame | None, rules: dict,
               n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """A row (dict) per player count of `results`; see the module's docstring. [] for results
    without win shares (a rating list's pooled ranks)."""
    if "win_share" not in results.columns:
        return []
    seats = block_bootstrap_means(results[["win_share"]], results["n_players"] * 100
                                  + results["seat"], results["block"], n_boot=n_boot,
                                  seed=seed)["win_share"]
    played = {} if games is None else _replayed(
        games[games["game"].isin(results["game"])], rules, seed)
    rows = []
    for n, part in results.groupby("n_players"):
        n = int(n)
        decisions = part.groupby("game")["decisions"].sum() if "decisions" in part else None
        row: dict = {"players": n, "games": int(part["game"].nunique()),
               "decisions": None if decisions is None else float(decisions.mean()),
               "seats": [{"seat": s + 1, **seats.loc[n * 100 + s].to_dict()} for s in range(n)
                         if n * 100 + s in seats.index],
               "fair": 1.0 / n, "place": None, "claim": None, "sources": None, "replayed": 0,
               "by_round": None}
        if n in played:
            place, claim, parts = played[n]
            total = parts.sum()
            by_round = pd.Series(place[:, 1]).groupby(place[:, 0].astype(int)).mean()
            row.update(place=_spread(place[:, 1]), claim=_spread(claim),
                       replayed=len(parts) // n, by_round=by_round.to_dict(),
                       sources=None if total <= 0 else dict(zip(
                           ("best", "other", "bonus"), (parts.sum(axis=0) / total).tolist())))
        rows.append(row)
    return rows


@styled
def branching_plot(rows: list[dict]) -> Plot | None:
    """Legal placements a decision against the round, a line per table size (`game_shape`'s
    rows); None without replays."""
    rows = [r for r in rows if r.get("by_round")]
    if not rows:
        return None
    fig = new_figure(6.4, 2.8)
    ax = fig.subplots()
    alt = []
    for k, r in enumerate(rows):
        rounds, means = zip(*sorted(r["by_round"].items()))
        ax.plot(rounds, means, marker="o", ms=3, lw=1.6, color=COLORS[k % len(COLORS)],
                label=f"{r['players']} players")
        alt.append(f"{r['players']} players: from {means[0]:.1f} in round {rounds[0]} to "
                   f"{max(means):.1f} at most and {means[-1]:.1f} in round {rounds[-1]}")
    ax.set_xlabel("round (the k-th row placed)")
    ax.set_ylabel("legal placements a decision")
    ax.legend(frameon=False, fontsize=8)
    return svg_plot(fig, "Legal placements a decision by round. " + "; ".join(alt) + ".",
                    "branching")


def decision_times(results: pd.DataFrame) -> list[dict]:
    """Per entrant (by name): the median and 95th percentile over its games of the game's mean
    time a decision, and its slowest decision (the store keeps each game's total and maximum,
    not every decision); [] without timings."""
    if not {"time_total", "time_max", "decisions"} <= set(results.columns):
        return []
    timed = results[(results["decisions"] > 0) & results["time_total"].notna()]
    per_game = timed["time_total"] / timed["decisions"]
    rows = []
    for name, t in per_game.groupby(timed["entrant"].astype(str)):
        rows.append({"name": name, "median": float(t.median()), "p95": float(t.quantile(0.95)),
                     "max": float(timed.loc[t.index, "time_max"].max()), "games": len(t)})
    return sorted(rows, key=lambda r: r["name"])
