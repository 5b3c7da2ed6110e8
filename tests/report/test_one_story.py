"""One page, one story: figures that seem to disagree say why beside them, no line is printed
twice, names not indexes (kdtourney.report.notes; the SPRT's terminal lines; `ratings`)."""

from __future__ import annotations

import html
import re
import sqlite3
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kdtourney.cli import main
from kdtourney.report import plots
from kdtourney.report.fmt import fmt_elo
from kdtourney.report.html import build_context
from kdtourney.report.notes import record_notes
from kdtourney.store import store_path


def plain(page) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text())).split())


@pytest.mark.process
def test_the_sprt_says_its_last_line_once_and_the_page_explains_its_estimate(tmp_path):
    folder = tmp_path / "sprt"
    result = CliRunner().invoke(main, [
        "sprt", "--candidate", "random", "--baseline", "greedy", "--elo0", "0", "--elo1", "20",
        "--seed", "2", "--max-games", "200", "--workers", "1", "--out", str(folder)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert lines[-1].startswith("H0 accepted")
    assert len(lines) == len(set(lines)), lines  # no status line twice (the last chunk's)
    text = plain(folder / "index.html")
    # the verdict's stopping-corrected interval and the standings' fit, reconciled beside it
    assert "corrected for stopping" in text and "The standings below fit every entrant" in text
    settings = (folder / "index.html").read_text().split('id="settings-table"')[1]
    assert re.search(r"candidate</th><td><code>random</code>", settings), settings[:400]
    # `report` on the folder says the verdict as `sprt` did
    again = CliRunner().invoke(main, ["report", str(folder)])
    assert again.exit_code == 0 and again.stdout.strip().splitlines()[-1] == lines[-1]


@pytest.mark.process
def test_a_perfect_record_says_beside_its_bound_why_the_fits_figure_is_no_contradiction(
        tmp_path):
    folder = tmp_path / "sweep"
    result = CliRunner().invoke(main, [
        "run", "--bots", "greedy,random,mcts:iterations=30", "--games", "9", "--seed", "1",
        "--workers", "1", "--out", str(folder), "-q"])
    assert result.exit_code == 0, result.output
    context = build_context(folder, n_boot=50)
    perfect = [r for r in context["standings"] if r.get("record")]
    assert {r["name"]: r["record"] for r in perfect} == {"mcts:iterations=30": "won all",
                                                         "random": "lost all"}
    text = plain(folder / "index.html")
    assert "mcts:iterations=30 won every comparison (3 blocks): a perfect record has no finite " \
        "estimate, so its Elo column shows a one-sided 95% bound, \u2265" in text
    assert f"The headline's {fmt_elo(context['verdict']['diff'])} Elo between it and " \
           f"{context['verdict']['second']} is the fit's estimate" in text
    assert "random lost every comparison (3 blocks)" in text
    assert f"Its {fmt_elo(perfect[-1]['delta'])} vs leader is the fit's estimate" in text
    assert record_notes([r for r in context["standings"] if not r.get("record")],
                        context["verdict"]) == []


@pytest.mark.process
def test_ratings_says_no_complete_block_for_a_folder_whose_games_make_none(tournaments,
                                                                         tmp_path):
    one = tmp_path / "runs" / "one-game"
    one.mkdir(parents=True)
    (one / "tournament.sqlite").write_bytes(store_path(tournaments("two")).read_bytes())
    with sqlite3.connect(store_path(one)) as conn:
        for table in ("results", "faults", "games"):
            conn.execute(f"DELETE FROM {table} WHERE game >= 1")
    conn.close()
    result = CliRunner().invoke(main, ["ratings", str(tmp_path / "runs"), "--out",
                                       str(tmp_path / "page")])
    assert result.exit_code == 2
    assert f"skipped {one}: no complete block: its 1 game is not yet a block played in every " \
           "seat rotation" in result.output
    assert "Error: nothing to rate: no complete block of finished games in" in result.output


def test_the_rating_lists_lines_over_time_end_at_each_entrants_last_game(monkeypatch):
    drawn = []
    monkeypatch.setattr(plots, "svg_plot", lambda fig, alt, prefix: drawn.append(fig))
    day = pd.Timestamp("2026-01-05 10:00", tz="UTC")
    table = pd.DataFrame([
        dict(name="a", label="a", elo=10.0, lo=0.0, hi=20.0, first=day,
             last=day + pd.Timedelta(minutes=3)),
        dict(name="b", label="b", elo=-10.0, lo=-20.0, hi=0.0, first=day,
             last=day + pd.Timedelta(hours=5)),
        dict(name="c", label="c", elo=0.0, lo=-5.0, hi=5.0, first=day, last=day)])
    plots.elo_dates_plot(table, {"a": "#111111", "b": "#222222", "c": "#333333"})
    (ax,) = drawn[0].axes
    ends = {}
    for line in ax.get_lines():
        if line.get_linewidth() == 2.2:
            ends[line.get_label()] = max(line.get_xdata())
    for name, last in zip(table["name"], table["last"]):
        assert ends[name] == np.datetime64(last.tz_convert(None), "s"), name
    with warnings.catch_warnings():  # games all of one second: an axis of some minutes still
        warnings.simplefilter("error")
        plots.elo_dates_plot(table.iloc[2:], {"c": "#333333"})
