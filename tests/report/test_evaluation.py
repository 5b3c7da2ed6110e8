"""The evaluation section (kdtourney.report.evaluation) on the tournament report and the rating
list, from synthetic stores with known strengths (tests/pool_support.py)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from pool_support import simulate

from kdtourney.cli import main
from kdtourney.report.html import build_context, write_report
from kdtourney.report.pool import rating_list

TRUTH = {"strong": 250.0, "middle": 0.0, "weak": -250.0, "other": 50.0}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("evaluation") / "three"
    simulate(path, TRUTH, blocks=80, players=3, seed=4)
    return path


@pytest.mark.slow
def test_the_report_shows_the_plackett_luce_elo_beside_the_pairwise(folder):
    ctx = build_context(folder, n_boot=100)
    rows = ctx["evaluation"]["pl_rows"]
    assert [r["name"] for r in rows] == [r["name"] for r in ctx["standings"]]
    assert [r["name"] for r in rows][0] == "strong" and rows[-1]["name"] == "weak"
    for r in rows:
        assert r["pl_lo"] <= r["pl"] <= r["pl_hi"]
    page = write_report(folder, n_boot=100).read_text(encoding="utf-8")
    assert 'id="pl-table"' in page and "Plackett-Luce Elo" in page and 'id="skill-table"' in page
    assert 'id="game-shape"' in page and [r["players"] for r in ctx["evaluation"]["shape"]] == [3]
    skill = ctx["evaluation"]["skill_rows"]
    assert skill[0]["name"] == "strong" and skill[0]["fit_rank"] == 1


def test_the_rating_list_and_its_command_show_it(folder, tmp_path):
    found = rating_list([folder], n_boot=100)
    assert [r["name"] for r in found.evaluation["pl_rows"]] == [e.name for e in found.rated]
    out = CliRunner().invoke(main, ["ratings", str(folder), "--out", str(tmp_path / "list")])
    assert out.exit_code == 0, out.output
    assert re.search(r"strong +\+\d+ \[", out.output.split("Plackett-Luce")[1])
    assert re.search(r" 1 strong +mu ", out.output.split("openskill")[1])
    assert 'id="pl-table"' in (tmp_path / "list" / "index.html").read_text(encoding="utf-8")


def test_the_ladder_page_lists_the_skill_by_mu_minus_three_sigma(tmp_path):
    from test_ladder_list import mixed_games, write_ladder

    from kdtourney.report.ladder import ladder_board, ladder_page

    write_ladder(tmp_path / "ladder", mixed_games([2, 2, 4] * 15))
    board = ladder_board(tmp_path / "ladder", n_boot=100)
    skill = board.found.evaluation["skill_rows"]
    assert {r["name"] for r in skill} == {"a", "b", "c", "d"}
    assert [r["conservative"] for r in skill] == sorted((r["conservative"] for r in skill),
                                                        reverse=True)
    page = ladder_page(tmp_path / "ladder", board)
    assert 'id="skill-table"' in page and 'id="pl-table"' in page


def test_a_population_built_to_cycle_is_named_on_the_list(tmp_path):
    """rock beats scissors, scissors beats paper, paper beats rock, 3 games in 4."""
    import datetime

    from pool_support import START, write_store

    beats = [("rock", "scissors"), ("scissors", "paper"), ("paper", "rock")]
    games = []
    for block in range(60):
        a, b = beats[block % 3]
        for rotation in range(2):
            win = a if (block // 3 + rotation) % 4 else b
            seats = [a, b] if rotation == 0 else [b, a]
            games.append(dict(block=block, rotation=rotation, seats=seats,
                              ranks=[1 if s == win else 2 for s in seats],
                              finished=START + datetime.timedelta(minutes=len(games))))
    write_store(tmp_path / "cycle", games, ["rock", "paper", "scissors"], players=2)
    out = CliRunner().invoke(main, ["ratings", str(tmp_path / "cycle"), "--out",
                                    str(tmp_path / "list")])
    assert out.exit_code == 0, out.output
    assert "Cycles: 1 (1 clear of the noise)" in out.output
    for a, b in beats:
        assert f"{a} beats {b} (75% [" in out.output
    page = (tmp_path / "list" / "index.html").read_text(encoding="utf-8")
    assert 'id="h2h-intervals"' in page and "paper beats rock" in page


@pytest.mark.slow
def test_an_sprt_report_shows_its_block_outcomes_and_the_variance_ratio(tmp_path):
    from kdtourney import store
    from kdtourney.report.page import render
    from kdtourney.tournament.sprt import SprtTest

    simulate(tmp_path / "sprt", {"cand": 100.0, "base": 0.0}, blocks=40, seed=7)
    with store.open_store(tmp_path / "sprt") as st:
        st.set_config("sprt", SprtTest("cand", "base", elo0=0, elo1=1000,
                                       min_blocks=100).to_dict())
        st.write_sprt([(b, 0.1 * b, -2.94, 2.94, 40.0, 10.0, 70.0) for b in range(1, 41)])
    ctx = build_context(tmp_path / "sprt", n_boot=100)
    outcomes = ctx["evaluation"]["sprt"]
    assert sum(r["count"] for r in outcomes["rows"]) == outcomes["blocks"] == 40
    assert [r["score"] for r in outcomes["rows"]] == [0.0, 0.5, 1.0]  # two games a block
    assert outcomes["ratio_lo"] < outcomes["ratio"] < outcomes["ratio_hi"]
    page = render(ctx)
    assert 'id="block-outcomes"' in page and 'id="variance-ratio"' in page
