"""The statistics every list and report rests on: identical blocks count once across folders, a
block with a failed game is left out everywhere (ratings, tournament report, SPRT), and an entrant
that won or lost every comparison gets a one-sided bound instead of a collapsed interval."""

from __future__ import annotations

import math
import re

import numpy as np
from click.testing import CliRunner
from pool_support import simulate, write_store

from kdtourney.arena import sequential as sq
from kdtourney.arena.sequential import SprtTest
from kdtourney.arena.store import load_results
from kdtourney.arena.tournament import Tournament
from kdtourney.cli import main
from kdtourney.outcomes import balanced_blocks
from kdtourney.report.html import build_context, write_report
from kdtourney.report.pool import rating_list
from kdtourney.report.standings import standings

N_BOOT = 200
STRENGTHS = {"greedy": 0, "random": -300, "mine": 100}


def test_overlapping_runs_of_one_seed_count_each_block_once(tmp_path):
    simulate(tmp_path / "runs" / "g20", STRENGTHS, blocks=10, seed=3)   # --games 20
    simulate(tmp_path / "runs" / "g40", STRENGTHS, blocks=20, seed=3)   # --games 40, same seed
    simulate(tmp_path / "alone" / "g40", STRENGTHS, blocks=20, seed=3)
    both = rating_list([tmp_path / "runs"], n_boot=N_BOOT)
    alone = rating_list([tmp_path / "alone"], n_boot=N_BOOT)
    assert both.n_games == alone.n_games == 40
    for e, ref in zip(both.rated, alone.rated):
        assert (e.name, e.games) == (ref.name, ref.games)
        assert (e.elo, e.lo, e.hi) == (ref.elo, ref.lo, ref.hi)  # the intervals no narrower
    notes = "\n".join(both.notes())
    assert "20 games also in" in notes and "counted once" in notes
    # another seed is other games: they add up
    simulate(tmp_path / "runs" / "other", STRENGTHS, blocks=10, seed=4)
    assert rating_list([tmp_path / "runs"], n_boot=N_BOOT).n_games == 60


def test_a_folder_copied_mid_run_counts_its_blocks_once(tmp_path):
    games = simulate(tmp_path / "full", STRENGTHS, blocks=12, seed=5)
    write_store(tmp_path / "copy", games[:9], list(STRENGTHS), players=2, seed=5)  # mid-block
    found = rating_list([tmp_path / "full", tmp_path / "copy"], n_boot=N_BOOT)
    assert found.n_games == 24 and found.n_folders == 1


def test_a_block_with_a_failed_game_is_left_out_of_the_ratings_and_the_report(tmp_path):
    games = simulate(tmp_path / "ok", STRENGTHS, blocks=12, seed=6)
    broken = [dict(g) for g in games]
    broken[5]["ranks"] = None  # block 2's second seating failed
    write_store(tmp_path / "failed", broken, list(STRENGTHS), players=2, seed=6)
    results = load_results(tmp_path / "failed")
    assert set(results["block"]) - set(balanced_blocks(results)["block"]) == {2}
    # the list: 22 games in 11 blocks, the failed game counted against its seats
    found = rating_list([tmp_path / "failed"], n_boot=N_BOOT)
    assert (found.n_games, found.n_blocks) == (22, 11)
    assert sum(e.failed for e in found.rated) == 2
    # the report's standings: the same 11 blocks
    ctx = build_context(tmp_path / "failed", n_boot=N_BOOT)
    assert sum(r["seats"] for r in ctx["standings"]) == 22 * 2
    reference = results[results["block"] != 2]
    elo = standings(reference, n_boot=N_BOOT).elo
    for row in ctx["standings"]:
        assert row["elo"] == elo.loc[row["name"], "elo"]


def test_sprt_does_not_score_a_block_with_a_failed_game(tmp_path):
    games = simulate(tmp_path / "t", {"cand": 100, "base": 0}, blocks=30, seed=7)
    broken = [dict(g) for g in games]
    broken[9]["ranks"] = None  # block 4
    write_store(tmp_path / "f", broken, ["cand", "base"], players=2, seed=7)
    tournament = Tournament(entrants=("cand", "base"), specs=("cand", "base"), format="gauntlet",
                            players=(2,), games=60, seed=7, candidate=0)
    test = SprtTest("cand", "base", elo0=0, elo1=1000, min_blocks=100)  # never decides here
    whole = sq.evaluate(tmp_path / "t", tournament, test)
    failed = sq.evaluate(tmp_path / "f", tournament, test)
    assert whole.complete == failed.complete == 30  # every block stored
    llr_whole = [r[1] for r in whole.rows]
    llr_failed = [r[1] for r in failed.rows]
    assert llr_failed[4] == llr_failed[3]  # block 4 adds nothing
    # the other blocks are the same observations: the final LLR is the test without block 4
    kept = load_results(tmp_path / "t")
    kept = kept[kept["block"] != 4]
    from kdtourney.arena.sprt import block_scores

    t = test.new()
    t.update(list(block_scores(kept, "cand", "base")))
    assert math.isclose(failed.llr, t.llr) and not math.isclose(failed.llr, llr_whole[-1])


def perfect(folder, blocks=8):
    return simulate(folder, {"champion": 5000, "greedy": 0, "random": -300}, blocks=blocks, seed=8)


def test_an_entrant_that_won_everything_gets_a_one_sided_bound_in_the_list(tmp_path):
    perfect(tmp_path / "runs" / "p")
    found = rating_list([tmp_path / "runs"], n_boot=N_BOOT)
    champion = found.rated[0]
    assert champion.name == "champion" and champion.record == "won all"
    assert champion.hi == math.inf and math.isfinite(champion.lo)
    others = [e for e in found.rated if e is not champion]
    assert all(e.record == "" and math.isfinite(e.hi) for e in others)
    # the bound: the opponents' mean Elo plus the exact binomial bound after its 6 blocks (of 8:
    # the tables champion-greedy, champion-random, greedy-random take turns)
    mean = np.mean([e.elo for e in others])  # it met each equally often
    bound = -400 * math.log10(1 / 0.025 ** (1 / 6) - 1)
    assert math.isclose(champion.lo, mean + bound, abs_tol=1e-6)
    result = CliRunner().invoke(main, ["ratings", str(tmp_path / "runs"), "--out",
                                       str(tmp_path / "page")])
    assert result.exit_code == 0, result.output
    assert re.search(rf"champion +>= {champion.lo:+.0f} \(won every comparison\)", result.output)
    page = (tmp_path / "page" / "index.html").read_text()
    assert "won every comparison" in page and "\u2265 " in page


def test_an_entrant_that_won_everything_gets_a_one_sided_bound_in_the_report(tmp_path):
    perfect(tmp_path / "p")
    ctx = build_context(tmp_path / "p", n_boot=N_BOOT)
    rows = {r["name"]: r for r in ctx["standings"]}
    assert rows["champion"]["record"] == "won all" and rows["champion"]["elo_hi"] == math.inf
    assert rows["greedy"]["record"] == "" and math.isfinite(rows["greedy"]["elo_hi"])
    page = write_report(tmp_path / "p", n_boot=N_BOOT).read_text()
    assert "won every comparison" in page
    assert f"\u2265 {'+' if rows['champion']['elo_lo'] >= 0 else ''}" in page
