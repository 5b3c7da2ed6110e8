"""The tournament report: one self-contained HTML page, `<tournament folder>/index.html`.

`write_report(folder)` reads the store (`kdtourney.arena.store`), computes the ratings and
statistics (`ratings`, `stats`), draws the plots (`plots`) and kingdoms (`svg`), replays the chosen
games with the engine, and renders `templates/report.html.j2` (Jinja2, autoescape on: every name,
parameter and message a user supplied is escaped). The page needs no network: CSS, JavaScript,
plots (SVG) and the replay data (JSON) are all inside it.

Build cost is dominated by the bootstraps (`n_boot` resamples of the blocks, default 1000) and the
plots; only the chosen games (each entrant's best and typical game) are replayed.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
import sqlite3
import tempfile
import time
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from kdtourney import __version__
from kdtourney.arena import store as _store
from kdtourney.engine import Game, Rules
from kdtourney.outcomes import balanced_blocks
from kdtourney.engine.tiles import TERRAIN_NAMES, TILES
from kdtourney.outcomes import elo_to_score
from kdtourney import ratings, stats
from kdtourney.report import plots, svg
from kdtourney.report.fmt import (DASH, RECORDS, finite, fmt_bound, fmt_ci, fmt_elo, fmt_num,
                                  fmt_pct, fmt_signed, fmt_time, fmt_value)
from kdtourney.report.standings import N_BOOT, standings

__all__ = ["write_report", "write_page", "build_context", "render", "parse_anchor", "ReportError",
           "REPORT_FILE"]

REPORT_FILE = "index.html"
#: Colours of the seats' kings (the game's pink, yellow, green and blue).
SEAT_COLORS = ["#d6336c", "#e0a800", "#2b9348", "#1c7ed6"]
_FAULT_ROWS = 500


class ReportError(ValueError):
    """Bad input for the report (an anchor that is not NAME=VALUE or names no entrant); one line."""


# ----------------------------------------------------------------------------------------------
# Entry points
# ----------------------------------------------------------------------------------------------


def write_report(tournament_dir, anchor=None, *, n_boot: int = N_BOOT, seed: int = 0,
                 out=None) -> Path:
    """Build the report of the tournament in `tournament_dir` and write it; returns its path.

    anchor: None (Elo mean 0), "NAME=VALUE" or (name, value): pins one entrant's Elo.
    n_boot: bootstrap resamples of the blocks for every interval. out: the file to write, by
    default `<tournament_dir>/index.html` (written atomically: a reader never sees half a page).
    Raises `kdtourney.arena.store.StoreError` for a missing or unreadable store and `ReportError`
    for a bad anchor.
    """
    folder = Path(tournament_dir)
    if "ladder" in _store.load_config(folder):  # a ladder's report is its page
        from kdtourney.report.ladder import ladder_board, write_ladder_page

        return write_ladder_page(folder, ladder_board(folder, n_boot=n_boot, seed=seed))
    context = build_context(folder, anchor, n_boot=n_boot, seed=seed)
    path = Path(out) if out is not None else folder / REPORT_FILE
    write_page(render(context), path)
    return path


def write_page(page: str, path: Path) -> None:
    """Write `page` to `path` atomically (a reader never sees half a page), readable by all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".index-", suffix=".html", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(page)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes the file private; a report is for sharing
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def parse_anchor(anchor):
    """(name, value) from None, "NAME=VALUE" (split at the last '=') or a (name, value) pair."""
    if anchor is None:
        return None
    if isinstance(anchor, str):
        name, sep, value = anchor.rpartition("=")
        if not sep or not name:
            raise ReportError(f"anchor {anchor!r} is not NAME=VALUE (e.g. greedy=0)")
    else:
        try:
            name, value = anchor
        except (TypeError, ValueError):
            raise ReportError(f"anchor {anchor!r} is not a (name, value) pair") from None
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ReportError(f"anchor value {value!r} is not a number") from None
    if not math.isfinite(value):
        raise ReportError(f"anchor value {value!r} is not a finite number")
    return str(name), value


def _json_for_script(data) -> Markup:
    """JSON safe inside <script type="application/json">: no '<', '>' or '&' left raw."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------


def _read_optional(folder: Path, table: str):
    """A table that only some stores have (e.g. `sprt`), or None."""
    path = _store.store_path(folder)
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if table not in names:
            return None
        return pd.read_sql_query(f"SELECT * FROM {table}", conn)
    except (sqlite3.Error, pd.errors.DatabaseError):
        return None
    finally:
        conn.close()


def _load_faults(folder: Path) -> pd.DataFrame:
    loader = getattr(_store, "load_faults", None)
    if loader is not None:
        return loader(folder)
    df = _read_optional(folder, "faults")
    return df if df is not None else pd.DataFrame(columns=["game", "seat", "entrant", "kind", "message"])


# ----------------------------------------------------------------------------------------------
# Context
# ----------------------------------------------------------------------------------------------


def _rules_for(rules: dict, n_players: int) -> Rules:
    fields = {f.name for f in dataclasses.fields(Rules)}
    return Rules(**{k: v for k, v in dict(rules, players=int(n_players)).items() if k in fields})


def _describe_rules(rules: dict) -> str:
    parts = ["Mighty Duel (7\u00d77)" if rules.get("variant") == "duel" else "standard rules (5\u00d75)"]
    if rules.get("harmony"):
        parts.append("Harmony")
    if rules.get("middle_kingdom"):
        parts.append("Middle Kingdom")
    return " + ".join(parts)


def build_context(folder, anchor=None, *, n_boot: int = N_BOOT, seed: int = 0) -> dict:
    """Everything the template shows, computed from the store of the tournament in `folder`."""
    t0 = time.perf_counter()
    timings = {}
    folder = Path(folder)
    config = _store.load_config(folder)
    tournament = config.get("tournament", {}) or {}
    meta = config.get("meta", {}) or {}
    results = _store.load_results(folder)
    games = _store.load_games(folder)
    faults = _load_faults(folder)
    sprt = _read_optional(folder, "sprt")
    timings["read"] = time.perf_counter() - t0
    anchor = parse_anchor(anchor)
    rules = tournament.get("rules", {}) or {}

    ctx = {
        "title": str(meta.get("name") or tournament.get("name") or folder.resolve().name),
        "folder": str(folder),
        "version": __version__,
        "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "tournament": tournament,
        "meta": meta,
        "rules_text": _describe_rules(rules),
        "clock_text": _describe_clock(tournament),
        "n_boot": n_boot,
        "anchor": anchor,
        "seat_colors": SEAT_COLORS,
    }
    ctx.update(_progress(tournament, meta, games, results))
    results = balanced_blocks(results)  # every statistic below: whole blocks only
    ctx["reproduce"] = _reproducibility(tournament, meta, config)
    ctx["reproduce"]["entrants"] = _identities_view(_store.load_entrants(folder), meta)
    ctx["faults"] = _faults_view(faults)
    ctx["failed_by_entrant"] = {str(e): int(n) for e, n in _store.failed_games(folder).items()}
    over_time = faults[faults["kind"].isin(("timeout", "time"))] if len(faults) else faults
    ctx["time_forfeits"] = {str(e): int(n) for e, n in over_time.groupby("entrant").size().items()}

    entrants_all = sorted(results["entrant"].astype(str).unique()) if len(results) else []
    ctx["entrants"] = entrants_all
    if anchor is not None and anchor[0] not in entrants_all:
        known = ", ".join(entrants_all) or "none yet"
        raise ReportError(f"anchor entrant {anchor[0]!r} is not in this tournament (entrants: {known})")
    ctx["has_results"] = len(results) > 0
    if not ctx["has_results"]:
        ctx.update(standings=[], plots={}, tables={}, kingdoms=[], replay=None, verdict=None,
                   los=None, sprt=None, notes=[])
        ctx["timings"] = dict(timings, total=time.perf_counter() - t0)
        return ctx

    results = results.assign(entrant=results["entrant"].astype(str))
    ctx.update(_statistics(results, anchor, n_boot, seed, timings))
    order = [row["name"] for row in ctx["standings"]]
    colors = plots.entrant_colors(order)
    ctx["colors"] = colors

    t = time.perf_counter()
    figs = {}
    if ctx["elo_table"] is not None:
        anchor_text = f"{anchor[0]} = {fmt_elo(anchor[1])}" if anchor else "mean 0"
        figs["elo"] = plots.elo_plot(ctx["elo_table"], colors, plots.short(anchor_text, 40))
        figs["convergence"] = plots.convergence_plot(ctx["history"], order, colors)
    figs["scores"] = plots.score_plot(results, order, colors)
    figs["margins"] = plots.margin_plot(results, order, colors)
    if len(order) >= 2 and ctx["h2h_score"] is not None:
        figs["h2h"] = plots.h2h_plot(ctx["h2h_score"], ctx["h2h_meetings"])
    figs["seats"] = plots.seat_plot(ctx["seat_df"])
    if sprt is not None and len(sprt) and {"block", "llr", "lower", "upper"} <= set(sprt.columns):
        figs["llr"] = plots.llr_plot(sprt)
        ctx["sprt"] = _sprt_view(sprt)
    else:
        ctx["sprt"] = None
    ctx["plots"] = figs
    timings["plots"] = time.perf_counter() - t

    t = time.perf_counter()
    ctx.update(_chosen_games(results, games, rules, order, ctx["entrant_rows"]))
    timings["replays"] = time.perf_counter() - t
    ctx["timings"] = dict(timings, total=time.perf_counter() - t0)
    return ctx


def _progress(tournament: dict, meta: dict, games: pd.DataFrame, results: pd.DataFrame) -> dict:
    """Counts, dates and whether the tournament is complete."""
    n_done = int(len(games))
    requested = tournament.get("games")
    requested = int(requested) if isinstance(requested, (int, float)) and requested else None
    blocks = int(games["block"].nunique()) if n_done else 0
    incomplete_blocks = 0
    if n_done:
        per_block = games.groupby("block").agg(n=("game", "size"), players=("n_players", "first"))
        incomplete_blocks = int((per_block["n"] < per_block["players"]).sum())
    partial = (requested is not None and n_done < requested) or incomplete_blocks > 0
    finished = games["finished_at"].dropna() if n_done and "finished_at" in games else pd.Series([], dtype=object)
    counts = sorted(int(x) for x in games["n_players"].unique()) if n_done else []
    players_cfg = tournament.get("players")
    if not counts and players_cfg:
        counts = sorted(int(x) for x in (players_cfg if isinstance(players_cfg, list) else [players_cfg]))
    return {
        "n_games": n_done,
        "requested_games": requested,
        "n_blocks": blocks,
        "incomplete_blocks": incomplete_blocks,
        "partial": partial,
        "player_counts": counts,
        "mixed_counts": len(counts) > 1,
        "dynasty": bool(tournament.get("dynasty")),
        "format": str(tournament.get("format") or ""),
        "first_finished": str(finished.min()) if len(finished) else None,
        "last_finished": str(finished.max()) if len(finished) else None,
        "fault_games": int((games["status"] != "ok").sum()) if n_done else 0,
    }


_REPRO_KEYS = [
    ("Command line", ("command_line", "command", "cmdline", "argv")),
    ("kdtourney version", ("kdtourney", "kdtourney_version", "version")),
    ("Python", ("python", "python_version")),
    ("Numba", ("numba", "numba_version")),
    ("NumPy", ("numpy", "numpy_version")),
    ("Platform", ("platform",)),
    ("Created", ("created", "started")),
    ("Updated", ("updated", "finished")),
]


def _describe_clock(tournament: dict) -> str:
    """'clock: 10+0.1 s a game, first decision 1 s', or '' without a time limit."""
    from kdtourney.bots.clock import TimeControl

    try:
        control = TimeControl(move_s=tournament.get("move_time_limit"),
                              **(tournament.get("clock") or {}))
    except (TypeError, ValueError):
        return ""
    return f"clock: {control.describe()}" if control.limited else ""


def _reproducibility(tournament: dict, meta: dict, config: dict) -> dict:
    """The command line and versions first, then every recorded setting, as (key, text) pairs."""
    merged = dict(meta)
    highlights = []
    used = set()
    for label, keys in _REPRO_KEYS:
        for k in keys:
            if k in merged and merged[k] not in (None, ""):
                v = merged[k]
                if isinstance(v, (list, tuple)) and label == "Command line":
                    v = " ".join(str(x) for x in v)
                highlights.append((label, fmt_value(v)))
                used.add(k)
                break
    settings = [(k, fmt_value(v)) for k, v in sorted(tournament.items()) if k != "rules"]
    settings += [(f"play: {k}", fmt_value(v)) for k, v in sorted((config.get("play") or {}).items())]
    rules = [(k, fmt_value(v)) for k, v in sorted((tournament.get("rules") or {}).items())]
    other_meta = [(k, fmt_value(v)) for k, v in sorted(meta.items()) if k not in used]
    return {"highlights": highlights, "settings": settings, "rules": rules, "meta": other_meta,
            "schema": config.get("schema_version")}


def _identities_view(entrants: pd.DataFrame, meta: dict) -> dict:
    """What code played for each entrant (the store's `entrants` table), and since which game
    when a store older than that table recorded it on a resume."""
    rows = []
    for r in entrants.itertuples():
        identity = r.identity or {}
        code = {k: v for k, v in identity.items() if k not in ("kind", "digest", "origin")}
        rows.append({"entrant": str(r.entrant), "digest": r.digest or "unknown",
                     "kind": identity.get("kind", ""), "origin": identity.get("origin", ""),
                     "code": ", ".join(f"{k} {fmt_value(v)}" for k, v in sorted(code.items()))})
    return {"rows": rows, "recorded_after": meta.get("entrants_recorded_after")}


def _faults_view(faults: pd.DataFrame) -> dict:
    """The faults table's rows, counts by entrant and kind, forfeits and failed games."""
    rows = []
    by_kind = []
    failed = int(faults.loc[faults["kind"] == "failed", "game"].nunique()) if len(faults) else 0
    if len(faults):
        f = faults.copy()
        f["entrant"] = f["entrant"].fillna("(unknown)").astype(str)
        f["kind"] = f["kind"].astype(str)
        for _, r in f.head(_FAULT_ROWS).iterrows():
            seat = int(r["seat"]) if finite(r["seat"]) else -1
            rows.append({"game": int(r["game"]), "seat": seat + 1 if seat >= 0 else DASH,
                         "entrant": r["entrant"], "kind": r["kind"],
                         "message": "" if pd.isna(r.get("message")) else str(r["message"]),
                         "stderr": "" if pd.isna(r.get("stderr")) else str(r["stderr"])})
        counts = f.groupby(["entrant", "kind"]).size()
        by_kind = [{"entrant": e, "kind": k, "count": int(n)} for (e, k), n in counts.items()]
    return {"rows": rows, "total": int(len(faults)), "shown": len(rows), "by_kind": by_kind,
            "forfeits": int((faults["kind"] != "failed").sum()) if len(faults) else 0,
            "failed": failed}


def _statistics(results: pd.DataFrame, anchor, n_boot: int, seed: int, timings: dict) -> dict:
    out = {}
    entrants = sorted(results["entrant"].unique())
    t = time.perf_counter()
    table = standings(results, n_boot=n_boot, seed=seed, anchor=anchor)  # as the terminal's
    summary, elo_table, order = table.summary, table.elo, table.order
    timings["ratings"] = time.perf_counter() - t
    # per-decision time (the store has decision counts)
    if "decisions" in results and "time_total" in results:
        g = results.groupby("entrant")
        dec = g["decisions"].sum()
        summary["time_per_decision"] = (g["time_total"].sum() / dec.where(dec > 0)).reindex(summary.index)
        summary["decisions"] = (dec / g.size()).reindex(summary.index)

    history = los = draws = None
    t = time.perf_counter()
    if elo_table is not None:
        draws = elo_table.attrs["draws"]
        los = ratings.los_matrix(elo_table)
        history = ratings.elo_history(results, points=20, anchor=anchor,
                                      n_boot=min(200, max(0, n_boot // 5)), seed=seed)
    timings["history"] = time.perf_counter() - t

    games_played = results.groupby("entrant")["game"].nunique()
    rows = []
    leader = order[0]
    for rank, name in enumerate(order, 1):
        s = summary.loc[name]
        row = {"rank": rank, "name": name, "games": int(games_played.get(name, 0)),
               "seats": int(s["games"]), "blocks": int(s["blocks"])}
        for c in ("win_share", "score", "margin"):
            row[c] = s.get(c)
            row[c + "_lo"] = s.get(c + "_lo")
            row[c + "_hi"] = s.get(c + "_hi")
        if elo_table is not None and name in elo_table.index:
            e = elo_table.loc[name]
            row.update(elo=e["elo"], elo_lo=e["lo"], elo_hi=e["hi"], record=e["record"])
            if name != leader:
                d = (draws[name] - draws[leader]).to_numpy(dtype=float)
                d = d[np.isfinite(d)]
                row["delta"] = row["elo"] - elo_table.loc[leader, "elo"]
                if len(d):
                    row["delta_lo"], row["delta_hi"] = stats.percentile_interval(d)
            if rank < len(order) and los is not None:
                row["los_next"] = los.loc[name, order[rank]]
        rows.append(row)
    out["standings"] = rows
    out["elo_table"] = elo_table
    out["history"] = history
    out["los"] = None if los is None else {
        "names": list(los.index),
        "cells": [[los.loc[a, b] for b in los.columns] for a in los.index],
    }
    out["verdict"] = _verdict(rows, los, elo_table, int(results["block"].nunique()))
    out["elo_scale"] = _elo_scale(rows)

    # per-entrant detail table
    entrant_rows = []
    for name in order:
        s = summary.loc[name]
        row = {"name": name, **{k: (v.item() if hasattr(v, "item") else v) for k, v in s.items()}}
        for k in ("games", "blocks", "faults"):
            if k in row and finite(row[k]):
                row[k] = int(row[k])
        entrant_rows.append(row)
    out["entrant_rows"] = entrant_rows

    # head to head
    if len(entrants) >= 2:
        h2h = stats.head_to_head(results)
        out["h2h_score"] = h2h["score"].unstack("opponent").reindex(index=order, columns=order)
        out["h2h_meetings"] = h2h["meetings"].unstack("opponent").reindex(index=order, columns=order)
        cells = []
        for a in order:
            row = []
            for b in order:
                if a == b or (a, b) not in h2h.index:
                    row.append(None)
                else:
                    r = h2h.loc[(a, b)]
                    row.append({"wins": int(r["wins"]), "ties": int(r["ties"]),
                                "losses": int(r["losses"]), "score": float(r["score"]),
                                "meetings": int(r["meetings"])})
            cells.append(row)
        out["h2h"] = {"names": order, "cells": cells}
    else:
        out["h2h_score"] = out["h2h_meetings"] = None
        out["h2h"] = None

    # seats, with block-bootstrap intervals on the win share
    t = time.perf_counter()
    key = results["n_players"].astype(int) * 100 + results["seat"].astype(int)
    bs = stats.block_bootstrap_means(results[["win_share", "score", "margin"]], key.rename("key"),
                                     results["block"], n_boot=n_boot, seed=seed)
    seat_df = stats.by_seat(results).reset_index()
    k = seat_df["n_players"].astype(int) * 100 + seat_df["seat"].astype(int)
    for c in ("win_share", "score", "margin"):
        seat_df[c + "_lo"] = bs[c]["lo"].reindex(k).to_numpy()
        seat_df[c + "_hi"] = bs[c]["hi"].reindex(k).to_numpy()
    seat_df["lo"] = seat_df["win_share_lo"]
    seat_df["hi"] = seat_df["win_share_hi"]
    out["seat_df"] = seat_df
    out["seat_rows"] = seat_df.to_dict("records")
    timings["seats"] = time.perf_counter() - t
    if results["n_players"].nunique() > 1:
        bpc = stats.by_player_count(results).reset_index()
        bpc["order"] = bpc["entrant"].map({n: i for i, n in enumerate(order)})
        out["by_count_rows"] = bpc.sort_values(["order", "n_players"]).to_dict("records")
    else:
        out["by_count_rows"] = None
    return out


#: Below this many blocks the bootstrap cannot be trusted to measure its own uncertainty.
MIN_BLOCKS_FOR_VERDICT = 10


def _verdict(standings, los, elo_table, n_blocks: int) -> dict | None:
    """The headline: the leader against the runner-up, with the interval and the LOS."""
    if elo_table is None or len(standings) < 2:
        return None
    a, b = standings[0], standings[1]
    diff = a["elo"] - b["elo"]
    p = los.loc[a["name"], b["name"]] if los is not None else float("nan")
    # the interval of leader minus runner-up is minus the runner-up's interval against the leader
    lo, hi = -b.get("delta_hi", float("nan")), -b.get("delta_lo", float("nan"))
    if n_blocks < MIN_BLOCKS_FOR_VERDICT:
        strength = "too few blocks to tell"
    elif finite(p) and p >= 0.99:
        strength = "clearly stronger"
    elif finite(p) and p >= 0.95:
        strength = "probably stronger"
    else:
        strength = "not yet distinguishable"
    expected = elo_to_score(diff) if finite(diff) else float("nan")
    return {"leader": a["name"], "second": b["name"], "diff": diff, "lo": lo, "hi": hi, "los": p,
            "strength": strength, "expected": expected, "min_blocks": MIN_BLOCKS_FOR_VERDICT}


def _elo_scale(standings) -> dict | None:
    """A common scale for the small interval bars of the standings table."""
    vals = [v for r in standings for v in (r.get("elo_lo"), r.get("elo_hi"), r.get("elo")) if finite(v)]
    if not vals:
        return None
    lo, hi = min(vals + [0.0]), max(vals + [0.0])
    pad = max((hi - lo) * 0.06, 5.0)
    return {"lo": lo - pad, "hi": hi + pad}


def _sprt_view(sprt: pd.DataFrame) -> dict:
    last = sprt.sort_values("block").iloc[-1]
    return {k: (last[k].item() if hasattr(last[k], "item") else last[k]) for k in sprt.columns}


# ----------------------------------------------------------------------------------------------
# Chosen games: pictures and replays
# ----------------------------------------------------------------------------------------------


def _chosen_games(results, games, rules, order, entrant_rows) -> dict:
    """Each entrant's best game (highest score) and typical game (score nearest its median)."""
    picks: dict[int, list] = {}
    for name in order:
        r = results[results["entrant"] == name]
        if r.empty:
            continue
        best = r.sort_values(["score", "game"], ascending=[False, True]).iloc[0]
        med = float(r["score"].median())
        rr = r.assign(dist=(r["score"] - med).abs(), is_best=r["game"] == best["game"])
        typical = rr.sort_values(["dist", "is_best", "game"]).iloc[0]
        picks.setdefault(int(best["game"]), []).append(
            {"entrant": name, "kind": "best", "seat": int(best["seat"]), "score": int(best["score"])})
        picks.setdefault(int(typical["game"]), []).append(
            {"entrant": name, "kind": "typical", "seat": int(typical["seat"]),
             "score": int(typical["score"]), "median": med})
    games_by_id = games.set_index("game")
    cards, replays = [], []
    for game_id in sorted(picks, key=lambda g: min(order.index(p["entrant"]) for p in picks[g])):
        g = games_by_id.loc[game_id]
        res = results[results["game"] == game_id].sort_values("seat")
        players = [{"seat": int(r["seat"]), "name": str(r["entrant"]), "score": int(r["score"]),
                    "rank": int(r["rank"]), "fault": bool(r["fault"]), "margin": int(r["margin"])}
                   for _, r in res.iterrows()]
        reasons = picks[game_id]
        card = {"game": game_id, "block": int(g["block"]), "n_players": int(g["n_players"]),
                "status": str(g["status"]), "reasons": reasons, "players": players,
                "featured": sorted({p["seat"] for p in reasons}), "deals": [], "error": None}
        try:
            replay = _replay(game_id, g, rules, players)
        except (ValueError, KeyError, TypeError, IndexError) as exc:  # a store from another version
            card["error"] = f"this game could not be replayed: {exc}"
            cards.append(card)
            continue
        size = replay["size"]
        deal_scores = replay.pop("deal_scores")
        for d, finals in enumerate(replay.pop("finals")):
            pics = []
            for p in players:
                points = deal_scores[d][p["seat"]]
                label = f"Kingdom of {p['name']} (seat {p['seat'] + 1})"
                label += f", deal {d + 1}: {points} points" if replay["deals"] > 1 else f": {points} points"
                pics.append({"svg": Markup(svg.kingdom_svg(finals[p["seat"]], size, label=label,
                                                           origin=tuple(replay["origins"][d][p["seat"]]))),
                             "points": points})
            card["deals"].append(pics)
        card["replay_index"] = len(replays)
        replay["label"] = _card_label(card)
        replays.append(replay)
        cards.append(card)
    return {"kingdoms": cards, **replay_view(replays)}


def replay_view(replays: list) -> dict:
    """The replay viewer's context (`replay`: its JSON, None without games; `replay_games`) for
    `replays`, dicts of `_replay` each with a `label`."""
    tiles = {int(n): [d.a.terrain, d.a.crowns, d.b.terrain, d.b.crowns] for n, d in TILES.items()}
    data = {"games": replays, "tiles": tiles,
            "palette": {str(k): v for k, v in svg.PALETTE.items()},
            "terrains": {str(k): v for k, v in TERRAIN_NAMES.items()},
            "seatColors": SEAT_COLORS, "cell": svg.CELL}
    return {"replay": _json_for_script(data) if replays else None,
            "replay_games": [{"index": i, "label": r["label"]} for i, r in enumerate(replays)]}


def _card_label(card) -> str:
    parts = []
    for p in card["reasons"]:
        parts.append(f"{p['entrant']}'s {'best' if p['kind'] == 'best' else 'typical'} game")
    return f"Game {card['game']}: " + "; ".join(parts)


def _replay(game_id: int, g, rules: dict, players) -> dict:
    """Step-by-step data of one stored game for the page's replay.

    steps: [deal, seat that acted (-1: start of a deal), text, added squares (flat: seat, row,
    col, terrain, crowns, ...), current row (flat: domino, owner), new row (flat), scores].
    """
    n = int(g["n_players"])
    r = _rules_for(rules, n)
    moves = json.loads(g["moves"]) if isinstance(g["moves"], str) else g["moves"]
    seeds = json.loads(g["deal_seeds"]) if "deal_seeds" in g and isinstance(g["deal_seeds"], str) else None
    if moves and isinstance(moves[0], list):  # dynasty: one move list per deal
        deals = moves
    else:
        deals = [moves]
    if not seeds:
        seeds = [int(g["seed"])]
    if len(seeds) != len(deals):
        raise ValueError(f"{len(deals)} move lists for {len(seeds)} deal seeds")
    names = {p["seat"]: p["name"] for p in players}
    steps, origins, finals, deal_scores = [], [], [], []
    for d, (seed, actions) in enumerate(zip(seeds, deals)):
        game = Game(r, int(seed))
        before = [dict() for _ in range(n)]
        adds = []
        for p in range(n):
            for (row, col), (terrain, crowns) in game.kingdom(p).squares().items():
                adds += [p, row, col, terrain, crowns]
                before[p][(row, col)] = (terrain, crowns)
        order = ", ".join(f"seat {s + 1}" for s in game.first_order)
        steps.append([d, -1, (f"Deal {d + 1}: " if len(deals) > 1 else "") + f"start; kings pick in the order {order}",
                      adds, _flat(game.current_row), _flat(game.new_row), game.scores()])
        for action in actions:
            seat = game.current_player
            text = f"{names.get(seat, '?')} (seat {seat + 1}): {game.describe(action)}"
            game.apply(action)
            now = game.kingdom(seat).squares()
            adds = []
            for key, val in now.items():
                if before[seat].get(key) != val:
                    adds += [seat, key[0], key[1], val[0], val[1]]
            before[seat] = now
            steps.append([d, seat, text, adds, _flat(game.current_row), _flat(game.new_row),
                          game.scores()])
        origins.append([list(svg.frame_origin(before[p], r.size)) for p in range(n)])
        finals.append(before)
        deal_scores.append(game.scores())
        last = steps[-1]
        last[2] += " \u2014 " + ("deal over" if len(deals) > 1 else "game over") + \
            ": " + ", ".join(f"{names.get(p, '?')} {s}" for p, s in enumerate(game.scores()))
    return {"game": game_id, "size": r.size, "deals": len(deals), "origins": origins,
            "players": players, "steps": steps, "finals": finals, "deal_scores": deal_scores}


def _flat(row) -> list:
    out = []
    for domino, owner in row:
        out += [int(domino), int(owner)]
    return out


# ----------------------------------------------------------------------------------------------
# Rendering
# ----------------------------------------------------------------------------------------------


def _environment() -> Environment:
    root = files("kdtourney.report").joinpath("templates")
    env = Environment(loader=FileSystemLoader(str(root)), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(num=fmt_num, signed=fmt_signed, elo=fmt_elo, pct=fmt_pct, ci=fmt_ci,
                       time=fmt_time, value=fmt_value, finite=finite)
    env.globals.update(finite=finite, bar=_interval_bar, los_color=_los_color,
                       h2h_color=_h2h_color, bound=fmt_bound,
                       record_words=lambda record: RECORDS[record][0])
    return env


def _asset(name: str) -> str:
    return files("kdtourney.report").joinpath("templates", name).read_text(encoding="utf-8")


def render(context: dict, template: str = "report.html.j2") -> str:
    """The page as a string (see `build_context`; the rating list's page: `pool_html`)."""
    env = _environment()
    template = env.get_template(template)
    return template.render(**context, css=Markup(_asset("report.css")), js=Markup(_asset("report.js")))


def _interval_bar(row, scale, color="#0072B2") -> Markup:
    """A small inline SVG of an Elo estimate and its interval on the table's common scale."""
    if not scale or not finite(row.get("elo")):
        return Markup("")
    w, h = 120, 14
    span = scale["hi"] - scale["lo"]

    def x(v):
        return 2 + (w - 4) * (float(v) - scale["lo"]) / span

    lo = row.get("elo_lo") if finite(row.get("elo_lo")) else row["elo"]
    hi = row.get("elo_hi") if finite(row.get("elo_hi")) else row["elo"]
    return Markup(
        f'<svg class="ibar" viewBox="0 0 {w} {h}" width="{w}" height="{h}" aria-hidden="true" '
        f'focusable="false"><line x1="{x(0):.1f}" y1="1" x2="{x(0):.1f}" y2="{h - 1}" '
        f'stroke="#bbb" stroke-dasharray="2 2"/><line x1="{x(lo):.1f}" y1="{h / 2}" '
        f'x2="{x(hi):.1f}" y2="{h / 2}" stroke="{color}" stroke-width="4" stroke-opacity="0.45"/>'
        f'<circle cx="{x(row["elo"]):.1f}" cy="{h / 2}" r="3.5" fill="{color}"/></svg>')


def _los_color(p) -> str:
    """Background of an LOS cell: green when the row is surely stronger, red when surely weaker."""
    if not finite(p):
        return "transparent"
    d = float(p) - 0.5
    if d >= 0:
        return f"rgba(0, 158, 115, {min(1.0, abs(d) * 2) * 0.55:.2f})"
    return f"rgba(213, 94, 0, {min(1.0, abs(d) * 2) * 0.55:.2f})"


def _h2h_color(score) -> str:
    return _los_color(score)
