"""The page of a tune folder, `<folder>/tune.html`: every parameter's path over the iterations (in
its own units, and as (theta - start) / c_end so that parameters of any scale share one plot), and
the schedules c_k and r_k. Reads the store only (tables `tune` and config `tune`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from jinja2 import Environment, StrictUndefined

from kdtourney import store as _store
from kdtourney.report.plots import COLORS, Plot, new_figure, styled, svg_plot
from kdtourney.tournament.tune import PAGE_FILE, Tune

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tune: {{ start }}</title>
<style>body{font-family:sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse}td,th{padding:.2rem .6rem;text-align:right}
th:first-child,td:first-child{text-align:left}svg.plot{width:100%;height:auto}</style></head>
<body><h1>Tune of {{ bot }}</h1>
<p>{{ done }} of {{ iterations }} iterations ({{ games }} games), batches of {{ batch }},
{{ blocks }} block(s) per iteration; alpha {{ alpha }}, gamma {{ gamma }}, A {{ A }}.</p>
<p>Start: <code>{{ start }}</code><br>Now: <code>{{ now }}</code></p>
<table><tr><th>parameter</th><th>start</th><th>now</th><th>min</th><th>max</th><th>c_end</th>
<th>r_end</th><th>type</th></tr>
{% for r in rows %}<tr><td>{{ r.name }}</td><td>{{ r.start }}</td><td>{{ r.now }}</td>
<td>{{ r.min }}</td><td>{{ r.max }}</td><td>{{ r.c_end }}</td><td>{{ r.r_end }}</td>
<td>{{ r.type }}</td></tr>{% endfor %}</table>
{% for plot in plots %}<figure>{{ plot }}</figure>{% endfor %}
</body></html>
"""


def _paths(axes, tune: Tune, k: np.ndarray, theta: np.ndarray) -> None:
    for i, (ax, p) in enumerate(zip(axes, tune.params)):
        ax.plot(np.r_[0, k], np.r_[p.start, theta[:, i]], color=COLORS[i % len(COLORS)], lw=1.4)
        ax.axhline(p.start, color="#999999", ls=":", lw=1)
        ax.set_ylim(p.min, p.max)
        ax.set_ylabel(p.name)
    axes[-1].set_xlabel("iteration")


@styled
def paths_plot(tune: Tune, k: np.ndarray, theta: np.ndarray) -> Plot:
    """Each parameter's value after every iteration, with its range and start."""
    n = len(tune.params)
    fig = new_figure(6.4, 1.9 * n + 0.4)
    _paths(fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0], tune, k, theta)
    last = ", ".join(f"{p.name} {v:.4g}" for p, v in zip(tune.params, theta[-1]))
    return svg_plot(fig, f"Each parameter's value over {len(k)} iterations (dotted: the start); "
                     f"after the last: {last}.", "paths")


def _normalised(ax, tune: Tune, k: np.ndarray, theta: np.ndarray) -> None:
    for i, p in enumerate(tune.params):
        ax.plot(np.r_[0, k], np.r_[0.0, (theta[:, i] - p.start) / p.c_end],
                color=COLORS[i % len(COLORS)], lw=1.4, label=p.name)
    ax.axhline(0, color="#999999", lw=0.8)
    ax.set_xlabel("iteration")
    ax.set_ylabel("(theta - start) / c_end")
    ax.legend(frameon=False, fontsize=8)


@styled
def normalised_plot(tune: Tune, k: np.ndarray, theta: np.ndarray) -> Plot:
    """(theta - start) / c_end of every parameter on one plot."""
    fig = new_figure(6.4, 2.8)
    _normalised(fig.subplots(), tune, k, theta)
    return svg_plot(fig, "Every parameter's move from its start in units of its c_end, over the "
                     "iterations.", "normalised")


@styled
def schedule_plot(tune: Tune) -> Plot:
    """c_k / c_end and r_k / r_end over the iterations (the same for every parameter)."""
    s, p = tune.schedule, tune.params[0]
    k = np.arange(1, s.iterations + 1)
    fig = new_figure(6.4, 2.6)
    ax = fig.subplots()
    ax.plot(k, s.c_k(p, k) / p.c_end, color=COLORS[0], lw=1.4, label="c_k / c_end (perturbation)")
    ax.plot(k, s.r_k(p, k) / p.r_end, color=COLORS[1], lw=1.4, label="r_k / r_end (learning rate)")
    ax.axhline(1, color="#999999", lw=0.8)
    ax.set_xlabel("iteration")
    ax.legend(frameon=False, fontsize=8)
    return svg_plot(fig, f"The schedules over {s.iterations} iterations: c_k = c / k^{s.gamma} and "
                     f"r_k = a_k / c_k^2 with a_k = a / (A + k)^{s.alpha}, relative to their last "
                     "values.", "schedules")


def _stored(folder) -> tuple[Tune, np.ndarray, np.ndarray]:
    """The tune of a folder, and k and theta after every iteration with a result."""
    tune = Tune.from_dict(_store.load_config(folder)["tune"])
    rows = _store.load_tune_table(folder)
    k = rows["k"].to_numpy(dtype=int)
    theta = (np.array(list(rows["after"]), dtype=float) if len(rows)
             else np.empty((0, len(tune.params))))
    return tune, k, theta


@styled
def write_paths_svg(folder, path) -> Path:
    """A standalone SVG of a tune's paths: each parameter in its units, then all of them as
    (theta - start) / c_end (for documents; the page has the same plots)."""
    tune, k, theta = _stored(folder)
    n = len(tune.params)
    fig = new_figure(6.4, 1.5 * n + 2.4)
    axes = fig.subplots(n + 1, 1, sharex=True, gridspec_kw={"height_ratios": [1] * n + [1.6]})
    _paths(axes[:n], tune, k, theta)
    axes[n - 1].set_xlabel("")
    _normalised(axes[n], tune, k, theta)
    axes[0].set_title(f"{tune.spec(tune.start)}: {len(k)} iterations")
    fig.savefig(path, format="svg", metadata={"Date": None})
    return Path(path)


def write_tune_page(folder) -> Path:
    """Write `<folder>/tune.html` from the store; returns its path."""
    folder = Path(folder)
    tune, k, theta = _stored(folder)
    now = list(theta[-1]) if len(theta) else tune.start
    plots = [schedule_plot(tune)]
    if len(theta):
        plots = [paths_plot(tune, k, theta), normalised_plot(tune, k, theta)] + plots
    env = Environment(autoescape=True, undefined=StrictUndefined)
    shown = tune.rounded(now)
    html = env.from_string(_PAGE).render(
        bot=tune.bot, start=tune.spec(tune.start), now=tune.spec(shown), done=len(k),
        iterations=tune.schedule.iterations, batch=tune.batch, blocks=tune.blocks,
        games=_store.load_config(folder)["meta"].get("games_stored", "?"),
        alpha=tune.schedule.alpha, gamma=tune.schedule.gamma, A=f"{tune.schedule.big_a:g}",
        rows=[dict(name=p.name, start=f"{p.start:g}", now=v, min=f"{p.min:g}", max=f"{p.max:g}",
                   c_end=f"{p.c_end:.3g}", r_end=f"{p.r_end:.3g}",
                   type="int" if p.integer else "float") for p, v in zip(tune.params, shown)],
        plots=plots)
    path = folder / PAGE_FILE
    path.write_text(html, encoding="utf-8")
    return path
