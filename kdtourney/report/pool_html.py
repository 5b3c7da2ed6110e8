"""The rating list's page (`kdtourney ratings`): one self-contained HTML page in the style of the
tournament report, with its templates, CSS, script, plot helpers and Content-Security-Policy.

`write_rating_list(rating_list, out)` writes `<out>/index.html`: the list with intervals, the
likelihood of superiority, Elo against the dates of the games, and where every game came from.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pandas as pd

from kdtourney import __version__
from kdtourney.report import plots
from kdtourney.report.fmt import fmt_elo
from kdtourney.report.page import REPORT_FILE, describe_rules, elo_scale, render, write_page
from kdtourney.report.pool import RatingList

__all__ = ["write_rating_list", "build_context"]


def write_rating_list(rating_list: RatingList, out, command: str | None = None) -> Path:
    """Write the page of `rating_list` to `<out>/index.html` (atomically); returns its path.
    command: the command line that made it, shown on the page."""
    path = Path(out) / REPORT_FILE
    write_page(render(build_context(rating_list, command), "pool.html.j2"), path)
    return path


def _day(stamp) -> str | None:
    return None if stamp is None or pd.isna(stamp) else pd.Timestamp(stamp).strftime("%Y-%m-%d")


def _span(first, last) -> str | None:
    a, b = _day(first), _day(last)
    return a if a == b else f"{a} to {b}"


def _code(e) -> dict:
    """How the page shows an entrant's code: the digest, and what the identity says it is."""
    identity = e.identity or {}
    what = [identity.get("kind", ""), identity.get("origin", "")]
    if identity.get("bot_name"):
        what.append(" ".join(str(x) for x in (identity["bot_name"], identity.get("bot_version"))
                             if x))
    return {"digest": e.digest or "unknown", "what": ", ".join(w for w in what if w)}


def build_context(rl: RatingList, command: str | None = None) -> dict:
    """Everything `templates/pool.html.j2` shows."""
    rated = rl.rated
    names = [e.name for e in rated]
    labels = plots.entrant_colors(list(dict.fromkeys(e.label for e in rl.entrants)))
    colors = {e.name: labels[e.label] for e in rl.entrants}
    folders = [str(s.folder) for s in rl.sources]
    rows = []
    for rank, e in enumerate(rated, 1):
        row = {"rank": rank, "name": e.name, "elo": e.elo, "elo_lo": e.lo, "elo_hi": e.hi,
               "record": e.record, "group": e.group,
               "games": e.games, "failed": e.failed, "code": _code(e),
               "folders": [folders[i] for i in e.folders], "dates": _span(e.first, e.last)}
        if rank < len(names) and rated[rank].group == e.group:  # none between groups
            row["los_next"] = rl.los.loc[e.name, names[rank]]
        rows.append(row)
    unrated = [{"name": e.name, "why": e.unrated, "games": e.games, "code": _code(e),
                "folders": [folders[i] for i in e.folders]} for e in rl.entrants if e.unrated]
    anchor_text = f"{rl.anchor[0]} = {fmt_elo(rl.anchor[1])}" if rl.anchor else "mean 0"
    table = pd.DataFrame([{"name": e.name, "label": e.label, "elo": e.elo, "lo": e.lo,
                           "hi": e.hi, "first": e.first, "last": e.last} for e in rated])
    sources = [{"folder": str(s.folder), "kind": s.kind, "description": s.description,
                "pooled": s.pooled, "stored": s.stored, "dates": _span(s.first, s.last),
                "code": s.code, "version": s.version, "note": s.note} for s in rl.sources]
    first = min((s.first for s in rl.sources if not pd.isna(s.first)), default=None)
    last = max((s.last for s in rl.sources if not pd.isna(s.last)), default=None)
    rules = describe_rules(rl.rules or {})
    if (rl.rules or {}).get("dynasty"):
        rules += ", dynasties of three deals"
    return {
        "title": "Rating list",
        "version": __version__,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "command": command,
        "n_games": rl.n_games, "n_blocks": rl.n_blocks, "n_folders": rl.n_folders,
        "n_boot": rl.n_boot,
        "players": list(rl.players), "rules_text": rules, "rules": rl.rules or {},
        "dates": _span(first, last) if first is not None else None,
        "anchor": rl.anchor, "colors": colors,
        "rows": rows, "elo_scale": elo_scale(rows), "unrated": unrated, "groups": rl.groups,
        "los": {"names": names,
                "cells": [[rl.los.loc[a, b] for b in names] for a in names]},
        "plot": plots.elo_dates_plot(table, colors, plots.short(anchor_text, 40)),
        "sources": sources, "skipped": [{"folder": f, "why": r} for f, r in rl.skipped],
        "any_failed": any(e.failed for e in rl.entrants),
        "evaluation": rl.evaluation,
    }
