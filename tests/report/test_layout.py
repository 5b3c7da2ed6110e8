"""The report's, the rating list's and the ladder's tables at 1,400 px (Chromium): none scrolls
sideways, and an entrant's name breaks after a ':' only, never inside a bot's name or a
parameter."""

from __future__ import annotations

import pytest
from browser_support import page  # noqa: F401  (a fixture)
from click.testing import CliRunner
from ladder_support import instant_games
from pool_support import simulate, write_store

from kdtourney.cli import main
from kdtourney.commands import ladder
from kdtourney.report.html import write_report
from kdtourney.report.ladder import ladder_board, write_ladder_page
from kdtourney.report.page import name_tokens
from kdtourney.report.pool import rating_list
from kdtourney.report.pool_html import write_rating_list

BOTS = "greedy,random,mcts:iterations=20,mcts:iterations=10:c=0.7,heuristic,value-greedy"

OVERFLOWS = """() => Array.from(document.querySelectorAll('.scroll'))
  .filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => (e.querySelector('table') || e).id + ' ' + e.scrollWidth + ' > ' + e.clientWidth)"""
BROKEN = """() => Array.from(document.querySelectorAll('.tok'))
  .filter(t => t.getClientRects().length > 1).map(t => t.textContent)"""


def test_a_name_is_tokens_broken_after_a_colon_only():
    assert str(name_tokens("mcts:iterations=10:c=<b>")) == (
        '<span class="tok">mcts:</span><wbr><span class="tok">iterations=10:</span><wbr>'
        '<span class="tok">c=&lt;b&gt;</span>')


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.browser
def test_six_entrants_with_long_names_fit_1400_pixels(tmp_path, page):  # noqa: F811
    folder = tmp_path / "wide"
    result = CliRunner().invoke(main, ["run", "--bots", BOTS, "--players", "2,4", "--games", "60",
                                       "--seed", "5", "--workers", "1", "--out", str(folder),
                                       "-q", "--no-report"])
    assert result.exit_code == 0, result.output
    path = write_report(folder, n_boot=50)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("body[data-ready]")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    assert page.evaluate(OVERFLOWS) == []
    names = page.locator("#entrants tbody th")
    assert names.count() == 6 and page.evaluate(BROKEN) == []
    # before: the entrants' table 1,404 px in 1,200, head to head 864 in 586, names cut at '='
    assert page.locator("#head-to-head .tok").count() > 12


@pytest.mark.browser
def test_a_rating_list_with_long_names_and_notes_fits_1400_pixels(tmp_path, page):  # noqa: F811
    runs = tmp_path / "runs" / "a-long-folder-name-of-the-week-of-the-fifth-of-january"
    names = {"mcts:iterations=2000:c=0.7": 100, "mcts:iterations=1000:c=1.4": 50, "greedy": 0,
             "value-greedy:net=weights-2026-01-05": 20, "random": -300}
    two = simulate(runs / "two", names, blocks=12)
    four = simulate(tmp_path / "scratch", names, blocks=5, players=4)
    # as run --players 2,4: its 4-player games are left out, which a long note says
    write_store(runs / "mixed", two + [dict(g, block=g["block"] + 12) for g in four], list(names),
                players=[2, 4], seed=9)
    path = write_rating_list(rating_list([tmp_path / "runs"], n_boot=50), tmp_path / "page")
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("body[data-ready]")
    assert page.evaluate(OVERFLOWS) == [] and page.evaluate(BROKEN) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.browser
def test_a_ladder_with_long_names_fits_1400_pixels(tmp_path, monkeypatch, page):  # noqa: F811
    folder = tmp_path / "ladder"
    names = ["mcts:iterations=2000:c=0.7", "mcts:iterations=1000:c=1.4", "mce:iterations=100",
             "expectimax:depth=2", "greedy", "random"]
    with instant_games(monkeypatch):  # results drawn at once: the page is what is tested
        ladder.play_ladder(ladder.prepare_ladder(players=(2, 4), seed=1), folder,
                           references=names, workers=8, games=240, chunk_seconds=0.0,
                           poll=3600.0)
    path = write_ladder_page(folder, ladder_board(folder, n_boot=50))
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("body[data-ready]")
    page.click("#rp-finder summary")  # the viewer's list of games shown too
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    assert page.evaluate(OVERFLOWS) == [] and page.evaluate(BROKEN) == []
    # every name the page shows in its tables and its viewer's kingdoms may break after a ':' only
    for where in ("#ladder-list", "#pl-table", "#h2h-intervals", "#skill-table",
                  "#last-games-table", "#versions-table", "#pairs-table", "#replay .who"):
        assert page.locator(f"{where} .tok").count() >= 6, where
    # before: the kingdoms' names broke inside a token ('mcts:c=1.4:iterati' / 'ons=1000')
    assert page.locator("#replay .who").count() == 4
