"""What every page of kdtourney shares (the tournament report, the ladder's page, the rating
list's page): rendering the templates (Jinja2, autoescape on) with their CSS and script, the
atomic write, the rules in words, the Elo bars' scale, the faults table and the replay viewer's
data, which replays a stored game with the engine."""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from importlib.resources import files
from pathlib import Path

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from kdtourney.engine import Game, Rules
from kdtourney.engine.tiles import TERRAIN_NAMES, TILES
from kdtourney.report import svg
from kdtourney.report.fmt import (DASH, RECORDS, finite, fmt_bound, fmt_ci, fmt_elo, fmt_num,
                                  fmt_pct, fmt_signed, fmt_time, fmt_value)

__all__ = ["REPORT_FILE", "SEAT_COLORS", "render", "write_page", "describe_rules", "elo_scale",
           "faults_view", "replay_view", "game_replay"]

REPORT_FILE = "index.html"
#: Colours of the seats' kings (the game's pink, yellow, green and blue).
SEAT_COLORS = ["#d6336c", "#e0a800", "#2b9348", "#1c7ed6"]
_FAULT_ROWS = 500


# ----------------------------------------------------------------------------------------------
# Rendering and writing
# ----------------------------------------------------------------------------------------------


def render(context: dict, template: str = "report.html.j2") -> str:
    """The page as a string (see `build_context`; the rating list's page: `pool_html`)."""
    env = _environment()
    template = env.get_template(template)
    return template.render(**context, css=Markup(_asset("report.css")), js=Markup(_asset("report.js")))


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
    parts = ["Mighty Duel (7\u00d77)" if rules.get("variant") == "duel" else "standard rules (5\u00d75)"]
    if rules.get("harmony"):
        parts.append("Harmony")
    if rules.get("middle_kingdom"):
        parts.append("Middle Kingdom")
    return " + ".join(parts)


def elo_scale(standings) -> dict | None:
    """A common scale for the small interval bars of the standings table."""
    vals = [v for r in standings for v in (r.get("elo_lo"), r.get("elo_hi"), r.get("elo")) if finite(v)]
    if not vals:
        return None
    lo, hi = min(vals + [0.0]), max(vals + [0.0])
    pad = max((hi - lo) * 0.06, 5.0)
    return {"lo": lo - pad, "hi": hi + pad}


def faults_view(faults: pd.DataFrame) -> dict:
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


# ----------------------------------------------------------------------------------------------
# Replays
# ----------------------------------------------------------------------------------------------


def replay_view(replays: list) -> dict:
    """The replay viewer's context (`replay`: its JSON, None without games; `replay_games`) for
    `replays`, dicts of `game_replay` each with a `label`."""
    tiles = {int(n): [d.a.terrain, d.a.crowns, d.b.terrain, d.b.crowns] for n, d in TILES.items()}
    data = {"games": replays, "tiles": tiles,
            "palette": {str(k): v for k, v in svg.PALETTE.items()},
            "terrains": {str(k): v for k, v in TERRAIN_NAMES.items()},
            "seatColors": SEAT_COLORS, "cell": svg.CELL}
    return {"replay": _json_for_script(data) if replays else None,
            "replay_games": [{"index": i, "label": r["label"]} for i, r in enumerate(replays)]}


def _json_for_script(data) -> Markup:
    """JSON safe inside <script type="application/json">: no '<', '>' or '&' left raw."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


def game_replay(game_id: int, g, rules: dict, players) -> dict:
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


def _rules_for(rules: dict, n_players: int) -> Rules:
    fields = {f.name for f in dataclasses.fields(Rules)}
    return Rules(**{k: v for k, v in dict(rules, players=int(n_players)).items() if k in fields})


def _flat(row) -> list:
    out = []
    for domino, owner in row:
        out += [int(domino), int(owner)]
    return out
