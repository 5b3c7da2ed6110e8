"""The report's plots: matplotlib (Agg, no pyplot) figures returned as inline SVG with a text
alternative.

Every plot function takes tables from :mod:`kdtourney.stats.ratings` or
:mod:`kdtourney.stats.descriptive` and returns a :class:`Plot`: ``svg`` (an ``<svg>`` element to
inline in HTML: no XML header, ids prefixed so that plots share a page, ``role="img"`` with a
``<title>`` and ``<desc>``) and ``alt`` (its text alternative). Other pages draw their own with
`styled`, `new_figure` and `svg_plot`.

The same data give the same bytes (fixed ``svg.hashsalt``, no date). Text stays text
(``svg.fonttype = 'none'``) and is never parsed as mathtext: user-supplied names are escaped.
"""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass
from html import escape

import matplotlib
import matplotlib.dates
import matplotlib.patches
import matplotlib.ticker

matplotlib.use("Agg", force=False)

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib import rc_context  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from kdtourney.report.fmt import fmt_elo  # noqa: E402

__all__ = ["Plot", "COLORS", "entrant_colors", "short", "styled", "new_figure", "svg_plot",
           "elo_plot", "score_plot", "margin_plot", "h2h_plot", "seat_plot", "convergence_plot",
           "llr_plot", "elo_dates_plot"]

#: Okabe-Ito colour-blind-safe colours, then a few more distinguishable ones.
COLORS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
          "#8C564B", "#7F7F7F", "#17BECF", "#BCBD22"]

_RC = {
    "svg.hashsalt": "kdtourney",
    "svg.fonttype": "none",
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.labelcolor": "#333333",
    "xtick.color": "#333333",
    "ytick.color": "#333333",
    "axes.edgecolor": "#666666",
    "axes.grid": True,
    "grid.color": "#e3e3e3",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "figure.dpi": 96,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.05,
}

@dataclass(frozen=True)
class Plot:
    """An inline SVG plot and its text alternative."""

    svg: str
    alt: str

    def __html__(self):  # lets Jinja2 insert it unescaped (it is built from escaped parts)
        return self.svg


def short(name, limit: int = 22) -> str:
    """A label for axes: names longer than `limit` characters are cut with an ellipsis."""
    name = str(name)
    return name if len(name) <= limit else name[: limit - 1] + "\u2026"


def entrant_colors(entrants) -> dict:
    """A fixed colour per entrant, in the given order (use the standings order everywhere)."""
    return {e: COLORS[i % len(COLORS)] for i, e in enumerate(entrants)}


def styled(fn):
    """`fn` run under the plots' matplotlib style (fixed hash salt, text as text, no mathtext)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with rc_context(_RC):
            return fn(*args, **kwargs)
    return wrapper


def svg_plot(fig: Figure, alt: str, prefix: str) -> Plot:
    """Serialise `fig` as an inline, accessible SVG element whose ids all start with `prefix`."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None,
                                            "Type": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    text = re.sub(r'id="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}-{m.group(1)})", text)
    text = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}-{m.group(1)}"', text)
    head_end = text.index(">") + 1
    head = text[:head_end]
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    head = head.replace("<svg", f'<svg class="plot" role="img" aria-labelledby="{prefix}-t"', 1)
    title = escape(alt.split(". ")[0])
    text = (head + f'<title id="{prefix}-t">{escape(alt)}</title><desc>{title}</desc>'
            + text[head_end:])
    return Plot(svg=text.strip(), alt=alt)


def new_figure(width: float, height: float) -> Figure:
    """A pyplot-free figure of `width` x `height` inches, for `svg_plot`."""
    return Figure(figsize=(width, height))


# ----------------------------------------------------------------------------------------------
# Elo
# ----------------------------------------------------------------------------------------------


@styled
def elo_plot(table: pd.DataFrame, colors: dict, anchor_text: str = "mean 0") -> Plot:
    """Elo point estimates with 95% intervals, strongest on top (``table`` from bootstrap_elo)."""
    t = table[np.isfinite(table["elo"])]
    n = len(t)
    fig = new_figure(6.4, 0.9 + 0.42 * max(n, 1))
    ax = fig.subplots()
    y = np.arange(n)[::-1]
    for yi, (name, row) in zip(y, t.iterrows()):
        c = colors.get(name, "#333")
        lo = row["lo"] if np.isfinite(row["lo"]) else row["elo"]
        hi = row["hi"] if np.isfinite(row["hi"]) else row["elo"]
        ax.plot([lo, hi], [yi, yi], color=c, lw=3, solid_capstyle="butt", alpha=0.55)
        ax.plot([lo, lo], [yi - 0.18, yi + 0.18], color=c, lw=1.2)
        ax.plot([hi, hi], [yi - 0.18, yi + 0.18], color=c, lw=1.2)
        ax.plot([row["elo"]], [yi], "o", color=c, ms=7, mec="white", mew=1.2)
        ax.annotate(fmt_elo(row["elo"]), (row["elo"], yi), xytext=(0, 7),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8,
                    color="#222")
    ax.axvline(0, color="#888", lw=0.8, ls="--")
    ax.set_yticks(y, [short(e) for e in t.index])
    ax.set_ylim(-0.7, n - 0.3)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(f"Elo ({anchor_text}); bars: 95% interval")
    alt = "Elo ratings with 95% intervals, strongest first. " + "; ".join(
        f"{e}: {fmt_elo(r['elo'])} ({fmt_elo(r['lo'])} to {fmt_elo(r['hi'])})"
        for e, r in t.iterrows())
    return svg_plot(fig, alt, "elo")


# ----------------------------------------------------------------------------------------------
# Distributions
# ----------------------------------------------------------------------------------------------


def _strips(ax, groups: list, colors: dict, zero_line: bool = False):
    """Mirrored histograms (one per entrant, top to bottom) with a box (quartiles), whiskers (5th to
    95th percentile), median line and mean diamond."""
    allv = (np.concatenate([np.asarray(v, dtype=float) for _, v in groups if len(v)]) if groups
            else np.zeros(1))
    lo, hi = float(np.min(allv)), float(np.max(allv))
    span = max(hi - lo, 1.0)
    step = max(1.0, np.ceil(span / 60.0))
    edges = np.arange(np.floor(lo) - 0.5 * step, hi + step, step)
    n = len(groups)
    for k, (name, values) in enumerate(groups):
        v = np.asarray(values, dtype=float)
        y = n - 1 - k
        c = colors.get(name, "#333")
        if len(v) == 0:
            continue
        counts, _ = np.histogram(v, bins=edges)
        dens = counts / counts.max() * 0.38 if counts.max() > 0 else counts
        xs = np.repeat(edges, 2)[1:-1]
        ys = np.repeat(dens, 2)
        ax.fill_between(xs, y - ys, y + ys, color=c, alpha=0.35, lw=0)
        q05, q25, q50, q75, q95 = np.quantile(v, [0.05, 0.25, 0.5, 0.75, 0.95])
        ax.plot([q05, q25], [y, y], color="#222", lw=1)
        ax.plot([q75, q95], [y, y], color="#222", lw=1)
        ax.add_patch(matplotlib.patches.Rectangle((q25, y - 0.09), max(q75 - q25, 0.05), 0.18,
                                                  facecolor="white", edgecolor="#222", lw=1))
        ax.plot([q50, q50], [y - 0.09, y + 0.09], color="#222", lw=1.6)
        ax.plot([v.mean()], [y], "D", color=c, mec="#222", mew=0.8, ms=5)
    if zero_line:
        ax.axvline(0, color="#888", lw=0.9, ls="--")
    ax.set_yticks(np.arange(n)[::-1], [short(g) for g, _ in groups])
    ax.set_ylim(-0.6, n - 0.4)
    ax.grid(axis="y", visible=False)


def _groups(results: pd.DataFrame, column: str, order) -> list:
    ent = results["entrant"].astype(str)
    return [(e, results.loc[ent == e, column].to_numpy()) for e in order]


def _dist_alt(groups, what) -> str:
    parts = []
    for e, v in groups:
        if len(v):
            q25, q50, q75 = np.quantile(v, [0.25, 0.5, 0.75])
            parts.append(f"{e}: median {q50:g}, middle half {q25:g} to {q75:g}, "
                         f"mean {np.mean(v):.1f}")
    return f"{what} per entrant. " + "; ".join(parts)


@styled
def score_plot(results: pd.DataFrame, order, colors: dict) -> Plot:
    """Final score distribution per entrant."""
    groups = _groups(results, "score", order)
    fig = new_figure(6.4, 0.9 + 0.55 * max(len(groups), 1))
    ax = fig.subplots()
    _strips(ax, groups, colors)
    ax.set_xlabel("final score (box: middle half; whiskers: 5th to 95th percentile; \u25c6 mean)")
    return svg_plot(fig, _dist_alt(groups, "Score distribution"), "scores")


@styled
def margin_plot(results: pd.DataFrame, order, colors: dict) -> Plot:
    """Victory margin (own score minus best opponent) distribution per entrant."""
    groups = _groups(results, "margin", order)
    fig = new_figure(6.4, 0.9 + 0.55 * max(len(groups), 1))
    ax = fig.subplots()
    _strips(ax, groups, colors, zero_line=True)
    ax.set_xlabel("victory margin: own score \u2212 best opponent's "
                  "(right of the dashed line: won)")
    return svg_plot(fig, _dist_alt(groups, "Victory margin distribution"), "margins")


# ----------------------------------------------------------------------------------------------
# Head to head
# ----------------------------------------------------------------------------------------------


@styled
def h2h_plot(score: pd.DataFrame, meetings: pd.DataFrame | None = None) -> Plot:
    """Heat map of the pairwise score of the row entrant against the column entrant."""
    names = list(score.index)
    k = len(names)
    m = score.reindex(index=names, columns=names).to_numpy(dtype=float)
    side = 1.6 + 0.62 * k
    fig = new_figure(max(4.2, side + 1.2), max(3.2, side))
    ax = fig.subplots()
    masked = np.ma.masked_invalid(m)
    cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="#f0f0f0")
    mesh = ax.pcolormesh(np.arange(k + 1), np.arange(k + 1), masked, cmap=cmap, vmin=0, vmax=1,
                         edgecolors="white", linewidth=1.5)
    ax.invert_yaxis()
    for i in range(k):
        for j in range(k):
            v = m[i, j]
            if i == j:
                ax.text(j + 0.5, i + 0.5, "\u2014", ha="center", va="center", color="#999")
            elif np.isfinite(v):
                dark = abs(v - 0.5) > 0.3
                label = f"{100 * v:.0f}%"
                if meetings is not None:
                    n = meetings.reindex(index=names, columns=names).to_numpy()[i, j]
                    if np.isfinite(n):
                        label += f"\nn={int(n)}"
                ax.text(j + 0.5, i + 0.5, label, ha="center", va="center", fontsize=8,
                        color="white" if dark else "#222")
    ax.set_xticks(np.arange(k) + 0.5, [short(n, 14) for n in names], rotation=30, ha="right")
    ax.set_yticks(np.arange(k) + 0.5, [short(n) for n in names])
    ax.grid(False)
    ax.set_xlabel("opponent")
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    cb = fig.colorbar(mesh, ax=ax, fraction=0.05, pad=0.03)
    cb.set_label("row entrant's pairwise score")
    cb.outline.set_visible(False)
    parts = [f"{names[i]} vs {names[j]}: {100 * m[i, j]:.0f}%" for i in range(k) for j in range(k)
             if i < j and np.isfinite(m[i, j])]
    alt = ("Head-to-head heat map: share of pairwise encounters (better rank in the same game, "
           "ties half) won by the row entrant. " + "; ".join(parts))
    return svg_plot(fig, alt, "h2h")


# ----------------------------------------------------------------------------------------------
# Seats
# ----------------------------------------------------------------------------------------------


@styled
def seat_plot(seats: pd.DataFrame) -> Plot:
    """Win share by seat, one panel per player count, with the fair share 1/n dashed.

    ``seats``: columns ``n_players``, ``seat``, ``win_share``, optional ``lo``/``hi``.
    """
    counts = sorted(seats["n_players"].unique())
    fig = new_figure(min(3.0 + 2.2 * len(counts), 9.0), 2.9)
    axes = fig.subplots(1, len(counts), squeeze=False, sharey=True)[0]
    top = 0.0
    parts = []
    for ax, n in zip(axes, counts):
        s = seats[seats["n_players"] == n].sort_values("seat")
        x = s["seat"].to_numpy()
        y = s["win_share"].to_numpy(dtype=float)
        ax.bar(x, y, color="#0072B2", alpha=0.75, width=0.6)
        if "lo" in s and s["lo"].notna().any():
            lo = s["lo"].to_numpy(dtype=float)
            hi = s["hi"].to_numpy(dtype=float)
            ax.errorbar(x, y, yerr=[np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)], fmt="none",
                        ecolor="#222", capsize=3, lw=1)
            top = max(top, np.nanmax(hi))
        top = max(top, np.nanmax(y), 1.0 / n)
        ax.axhline(1.0 / n, color="#D55E00", ls="--", lw=1)
        ax.set_xticks(x, [f"seat {int(v) + 1}" for v in x])
        ax.set_title(f"{n} players")
        ax.grid(axis="x", visible=False)
        shares = ", ".join(f"seat {int(a) + 1} {100 * b:.1f}%" for a, b in zip(x, y))
        parts.append(f"{n} players: {shares} (fair share {100 / n:.1f}%)")
    axes[0].set_ylabel("win share")
    axes[0].set_ylim(0, min(1.0, top * 1.15 + 0.02))
    axes[0].yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0, decimals=0))
    alt = ("Win share by seat (turn order), with 95% intervals; dashed line: fair share. "
           + "; ".join(parts))
    return svg_plot(fig, alt, "seats")


# ----------------------------------------------------------------------------------------------
# Convergence
# ----------------------------------------------------------------------------------------------


@styled
def convergence_plot(history: pd.DataFrame, order, colors: dict) -> Plot:
    """Elo estimate against games played, with 95% bands (``history`` from elo_history)."""
    fig = new_figure(6.4, 3.4)
    ax = fig.subplots()
    parts = []
    for e in order:
        h = history[history["entrant"] == e].sort_values("games")
        if h.empty:
            continue
        c = colors.get(e, "#333")
        x = h["games"].to_numpy()
        if h["lo"].notna().any():
            ax.fill_between(x, h["lo"].to_numpy(dtype=float), h["hi"].to_numpy(dtype=float),
                            color=c, alpha=0.15, lw=0)
        ax.plot(x, h["elo"].to_numpy(dtype=float), color=c, lw=1.8, label=short(e), marker="o",
                ms=2.5)
        first, last = h.iloc[0], h.iloc[-1]
        parts.append(f"{e}: {fmt_elo(first['elo'])} after {int(first['games'])} games, "
                     f"{fmt_elo(last['elo'])} after {int(last['games'])}")
    ax.axhline(0, color="#888", lw=0.8, ls="--")
    ax.set_xlabel("games played")
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_ylabel("Elo")
    ax.set_xlim(left=0)
    if len(order) <= 8:
        ax.legend(frameon=False, fontsize=8, loc="best")
    alt = ("Elo estimate against games played, with 95% bands: flat lines and narrowing bands mean "
           "the ratings have settled. " + "; ".join(parts))
    return svg_plot(fig, alt, "convergence")


@styled
def llr_plot(sprt: pd.DataFrame) -> Plot:
    """SPRT log-likelihood ratio against blocks, with the decision bounds (table ``sprt``)."""
    s = sprt.sort_values("block")
    fig = new_figure(6.4, 3.0)
    ax = fig.subplots()
    x = s["block"].to_numpy()
    ax.plot(x, s["llr"].to_numpy(dtype=float), color="#0072B2", lw=1.8, label="LLR")
    ax.plot(x, s["upper"].to_numpy(dtype=float), color="#009E73", ls="--", lw=1, label="accept H1")
    ax.plot(x, s["lower"].to_numpy(dtype=float), color="#D55E00", ls="--", lw=1, label="accept H0")
    ax.set_xlabel("blocks")
    ax.set_ylabel("log-likelihood ratio")
    ax.legend(frameon=False, fontsize=8)
    last = s.iloc[-1]
    alt = (f"SPRT log-likelihood ratio after each block; after {int(last['block'])} blocks it is "
           f"{last['llr']:.2f}, bounds {last['lower']:.2f} and {last['upper']:.2f}.")
    return svg_plot(fig, alt, "llr")


@styled
def elo_dates_plot(table: pd.DataFrame, colors: dict, anchor_text: str = "mean 0") -> Plot:
    """Each entrant's Elo (95% band) over the dates of its games, the versions of one bot joined in
    date order: how a bot's rating moved as its versions came (the rating list, `report.pool`).

    ``table``: one row per rated entrant with columns ``name``, ``label`` (the bot: versions
    share it), ``elo``, ``lo``, ``hi``, ``first``, ``last`` (dates of its first and last game);
    ``colors`` per name.
    """
    fig = new_figure(7.2, 3.8)
    ax = fig.subplots()
    parts = []
    five_minutes = np.timedelta64(5, "m")
    start = min(_date(d) for d in table["first"])
    end = max(_date(d) for d in table["last"])
    brief = max((end - start) / 100, np.timedelta64(1, "s"))  # shorter: shown as a dot too
    for label, versions in table.groupby("label", sort=False):
        versions = versions.sort_values(["first", "last"])
        prev = None
        texts = []
        for _, v in versions.iterrows():
            c = colors.get(v["name"], "#333")
            x0, x1 = _date(v["first"]), _date(v["last"])
            # the line ends at the version's last game; one played within moments is a dot
            ax.fill_between([x0, x1], [v["lo"]] * 2, [v["hi"]] * 2, color=c, alpha=0.15, lw=0)
            ax.plot([x0, x1], [v["elo"]] * 2, color=c, lw=2.2, ms=4,
                    marker="o" if x1 - x0 < brief else None,
                    label=short(label) if prev is None else None)
            if prev is not None:
                ax.plot([prev[0], x0], [prev[1], v["elo"]], color=c, lw=1, ls="--")
            if len(versions) > 1 and v["name"] != label:
                ax.annotate(short(v["name"][len(label):], 14), (x0, v["elo"]), xytext=(0, 4),
                            textcoords="offset points", fontsize=7, color="#333")
            prev = (x1, v["elo"])
            texts.append(f"{fmt_elo(v['elo'])} ({v['name']}, {_day(v['first'])} to "
                         f"{_day(v['last'])})")
        parts.append(f"{label}: " + ", then ".join(texts))
    ax.axhline(0, color="#888", lw=0.8, ls="--")
    pad = max((end - start) / 40, five_minutes)
    # matplotlib's units machinery takes datetime64; its stubs say float only
    ax.set_xlim(start - pad, end + pad)  # type: ignore[arg-type]
    locator = matplotlib.dates.AutoDateLocator(minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(matplotlib.dates.ConciseDateFormatter(locator))
    ax.set_xlabel("date of the games (UTC)")
    ax.set_ylabel(f"Elo ({anchor_text})")
    if table["label"].nunique() <= 12:
        ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    alt = ("Elo against the dates of the games, with 95% bands; the versions of one bot are "
           "joined by dashed lines. " + "; ".join(parts))
    return svg_plot(fig, alt, "elodates")


def _date(stamp) -> np.datetime64:
    """A date for matplotlib's axis: UTC, without the time zone."""
    return np.datetime64(pd.Timestamp(stamp).tz_convert(None) if pd.Timestamp(stamp).tzinfo
                         else pd.Timestamp(stamp), "s")


def _day(stamp) -> str:
    return pd.Timestamp(stamp).strftime("%Y-%m-%d")
