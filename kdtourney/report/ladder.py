"""The ladder's list and page (`ladder/index.html`), from its store.

The list is `kdtourney ratings` on the ladder's folder (kdtourney.report.pool.rating_list: one
fit, one bootstrap, over every table size the ladder plays, as its matchmaker rates them), with the
ladder's own columns: each entrant's version and status.

Status
------
- superseded: an older version of a bot whose code changed (its games stay in the list);
- retired: its bot left the folders (no new games);
- new: active, not yet in a balanced block;
- provisional: active, rated, but its 95% interval is wider than +-PROVISIONAL Elo or one-sided;
- rated: active, its interval within +-PROVISIONAL Elo.
"""

from __future__ import annotations

import datetime as _dt
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from kdtourney import __version__
from kdtourney import store as _store
from kdtourney.report import plots
from kdtourney.report.fmt import elo_text
from kdtourney.report.page import (
    REPORT_FILE,
    block_seats,
    describe_rules,
    elo_scale,
    faults_view,
    render,
    replay_view,
    write_page,
)
from kdtourney.report.pool import PoolError, rating_list
from kdtourney.stats import descriptive as stats
from kdtourney.stats import ratings
from kdtourney.stats.outcomes import balanced_blocks

PROVISIONAL = 100.0    # Elo: an interval wider than +-this is provisional
LAST_GAMES = 20        # games listed (and replayable) on the page
RELOAD_SECONDS = 5     # the page reloads itself this often while the ladder runs
HISTORY_POINTS = 20


@dataclass
class Board:
    """The ladder's list: `rows` (dicts, rated entrants strongest first, then the others),
    `found` (the RatingList, None before any rated game), notes."""

    rows: list
    found: object = None
    notes: list = field(default_factory=list)


def ladder_board(folder, n_boot: int = 1000, seed: int = 0) -> Board:
    """The list of the ladder in `folder`: the rating list of its games of every table size it
    plays (as `kdtourney ratings FOLDER` computes it) with each entrant's version and status."""
    entrants = _store.load_ladder_entrants(folder)
    sizes = tuple(_store.load_config(folder)["ladder"]["players"])
    try:
        found = rating_list([folder], players=sizes, n_boot=n_boot, seed=seed)
    except PoolError:
        found = None
    listed = {e.label: e for e in found.entrants} if found is not None else {}
    rank = {e.label: i for i, e in enumerate(found.rated, 1)} if found is not None else {}
    rows = []
    for r in entrants.to_dict("records"):
        e = listed.get(r["label"])
        rated = e is not None and e.unrated is None
        if e is not None and rated:
            elo, lo, hi, record = e.elo, e.lo, e.hi, e.record
        else:
            elo, lo, hi, record = math.nan, math.nan, math.nan, ""
        status = r["status"]
        if status == "active":
            wide = rated and (record or hi - lo > 2 * PROVISIONAL)
            status = "new" if not rated else "provisional" if wide else "rated"
        rows.append(dict(
            rank=rank.get(r["label"]), name=r["label"], spec=r["spec"], version=int(r["version"]),
            status=status, digest=(r["digest"] or "")[:12], origin=r["origin"], added=r["added"],
            changed=r["changed"], note=r["note"] or "", games=e.games if e is not None else 0,
            elo=elo, elo_lo=lo, elo_hi=hi, record=record,
            elo_text=elo_text(elo, lo, hi, record) if rated else "-"))
    rows.sort(key=lambda row: (row["rank"] is None, row["rank"] or 0, row["name"]))
    return Board(rows, found, found.notes() if found is not None else [])


def build_context(folder, board: Board, running: bool) -> dict:
    """Everything `templates/ladder.html.j2` shows."""
    t0 = time.perf_counter()
    folder = Path(folder)
    config = _store.load_config(folder)
    meta = config.get("meta") or {}
    ladder = config.get("ladder") or {}
    with _store.reader(folder) as r:  # the ladder stores games meanwhile: one state of the store
        results = _store.load_results(folder)
        n_games = r.count_games()
        newest = _store.load_games(folder, newest=LAST_GAMES)  # the games the page shows
        faults = _store.load_faults(folder)
        blocks = _store.load_blocks(folder)
        notes = r.notes()
    colors = plots.entrant_colors([r["name"] for r in board.rows])
    ctx = {
        "title": str(meta.get("name") or folder.resolve().name),
        "folder": str(folder), "version": __version__, "running": running,
        "reload": RELOAD_SECONDS,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "rules_text": describe_rules(ladder.get("rules") or {}),
        "players": "/".join(str(p) for p in ladder.get("players") or []),
        "seed": ladder.get("seed"), "rows": board.rows, "colors": colors,
        "elo_scale": elo_scale([r for r in board.rows if r["rank"]]),
        # the bots of the folders that did not enter at the last look, then the list's notes
        "n_games": n_games, "notes": [*config.get(_store.LADDER_INTAKE, []), *board.notes],
        "n_boot": getattr(board.found, "n_boot", 0),
        "faults": faults_view(faults.iloc[::-1]),  # newest first
        "faults_by_entrant": _faults_by_entrant(faults),
        "evaluation": getattr(board.found, "evaluation", None),
    }
    whole = balanced_blocks(results).assign(entrant=lambda r: r["entrant"].astype(str))
    order = [r["name"] for r in board.rows if r["rank"]]
    ctx["history_plot"] = ctx["h2h_plot"] = None
    ctx["pairs"] = []
    if len(order) >= 2 and whole["entrant"].nunique() >= 2:
        history = ratings.elo_history(whole, points=HISTORY_POINTS, n_boot=0)
        ctx["history_plot"] = plots.convergence_plot(history, order, colors)
        h2h = stats.head_to_head(whole)
        ctx["pairs"] = [dict(entrant=e, opponent=o, score=float(v["score"]),
                             meetings=int(v["meetings"]))
                        for (e, o), v in h2h.iterrows() if e < o]
    shown = newest["game"]
    ctx.update(_last_games(results, newest, ladder.get("rules") or {}, block_seats(blocks),
                           faults[faults["game"].isin(shown)], notes[notes["game"].isin(shown)]))
    ctx["seconds"] = time.perf_counter() - t0
    return ctx


def _faults_by_entrant(faults: pd.DataFrame) -> list:
    """Per entrant: its faults by kind and its last stderr lines (newest fault that has any)."""
    out = []
    for entrant, f in faults.groupby(faults["entrant"].fillna("(unknown)").astype(str)):
        kinds = ", ".join(f"{k} {n}" for k, n in f["kind"].value_counts().items())
        with_err = f[f["stderr"].notna() & (f["stderr"].astype(str) != "")]
        last = str(with_err["stderr"].iloc[-1]) if len(with_err) else ""
        message = str(f["message"].iloc[-1]) if f["message"].notna().any() else ""
        out.append(dict(entrant=entrant, count=int(len(f)), kinds=kinds, message=message,
                        stderr=last))
    return out


def _last_games(results, games, rules, seated, faults, notes) -> dict:
    """The newest games (`games`: the last LAST_GAMES), each with its players, all in the
    report's game viewer (the moves kdtourney played after a fault marked, the bots' notes)."""
    newest = games.sort_values("game", ascending=False)
    rows = []
    for _, g in newest.iterrows():
        res = results[results["game"] == g["game"]].sort_values("seat")
        players = [{"seat": int(r["seat"]), "name": str(r["entrant"]), "score": int(r["score"]),
                    "rank": int(r["rank"]), "fault": bool(r["fault"]), "margin": int(r["margin"])}
                   for _, r in res.iterrows()]
        rows.append(dict(game=int(g["game"]), block=int(g["block"]), status=str(g["status"]),
                         finished=str(g["finished_at"] or ""), players=players))
    view = replay_view(newest.sort_values("game"), results[results["game"].isin(newest["game"])],
                       rules, seated=seated,
                       start=int(newest["game"].iloc[0]) if len(newest) else None,
                       faults=faults, notes=notes)
    return {"last_games": rows, **view}


def ladder_page(folder, board: Board | None = None, running: bool = False) -> str:
    """The ladder's page (HTML) of what `folder` stores; `running`: the page reloads itself."""
    board = board if board is not None else ladder_board(folder)
    return render(build_context(folder, board, running), "ladder.html.j2")


def write_ladder_page(folder, board: Board | None = None, running: bool = False) -> Path:
    """Write `folder`/index.html (atomically): `ladder_page`."""
    path = Path(folder) / REPORT_FILE
    write_page(ladder_page(folder, board, running), path)
    return path


__all__ = ["Board", "ladder_board", "build_context", "ladder_page", "write_ladder_page",
           "PROVISIONAL"]
