"""What every page of kdtourney shares (the tournament report, the ladder's page, the rating
list's page): rendering the templates (Jinja2, autoescape on) with their CSS and script, the
atomic write, the rules in words, the Elo bars' scale, the faults table and the game viewer's
data (every stored game, replayed by the engine: kdtourney.report.replays)."""

from __future__ import annotations

import json
import os
import tempfile
from importlib.resources import files
from pathlib import Path

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from kdtourney.engine import Rules
from kdtourney.report import replays, svg
from kdtourney.report.fmt import (
    DASH,
    RECORDS,
    finite,
    fmt_bound,
    fmt_ci,
    fmt_elo,
    fmt_num,
    fmt_pct,
    fmt_signed,
    fmt_time,
    fmt_value,
)
from kdtourney.store.deals import fault_calls, rules_for
from kdtourney.text import shown
from kdtourney.tournament.schedule import rotations

__all__ = ["REPORT_FILE", "SEAT_COLORS", "render", "write_page", "describe_rules", "elo_scale",
           "faults_view", "name_tokens", "replay_view",
           "substituted", "block_seats", "json_for_script"]

REPORT_FILE = "index.html"
#: Colours of the seats' kings (the game's pink, yellow, green and blue).
SEAT_COLORS = ["#d6336c", "#e0a800", "#2b9348", "#1c7ed6"]
_FAULT_ROWS = 500


# ----------------------------------------------------------------------------------------------
# Rendering and writing
# ----------------------------------------------------------------------------------------------


def render(context: dict, template: str = "report.html.j2",
           scripts: tuple = ("board.js", "report.js")) -> str:
    """The page as a string (see `build_context`; the rating list's page: `pool_html`), with the
    pages' CSS and `scripts` (of the templates folder) inside it."""
    env = _environment()
    page = env.get_template(template)
    js = "\n".join(_asset(name) for name in scripts)
    return page.render(**context, css=Markup(_asset("report.css")), js=Markup(js))


def _environment() -> Environment:
    root = files("kdtourney.report").joinpath("templates")
    # what bots wrote (fault messages, names) shown with their control characters escaped
    env = Environment(loader=FileSystemLoader(str(root)), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      finalize=lambda value: shown(value, "\n\t")
                      if isinstance(value, str) and not isinstance(value, Markup) else value)
    env.filters.update(num=fmt_num, signed=fmt_signed, elo=fmt_elo, pct=fmt_pct, ci=fmt_ci,
                       time=fmt_time, value=fmt_value, finite=finite, tokens=name_tokens)
    env.globals.update(finite=finite, bar=_interval_bar, los_color=_los_color,
                       h2h_color=_h2h_color, bound=fmt_bound,
                       record_words=lambda record: RECORDS[record][0])
    return env


def _asset(name: str) -> str:
    return files("kdtourney.report").joinpath("templates", name).read_text(encoding="utf-8")


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


# ----------------------------------------------------------------------------------------------
# Views shared by the pages
# ----------------------------------------------------------------------------------------------


def describe_rules(rules: dict) -> str:
    parts = ["Mighty Duel (7\u00d77)" if rules.get("variant") == "duel"
             else "standard rules (5\u00d75)"]
    if rules.get("harmony"):
        parts.append("Harmony")
    if rules.get("middle_kingdom"):
        parts.append("Middle Kingdom")
    return " + ".join(parts)


def elo_scale(standings) -> dict | None:
    """A common scale for the small interval bars of the standings table."""
    vals = [v for r in standings for v in (r.get("elo_lo"), r.get("elo_hi"), r.get("elo"))
            if finite(v)]
    if not vals:
        return None
    lo, hi = min(vals + [0.0]), max(vals + [0.0])
    pad = max((hi - lo) * 0.06, 5.0)
    return {"lo": lo - pad, "hi": hi + pad}


def name_tokens(name) -> Markup:
    """An entrant's name that a table may break after a ':' only, never inside a bot's name or a
    parameter (each a nowrap span, report.css `.tok`)."""
    parts = str(name).split(":")
    return Markup("<wbr>").join(
        Markup('<span class="tok">{}</span>').format(part + (":" if k < len(parts) - 1 else ""))
        for k, part in enumerate(parts))


def faults_view(faults: pd.DataFrame, calls: dict | None = None) -> dict:
    """The faults table's rows, counts by entrant and kind, forfeits and failed games; `calls`:
    {(game, seat): the call at fault as the bot counts them} (`replay_view`'s `fault_calls`)."""
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
                         "call": (calls or {}).get((int(r["game"]), seat), DASH),
                         "message": "" if pd.isna(r.get("message")) else str(r["message"]),
                         "stderr": "" if pd.isna(r.get("stderr")) else str(r["stderr"])})
        counts = f.groupby(["entrant", "kind"]).size()
        by_kind = [{"entrant": e, "kind": k, "count": int(n)} for (e, k), n in counts.items()]
    return {"rows": rows, "total": int(len(faults)), "shown": len(rows), "by_kind": by_kind,
            "forfeits": int((faults["kind"] != "failed").sum()) if len(faults) else 0,
            "failed": failed}


# ----------------------------------------------------------------------------------------------
# Replays
# ----------------------------------------------------------------------------------------------


def replay_view(games: pd.DataFrame, results: pd.DataFrame, rules: dict, *, seated=None,
                start: int | None = None, faults: pd.DataFrame | None = None,
                notes: pd.DataFrame | None = None) -> dict:
    """The game viewer's context (`replay`: its data for the page's script, None without a game;
    `replay_count`) for the stored `games` (rows of the games table, moves included) and their
    `results` rows: the engine replays every game (kdtourney.report.replays), and one that it
    cannot replay (a row changed by hand) is listed with the reason. seated(game row): the
    entrants by seat of a game without results (a failed game); start: the game shown first
    (default the first stored). faults: the store's faults rows, to mark
    the moves the harness played for a seat after its fault (also `fault_calls`: {(game, seat):
    the call at fault, as the bot counts them}, for `faults_view`); notes: the store's notes
    (the bots' own words on their decisions), shown with their moves."""
    if games.empty:
        return {"replay": None, "replay_count": 0, "fault_calls": {}}
    by_fault: dict[int, list] = {}
    if faults is not None and len(faults):
        for f in faults[faults["kind"] != "failed"].to_dict("records"):
            by_fault.setdefault(int(f["game"]), []).append(f)
    calls: dict = {}
    noted: dict[int, list] = {}
    if notes is not None and len(notes):
        for n in notes.itertuples(index=False):
            noted.setdefault(int(n.game), []).append([int(n.deal), int(n.move), str(n.note)])
    entrants: dict[str, int] = {}
    by_game: dict[int, list] = {}  # game -> its results rows, by seat
    columns = ["game", "seat", "entrant", "score", "rank", "fault"]
    for r in results.sort_values(["game", "seat"])[columns].itertuples(index=False):
        by_game.setdefault(int(r.game), []).append(r)
    records: list[list] = []
    table_rules: dict[int, Rules] = {}
    for row in games.to_dict("records"):
        game, n = int(row["game"]), int(row["n_players"])
        res = by_game.get(game, [])
        if len(res) == n:
            names = [str(r.entrant) for r in res]
            scores, ranks = [int(r.score) for r in res], [int(r.rank) for r in res]
            faulted = sum(1 << int(r.seat) for r in res if r.fault)
        else:  # no result: who sat there from its block, no score
            names = list(seated(row)) if seated is not None else ["?"] * n
            scores, ranks, faulted = [0] * n, [0] * n, 0
        seats = [entrants.setdefault(name, len(entrants)) for name in names]
        try:
            table = table_rules.get(n) or table_rules.setdefault(n, rules_for(rules, n))
            trace = replays.trace(row, table)
            deals, error = trace.deals, None
            origins = [v for deal in trace.origins for origin in deal for v in origin]
            marks = substituted(game, row, table, by_fault.get(game, []), calls)
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            deals, origins, marks = [], [], []
            error = f"this game cannot be replayed from its stored row: {exc}"
        size = table_rules[n].size if n in table_rules else 0
        records.append([game, str(row["status"]), size, seats, scores, ranks, faulted, deals,
                        origins, error, marks, noted.get(game, [])])
    data = dict(replays.constants(), games=records, entrants=list(entrants),
                start=int(games["game"].iloc[0]) if start is None else int(start),
                palette={str(k): v for k, v in svg.PALETTE.items()}, seatColors=SEAT_COLORS,
                cell=svg.CELL)
    return {"replay": json_for_script(data), "replay_count": len(records), "fault_calls": calls}


def substituted(game: int, row, rules, faults: list, calls: dict) -> list:
    """The viewer's marks of the moves the harness played after a fault: [seat, deal, move, what
    happened] per fault, from that move on; records each fault's call in `calls`."""
    marks = []
    for placed, f in zip(fault_calls(row, rules, faults), faults):
        if placed is None:  # no seat or call known: nothing to name
            continue
        seat, call, first = placed
        calls[(game, seat)] = call
        if first is not None:
            message = "" if pd.isna(f.get("message")) else f": {str(f['message'])[:160]}"
            marks.append([seat, first[0], first[1], f"{call}: {f['kind']}{message}"])
    return marks


def block_seats(blocks: pd.DataFrame):
    """seated(game row) -> the entrants by seat of a stored game, from the record of its block
    (the store's `blocks`): for a game that has no results ("?" where no block is recorded)."""
    by_block = blocks.set_index("block")

    def seated(row):
        if row["block"] not in by_block.index:
            return ["?"] * int(row["n_players"])
        return list(rotations(tuple(by_block.loc[row["block"], "seats"]))[row["arrangement"]])
    return seated


def json_for_script(data) -> Markup:
    """JSON safe inside <script type="application/json">: no '<', '>' or '&' left raw."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)
