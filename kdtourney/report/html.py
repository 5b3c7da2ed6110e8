"""The tournament report: one self-contained HTML page, `<tournament folder>/index.html`.

`write_report(folder)` reads the store (`kdtourney.store`), computes the ratings and
statistics (`ratings`, `stats`), draws the plots (`plots`) and kingdoms (`svg`), replays every game
with the engine for the page's game viewer (`replays`), and renders `templates/report.html.j2`
(Jinja2, autoescape on: every name, parameter and message a user supplied is escaped). The page
needs no network: CSS, JavaScript, plots (SVG) and the games (JSON) are all inside it.

Build cost is dominated by the bootstraps (`n_boot` resamples of the blocks, default 1000), the
plots and, in a large tournament, the replays (benchmarks/bench_report.py measures them).
"""

from __future__ import annotations

import datetime as _dt
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
from markupsafe import Markup

from kdtourney import __version__
from kdtourney import store as _store
from kdtourney.bots.clock import TimeControl
from kdtourney.errors import UserError
from kdtourney.report import evaluation, plots, replays, svg
from kdtourney.report.advice import reproduce_command, resume_advice
from kdtourney.report.fmt import finite, fmt_elo, fmt_value
from kdtourney.report.ladder import ladder_board, write_ladder_page
from kdtourney.report.notes import record_notes, sprt_note
from kdtourney.report.page import (
    REPORT_FILE,
    SEAT_COLORS,
    block_seats,
    describe_rules,
    elo_scale,
    faults_view,
    render,
    replay_view,
    write_page,
)
from kdtourney.report.standings import N_BOOT, standings
from kdtourney.stats import descriptive as stats
from kdtourney.stats import ratings
from kdtourney.stats.outcomes import balanced_blocks, elo_to_score
from kdtourney.store.deals import rules_for
from kdtourney.tournament import sprt as sprt_test

__all__ = ["write_report", "write_game_page", "build_context", "parse_anchor", "ReportError"]


class ReportError(UserError):
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
    Raises `kdtourney.store.StoreError` for a missing or unreadable store and `ReportError`
    for a bad anchor.
    """
    folder = Path(tournament_dir)
    if "ladder" in _store.load_config(folder):  # a ladder's report is its page
        return write_ladder_page(folder, ladder_board(folder, n_boot=n_boot, seed=seed))
    context = build_context(folder, anchor, n_boot=n_boot, seed=seed)
    path = Path(out) if out is not None else folder / REPORT_FILE
    write_page(render(context), path)
    return path


def write_game_page(tournament_dir, game: int, out=None) -> Path:
    """Write the page of one stored game, to watch it move by move (the report's game viewer,
    with that game only); returns its path: `out`, by default `<tournament_dir>/game-<game>.html`.
    Raises StoreError for a missing store or game, or a game the engine cannot replay."""
    folder = Path(tournament_dir)
    config = _store.load_config(folder)
    tournament = config.get("tournament", {}) or {}
    games = _store.load_games(folder)
    row = games[games["game"] == game]
    if row.empty:
        raise _store.StoreError(f"game {game} is not in {folder} ({len(games)} games stored, "
                                "numbered from 0)")
    rules = tournament.get("rules", {}) or {}
    g = row.iloc[0]
    try:
        replays.trace(g, rules_for(rules, int(g["n_players"])))
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise _store.StoreError(f"game {game} of {folder} cannot be replayed from its stored row: "
                                f"{exc}") from None
    results = _store.load_results(folder)
    results = results[results["game"] == game].sort_values("seat")
    stored = _store.load_faults(folder).query("game == @game")
    view = replay_view(row, results, rules, seated=block_seats(_store.load_blocks(folder)),
                       faults=stored, notes=_store.load_notes(folder).query("game == @game"))
    faults = faults_view(stored, view["fault_calls"])["rows"]
    meta = config.get("meta", {}) or {}
    context = {
        "title": str(meta.get("name") or folder.resolve().name), "folder": str(folder),
        "game": game, "version": __version__, "rules_text": describe_rules(rules),
        "clock_text": _describe_clock(tournament), "faults": faults,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "players": [f"{r.entrant} {r.score}" + (" (forfeit)" if r.fault else "")
                    for r in results.itertuples()], **view}
    path = Path(out) if out is not None else folder / f"game-{game}.html"
    write_page(render(context, "game.html.j2"), path)
    return path


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


# ----------------------------------------------------------------------------------------------
# Context
# ----------------------------------------------------------------------------------------------


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
    faults = _store.load_faults(folder)
    sprt = _store.load_sprt(folder)
    timings["read"] = time.perf_counter() - t0
    anchor = parse_anchor(anchor)
    rules = tournament.get("rules", {}) or {}

    ctx = _heading(folder, tournament, meta, anchor, n_boot)
    ctx.update(_progress(tournament, planned_games(folder, tournament, sprt), games))
    t = time.perf_counter()
    ctx.update(replay_view(games, results, rules, seated=block_seats(_store.load_blocks(folder)),
                           faults=faults, notes=_store.load_notes(folder)))
    timings["replays"] = time.perf_counter() - t
    ctx["sprt_test"] = _sprt_test(folder, config, len(games))
    if ctx["sprt_test"] is not None:  # an SPRT's standings: the games its test counted
        results = results[results["block"] < ctx["sprt_test"]["blocks"]]
    results = balanced_blocks(results)  # every statistic below: whole blocks only
    ctx["reproduce"] = _reproducibility(tournament, meta, config)
    ctx["reproduce"].update(resume=resume_advice(folder, config),
                            command=reproduce_command(config))
    ctx["reproduce"]["entrants"] = _identities_view(_store.load_entrants(folder), meta)
    ctx.update(_fault_counts(faults, _store.failed_games(folder), ctx["fault_calls"]))

    entrants_all = sorted(results["entrant"].astype(str).unique()) if len(results) else []
    ctx["entrants"] = entrants_all
    if anchor is not None and anchor[0] not in entrants_all:
        known = ", ".join(entrants_all) or "none yet"
        raise ReportError(f"anchor entrant {anchor[0]!r} is not in this tournament "
                          f"(entrants: {known})")
    ctx["has_results"] = len(results) > 0
    if ctx["has_results"]:
        results = results.assign(entrant=results["entrant"].astype(str))
        ctx.update(_results_context(results, games, rules, anchor, sprt, n_boot, seed, timings))
        ctx["evaluation"]["sprt"] = evaluation.sprt_view(results, ctx["sprt_test"], n_boot)
    else:
        ctx.update(standings=[], plots={}, kingdoms=[], verdict=None, los=None, sprt=None)
    ctx["timings"] = dict(timings, total=time.perf_counter() - t0)
    return ctx


def _heading(folder: Path, tournament: dict, meta: dict, anchor, n_boot: int) -> dict:
    """The page's title, versions, rules and clock: what every report shows first."""
    return {
        "title": str(meta.get("name") or tournament.get("name") or folder.resolve().name),
        "folder": str(folder),
        "version": __version__,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "tournament": tournament,
        "meta": meta,
        "rules_text": describe_rules(tournament.get("rules", {}) or {}),
        "clock_text": _describe_clock(tournament),
        "n_boot": n_boot,
        "anchor": anchor,
        "seat_colors": SEAT_COLORS,
    }


def _fault_counts(faults: pd.DataFrame, failed: pd.Series, calls: dict) -> dict:
    """The faults table, the failed games per entrant and the forfeits on time per entrant."""
    over_time = faults[faults["kind"].isin(("timeout", "time"))] if len(faults) else faults
    return {"faults": faults_view(faults, calls),
            "failed_by_entrant": {str(e): int(n) for e, n in failed.items()},
            "time_forfeits": {str(e): int(n)
                              for e, n in over_time.groupby("entrant").size().items()}}


def _results_context(results, games, rules, anchor, sprt, n_boot: int, seed: int,
                     timings: dict) -> dict:
    """The statistics, plots and chosen games of a tournament with results (whole blocks)."""
    ctx = _statistics(results, anchor, n_boot, seed, timings)
    order = [row["name"] for row in ctx["standings"]]
    ctx["colors"] = plots.entrant_colors(order)
    ctx["evaluation"] = evaluation.view(results, order, elo=ctx["elo_table"], games=games,
                                        rules=rules, n_boot=n_boot, seed=seed, anchor=anchor)
    t = time.perf_counter()
    ctx["plots"], ctx["sprt"] = _figures(ctx, results, order, anchor, sprt)
    timings["plots"] = time.perf_counter() - t
    t = time.perf_counter()
    ctx.update(_chosen_games(results, games, rules, order))
    timings["kingdoms"] = time.perf_counter() - t
    return ctx


def _figures(ctx: dict, results: pd.DataFrame, order: list, anchor, sprt
             ) -> tuple[dict, dict | None]:
    """(the page's plots by name, the SPRT's last row or None) from `_statistics`' context."""
    colors, figs, view = ctx["colors"], {}, None
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
        view = _sprt_view(sprt)
    return figs, view


def _sprt_test(folder: Path, config: dict, stored: int) -> dict | None:
    """An SPRT folder's test as it stands: its verdict line (as `kdtourney sprt` prints it), its
    hypotheses, and the blocks it counted (the store's `sprt` table: up to the decision, within
    the cap); None for another folder."""
    if "sprt" not in config:
        return None
    try:
        tournament, test = sprt_test.stored_test(config, _store.load_sessions(folder)["games"])
        state = sprt_test.evaluate(_store.load_incoming(folder), tournament, test)
    except (ValueError, KeyError, TypeError):  # a test this kdtourney cannot read: no verdict
        return None
    line = sprt_test.verdict_line(state, test, tournament)
    return {"line": line, "status": state.status, "candidate": test.candidate,
            "baseline": test.baseline, "elo0": test.elo0, "elo1": test.elo1, "alpha": test.alpha,
            "beta": test.beta, "blocks": state.blocks, "games": state.games,
            "not_counted": stored - state.games, "llr": state.llr, "lower": state.lower,
            "upper": state.upper, "estimate": sprt_test.estimate_text(state),
            "note": sprt_note({"baseline": test.baseline})}


def planned_games(folder: Path, tournament: dict, sprt) -> int | None:
    """The games the folder is to hold: those asked for last (a session's `games`: an SPRT's cap
    may change from one to the next), or for an SPRT that decided, those through its decision."""
    if sprt is not None and len(sprt):
        last = sprt.sort_values("block").iloc[-1]
        if not last["lower"] < last["llr"] < last["upper"]:
            return int(last["block"]) * int(tournament["players"][0])
    asked = _store.load_sessions(folder)["games"].dropna()
    return int(asked.iloc[-1]) if len(asked) else tournament.get("games")


def _progress(tournament: dict, requested, games: pd.DataFrame) -> dict:
    """Counts, dates and whether the tournament is complete (`requested` games: `planned_games`)."""
    n_done = int(len(games))
    requested = int(requested) if isinstance(requested, (int, float)) and requested else None
    blocks = int(games["block"].nunique()) if n_done else 0
    incomplete_blocks = 0
    if n_done:
        per_block = games.groupby("block").agg(n=("game", "size"), players=("n_players", "first"))
        incomplete_blocks = int((per_block["n"] < per_block["players"]).sum())
    partial = (requested is not None and n_done < requested) or incomplete_blocks > 0
    finished = (games["finished_at"].dropna() if n_done and "finished_at" in games
                else pd.Series([], dtype=object))
    counts = sorted(int(x) for x in games["n_players"].unique()) if n_done else []
    players_cfg = tournament.get("players")
    if not counts and players_cfg:
        given = players_cfg if isinstance(players_cfg, list) else [players_cfg]
        counts = sorted(int(x) for x in given)
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
    entrants = tournament.get("entrants") or []
    settings = [(k, fmt_value(entrants[v] if k == "candidate" and isinstance(v, int)
                              and 0 <= v < len(entrants) else v))
                for k, v in sorted(tournament.items()) if k != "rules"]
    settings += [(f"play: {k}", fmt_value(v))
                 for k, v in sorted((config.get("play") or {}).items())]
    rules = [(k, fmt_value(v)) for k, v in sorted((tournament.get("rules") or {}).items())]
    other_meta = [(k, fmt_value(v)) for k, v in sorted(meta.items()) if k not in used]
    # a --sandbox folder keys its deals and bot seeds with a secret of its store: its resume
    # deals the same games, the same command into a new folder others
    return {"highlights": highlights, "settings": settings, "rules": rules, "meta": other_meta,
            "schema": config.get("schema_version"), "keyed": bool(config.get("seed_secret"))}


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


def _statistics(results: pd.DataFrame, anchor, n_boot: int, seed: int, timings: dict) -> dict:
    """The standings, ratings, head to head and seats of the results (whole blocks only)."""
    t = time.perf_counter()
    table = standings(results, n_boot=n_boot, seed=seed, anchor=anchor)  # as the terminal's
    summary, elo_table, order = table.summary, table.elo, table.order
    timings["ratings"] = time.perf_counter() - t
    # per-decision time (the store has decision counts)
    if "decisions" in results and "time_total" in results:
        g = results.groupby("entrant")
        dec = g["decisions"].sum()
        summary["time_per_decision"] = ((g["time_total"].sum() / dec.where(dec > 0))
                                        .reindex(summary.index))
        summary["decisions"] = (dec / g.size()).reindex(summary.index)

    history = los = None
    t = time.perf_counter()
    if elo_table is not None:
        los = ratings.los_matrix(elo_table)
        history = ratings.elo_history(results, points=20, anchor=anchor,
                                      n_boot=min(200, max(0, n_boot // 5)), seed=seed)
    timings["history"] = time.perf_counter() - t
    rows = _standing_rows(summary, elo_table, order, los,
                          results.groupby("entrant")["game"].nunique())
    out: dict = {"standings": rows, "elo_table": elo_table, "history": history,
                 "los": None if los is None else {
                     "names": list(los.index),
                     "cells": [[los.loc[a, b] for b in los.columns] for a in los.index]},
                 "verdict": _verdict(rows, los, elo_table, int(results["block"].nunique())),
                 "elo_scale": elo_scale(rows), "entrant_rows": _entrant_rows(summary, order)}
    out["record_notes"] = record_notes(rows, out["verdict"])
    out.update(_head_to_head(results, order))
    t = time.perf_counter()
    out.update(_seats(results, n_boot, seed))
    timings["seats"] = time.perf_counter() - t
    if results["n_players"].nunique() > 1:
        bpc = stats.by_player_count(results).reset_index()
        bpc["order"] = bpc["entrant"].map({n: i for i, n in enumerate(order)})
        out["by_count_rows"] = bpc.sort_values(["order", "n_players"]).to_dict("records")
    else:
        out["by_count_rows"] = None
    return out


def _standing_rows(summary, elo_table, order, los, games_played) -> list[dict]:
    """A row of the standings per entrant in `order`: the summary's means, the Elo and its
    interval, the gap to the leader with its interval, the LOS against the next one."""
    rows = []
    leader = order[0]
    for rank, name in enumerate(order, 1):
        s = summary.loc[name]
        row: dict = {"rank": rank, "name": name, "games": int(games_played.get(name, 0)),
                     "seats": int(s["games"]), "blocks": int(s["blocks"])}
        for c in ("win_share", "score", "margin"):
            row[c] = s.get(c)
            row[c + "_lo"] = s.get(c + "_lo")
            row[c + "_hi"] = s.get(c + "_hi")
        if elo_table is not None and name in elo_table.index:
            e = elo_table.loc[name]
            row.update(elo=e["elo"], elo_lo=e["lo"], elo_hi=e["hi"], record=e["record"])
            if name != leader:
                draws = elo_table.attrs["draws"]
                d = (draws[name] - draws[leader]).to_numpy(dtype=float)
                d = d[np.isfinite(d)]
                row["delta"] = row["elo"] - elo_table.loc[leader, "elo"]
                if len(d):
                    row["delta_lo"], row["delta_hi"] = stats.percentile_interval(d)
            if rank < len(order) and los is not None:
                row["los_next"] = los.loc[name, order[rank]]
        rows.append(row)
    return rows


def _entrant_rows(summary: pd.DataFrame, order: list) -> list[dict]:
    """The per-entrant detail table: every column of the summary, counts as ints."""
    entrant_rows = []
    for name in order:
        s = summary.loc[name]
        row = {"name": name, **{k: (v.item() if hasattr(v, "item") else v) for k, v in s.items()}}
        for k in ("games", "blocks", "faults"):
            if k in row and finite(row[k]):
                row[k] = int(row[k])
        entrant_rows.append(row)
    return entrant_rows


def _head_to_head(results: pd.DataFrame, order: list) -> dict:
    """Every pair's record (`h2h`: cells in `order`) and the score and meetings matrices for the
    plot; None with fewer than two entrants."""
    if results["entrant"].nunique() < 2:
        return {"h2h_score": None, "h2h_meetings": None, "h2h": None}
    h2h = stats.head_to_head(results)
    cells = []
    for a in order:
        row: list[dict | None] = []
        for b in order:
            if a == b or (a, b) not in h2h.index:
                row.append(None)
            else:
                r = h2h.loc[(a, b)]
                row.append({"wins": int(r["wins"]), "ties": int(r["ties"]),
                            "losses": int(r["losses"]), "score": float(r["score"]),
                            "meetings": int(r["meetings"])})
        cells.append(row)
    return {"h2h_score": h2h["score"].unstack("opponent").reindex(index=order, columns=order),
            "h2h_meetings": (h2h["meetings"].unstack("opponent")
                             .reindex(index=order, columns=order)),
            "h2h": {"names": order, "cells": cells}}


def _seats(results: pd.DataFrame, n_boot: int, seed: int) -> dict:
    """The means per (player count, seat), with block-bootstrap intervals."""
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
    return {"seat_df": seat_df, "seat_rows": seat_df.to_dict("records")}


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


def _sprt_view(sprt: pd.DataFrame) -> dict:
    last = sprt.sort_values("block").iloc[-1]
    return {k: (last[k].item() if hasattr(last[k], "item") else last[k]) for k in sprt.columns}


# ----------------------------------------------------------------------------------------------
# Chosen games: pictures and replays
# ----------------------------------------------------------------------------------------------


def _chosen_games(results, games, rules, order) -> dict:
    """Each entrant's best game (highest score) and typical game (score nearest its median), as
    cards with their final kingdoms."""
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
            {"entrant": name, "kind": "best", "seat": int(best["seat"]),
             "score": int(best["score"])})
        picks.setdefault(int(typical["game"]), []).append(
            {"entrant": name, "kind": "typical", "seat": int(typical["seat"]),
             "score": int(typical["score"]), "median": med})
    games_by_id = games.set_index("game")
    cards = []
    for game_id in sorted(picks, key=lambda g: min(order.index(p["entrant"]) for p in picks[g])):
        g = games_by_id.loc[game_id]
        res = results[results["game"] == game_id].sort_values("seat")
        players: list[dict] = [{"seat": int(r["seat"]), "name": str(r["entrant"]),
                                "score": int(r["score"]), "rank": int(r["rank"]),
                                "fault": bool(r["fault"]), "margin": int(r["margin"])}
                               for _, r in res.iterrows()]
        reasons = picks[game_id]
        card: dict = {"game": game_id, "block": int(g["block"]), "n_players": int(g["n_players"]),
                "status": str(g["status"]), "reasons": reasons, "players": players,
                "featured": sorted({p["seat"] for p in reasons}), "deals": [], "error": None}
        cards.append(card)
        try:
            table = rules_for(rules, card["n_players"])
            trace = replays.trace(g, table, finals=True)
        except (ValueError, KeyError, TypeError, IndexError) as exc:  # a store from another version
            card["error"] = f"this game could not be replayed: {exc}"
            continue
        assert trace.finals is not None and trace.scores is not None  # lists with finals=True
        for d, finals in enumerate(trace.finals):
            pics = []
            for p in players:
                points = trace.scores[d][p["seat"]]
                label = f"Kingdom of {p['name']} (seat {p['seat'] + 1})"
                label += (f", deal {d + 1}: {points} points" if len(trace.finals) > 1
                          else f": {points} points")
                picture = svg.kingdom_svg(finals[p["seat"]], table.size, label=label,
                                          origin=tuple(trace.origins[d][p["seat"]]))
                pics.append({"svg": Markup(picture),
                             "points": points})
            card["deals"].append(pics)
    return {"kingdoms": cards}
