"""The report's evaluation made for multiplayer games (docs/ratings.md): the Plackett-Luce Elo
on whole finishing orders beside the pairwise Elo, the skill with its uncertainty, the cycles of
the head-to-head matrix with a game-theoretic ranking, and what the games looked like.

    view(results, order, *, elo, games, rules, n_boot, seed, anchor)
                              the context of templates/evaluation.html.j2 (its ``evaluation``)
    rating_list_view(rl)      the same for `kdtourney ratings`' list
    sprt_view(results, test)  an SPRT's block outcomes (its ``sprt``)
    lines(context)            the same, as lines for the terminal

`results`: whole blocks of the store's results table; `order`: the entrants as the standings
rank them.
"""

from __future__ import annotations

import pandas as pd

from kdtourney.report import game_shape
from kdtourney.report.fmt import elo_text
from kdtourney.stats import block_outcomes, cycles, plackett_luce, ratings, skill

__all__ = ["view", "rating_list_view", "sprt_view", "lines"]


def _pl_rows(results: pd.DataFrame, order: list, bt, n_boot: int, seed: int,
             anchor) -> list[dict]:
    """A row per entrant in `order`: the pairwise Elo `bt` (`ratings.bootstrap_elo`'s table,
    computed when None) and the Plackett-Luce Elo, each with its interval (the same block
    resamples)."""
    if len(order) < 2:
        return []
    pl = plackett_luce.bootstrap_pl(results, n_boot=n_boot, seed=seed, anchor=anchor)
    if bt is None:
        bt = ratings.bootstrap_elo(results, n_boot=n_boot, seed=seed, anchor=anchor)
    rows = []
    for name in order:
        if name not in pl.index or name not in bt.index:
            continue
        p, b = pl.loc[name], bt.loc[name]
        rows.append({"name": name, "elo": b["elo"], "elo_lo": b["lo"], "elo_hi": b["hi"],
                     "record": b["record"], "pl": p["elo"], "pl_lo": p["lo"], "pl_hi": p["hi"],
                     "pl_record": p["record"]})
    return rows


def _skill_rows(results: pd.DataFrame, order: list) -> list[dict]:
    """A row per entrant, by mu - k sigma: openskill's online skill and the entrant's place in
    `order` (the batch fit's)."""
    table = skill.online_skill(results)
    place = {name: i for i, name in enumerate(order, 1)}
    return [{"name": name, "mu": r["mu"], "sigma": r["sigma"], "conservative": r["conservative"],
             "games": int(r["games"]), "rank": i, "fit_rank": place.get(name)}
            for i, (name, r) in enumerate(table.iterrows(), 1) if name in place]


def _cycles_view(results: pd.DataFrame, order: list, n_boot: int, seed: int) -> dict:
    """The head-to-head scores with intervals (rows and columns in `order`), the cycles named,
    and alpha-Rank's shares (None without open_spiel)."""
    scores = cycles.pair_scores(results, n_boot=n_boot, seed=seed)
    at = [scores.entrants.index(name) for name in order if name in scores.entrants]
    cells = [[None if a == b or not scores.meetings[a, b] else
              {"score": scores.score[a, b], "lo": scores.lo[a, b], "hi": scores.hi[a, b]}
              for b in at] for a in at]
    found = cycles.cycles(scores)
    meta = cycles.meta_ranking(scores)
    return {"names": [scores.entrants[a] for a in at], "cells": cells,
            "cycles": [{"text": c.text(), "clear": c.clear} for c in found],
            "meta": None if meta is None else [{"name": k, "share": float(v)}
                                               for k, v in meta.items()],
            "alpha_eps": cycles.ALPHA_EPS}


def view(results: pd.DataFrame, order: list, *, elo=None, games=None, rules=None,
         n_boot: int, seed: int = 0, anchor=None) -> dict:
    """The section's context (the templates' ``evaluation``) computed from `results`; `elo` the
    standings' `ratings.bootstrap_elo` table when there is one (else computed); `games` the
    stored games (moves) and `rules` the tournament's, for what the games looked like (None:
    what the results tell only)."""
    out = {"pl_rows": _pl_rows(results, order, elo, n_boot, seed, anchor), "n_boot": n_boot,
           "anchor": anchor, "skill_rows": _skill_rows(results, order) if len(order) >= 2 else [],
           "skill_k": skill.CONSERVATIVE_K,
           "h2h": _cycles_view(results, order, n_boot, seed) if len(order) >= 2 else None,
           "shape": game_shape.game_shape(results, games, rules or {}, n_boot, seed),
           "times": game_shape.decision_times(results)}
    out["branching_plot"] = game_shape.branching_plot(out["shape"])
    return out


def sprt_view(results: pd.DataFrame, test: dict | None, n_boot: int = 1000) -> dict | None:
    """An SPRT's block outcomes (`test`: the report's ``sprt_test``, its candidate and baseline;
    `results`: the blocks it counted): a row per score a block took, with the count and share,
    and the variance ratio with its interval; None for another folder or under two blocks."""
    if not test:
        return None
    out = block_outcomes.block_outcomes(results, test["candidate"], test["baseline"],
                                        n_boot=n_boot)
    if out is None:
        return None
    total = int(out.counts.sum())
    return {"rows": [{"score": float(v), "count": int(c), "share": c / total}
                     for v, c in zip(out.values, out.counts)],
            "ratio": out.ratio, "ratio_lo": out.ratio_lo, "ratio_hi": out.ratio_hi,
            "block_var": out.block_var, "independent_var": out.independent_var,
            "blocks": out.blocks, "pairs": out.pairs}


def rating_list_view(rl, seed: int = 0) -> dict | None:
    """`view` of a rating list (`kdtourney.report.pool.RatingList`, its pairwise Elo as rated):
    its first group of connected entrants (the others are on scales of their own), None without
    two of them."""
    rated = [e for e in rl.rated if e.group == 1]
    if rl.results is None or len(rated) < 2:
        return None
    order = [e.name for e in rated]
    elo = pd.DataFrame({"elo": [e.elo for e in rated], "lo": [e.lo for e in rated],
                        "hi": [e.hi for e in rated], "record": [e.record for e in rated]},
                       index=order)
    results = rl.results[rl.results["entrant"].isin(order)]
    results = results.rename(columns={"date": "finished_at"})  # the skill follows the dates
    anchor = rl.anchor if rl.anchor and rl.anchor[0] in order else None
    return view(results, order, elo=elo, rules=rl.rules, n_boot=rl.n_boot, seed=seed,
                anchor=anchor)


def lines(context: dict) -> list[str]:
    """The section in a few lines for the terminal (`kdtourney ratings`)."""
    ev = context or {}
    out = []
    if ev.get("pl_rows"):
        out.append("Plackett-Luce Elo on whole finishing orders (pairwise Elo beside it):")
        width = max(len(r["name"]) for r in ev["pl_rows"])
        for r in ev["pl_rows"]:
            pl = elo_text(r["pl"], r["pl_lo"], r["pl_hi"], r["pl_record"])
            pairwise = elo_text(r["elo"], r["elo_lo"], r["elo_hi"], r["record"])
            out.append(f"  {r['name']:<{width}}  {pl:<24}  pairwise {pairwise}")
    h2h = ev.get("h2h")
    if h2h:
        clear = [c["text"] for c in h2h["cycles"] if c["clear"]]
        out.append(f"Cycles: {len(h2h['cycles'])} ({len(clear)} clear of the noise)"
                   if h2h["cycles"] else "Cycles: none among the entrants that all met each other")
        out += [f"  {c['text']}{'' if c['clear'] else ' (within the noise)'}"
                for c in h2h["cycles"]]
        if h2h["meta"]:
            out.append("alpha-Rank (share of an evolving population): " + ", ".join(
                f"{m['name']} {m['share']:.0%}" for m in h2h["meta"]))
    for r in ev.get("shape") or []:
        seats = ", ".join(f"{s['mean']:.0%}" for s in r["seats"])
        out.append(f"{r['players']}-player games: {r['games']}, "
                   + (f"{r['decisions']:.0f} decisions a game, " if r["decisions"] else "")
                   + f"win share by seat {seats} (fair {r['fair']:.0%})")
    if ev.get("skill_rows"):
        k = ev["skill_k"]
        out.append(f"Skill game by game (openskill), by mu - {k:g} sigma:")
        width = max(len(r["name"]) for r in ev["skill_rows"])
        for r in ev["skill_rows"]:
            out.append(f"  {r['rank']:>2} {r['name']:<{width}}  mu {r['mu']:5.1f}  sigma "
                       f"{r['sigma']:4.1f}  mu-{k:g}sigma {r['conservative']:5.1f}  "
                       f"(by the fit: {r['fit_rank']})")
    return out
