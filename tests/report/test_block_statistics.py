"""The statistics every list and report rests on: identical blocks count once across folders, a
block with a failed game is left out everywhere (ratings, tournament report, SPRT, tune and its
verify), and an entrant that won or lost every comparison gets a one-sided bound instead of a
collapsed interval."""

from __future__ import annotations

import io
import math
import re

import numpy as np
import pandas as pd
from click.testing import CliRunner
from pool_support import simulate, write_store

from kdtourney.cli import main
from kdtourney.commands import sprt as sq
from kdtourney.commands import tune as tuning
from kdtourney.registry import BotRegistry
from kdtourney.report.html import build_context, write_report
from kdtourney.report.pool import rating_list
from kdtourney.report.standings import standings
from kdtourney.stats import spsa
from kdtourney.stats.outcomes import balanced_blocks
from kdtourney.stats.ratings import fit_totals, pair_counts, rank_key
from kdtourney.stats.sprt import block_scores
from kdtourney.store import load_results
from kdtourney.tournament.definition import Tournament
from kdtourney.tournament.sprt import SprtTest

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
    t = test.new()
    t.update(list(block_scores(kept, "cand", "base")))
    assert math.isclose(failed.llr, t.llr) and not math.isclose(failed.llr, llr_whole[-1])


def test_a_tune_does_not_score_a_block_with_a_failed_game(tmp_path):
    # 4 iterations of 2 blocks (theta+ against theta-): block 3, iteration 2's second, has a
    # failed game
    games = simulate(tmp_path / "t", {"theta+": 100, "theta-": 0}, blocks=8, seed=3)
    broken = [dict(g) for g in games]
    broken[7]["ranks"] = None
    write_store(tmp_path / "f", broken, ["theta+", "theta-"], players=2, seed=3)
    _, t = tuning.prepare_tune(BotRegistry(), "mcts:iterations=50", ["c=0.2,0.02,1.0"],
                               iterations=4, batch=2, blocks=2, seed=9)
    state = tuning.evaluate(tmp_path / "f", t, 9)
    assert [it.k for it in state.iterations if it.result is not None] == [1, 2, 3, 4]
    scores = block_scores(load_results(tmp_path / "f"), "theta+", "theta-")
    alone = spsa.result_of([scores[2]], rule=t.rule)  # iteration 2: block 2's result alone
    assert state.iterations[1].result == alone
    assert alone != spsa.result_of([scores[2], scores[3]], rule=t.rule)  # block 3: one game
    # the other iterations as in the store without the failed game
    whole = tuning.evaluate(tmp_path / "t", t, 9)
    assert state.iterations[0].result == whole.iterations[0].result
    # its verify: the balanced blocks only
    verdict = tuning.verdict_of(load_results(tmp_path / "f"), "theta+", "theta-", "a", "b",
                                n_boot=N_BOOT)
    assert (verdict.games, verdict.blocks) == (14, 7)
    kept = scores.drop(3)
    assert verdict.score == kept.mean()


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
    # the bound: its Elo refitted with its score against each opponent at the exact binomial
    # bound of a sweep after its 6 blocks (of 8: champion-greedy, champion-random and
    # greedy-random take turns), everyone else as they played
    pc = pair_counts(load_results(tmp_path / "runs" / "p"))
    w, n = pc.totals()
    wins, games = np.zeros((3, 3)), np.zeros((3, 3))
    for p, (i, j) in enumerate(zip(pc.pair_i, pc.pair_j)):
        wins[i, j], wins[j, i], games[i, j], games[j, i] = w[p], n[p] - w[p], n[p], n[p]
    c = pc.entrants.index("champion")
    wins[c], wins[:, c] = 0.025 ** (1 / 6) * games[c], (1 - 0.025 ** (1 / 6)) * games[:, c]
    assert math.isclose(champion.lo, fit_totals(wins, games)[c], abs_tol=1e-3)
    assert np.mean([e.elo for e in others]) < champion.lo < champion.elo
    result = CliRunner().invoke(main, ["ratings", str(tmp_path / "runs"), "--out",
                                       str(tmp_path / "page")])
    assert result.exit_code == 0, result.output
    assert re.search(rf"champion +{re.escape(f'>= {champion.lo:+.0f} (won all)')}", result.output)
    page = (tmp_path / "page" / "index.html").read_text()
    assert "won every comparison" in page and "\u2265 " in page


def test_a_sweep_of_one_opponent_is_bounded_on_the_list_s_scale_not_by_the_prior(tmp_path):
    """Two entrants, one winning all 30 blocks: on a mean-0 list the winner is at least half the
    gap its sweep bounds (+176), and the loser at most minus that; the loser's own Elo, which the
    prior sets, is no reference (from it the bound read -77)."""
    simulate(tmp_path / "p", {"champion": 5000, "random": 0}, blocks=30, seed=8)
    found = rating_list([tmp_path / "p"], n_boot=N_BOOT)
    champion, loser = found.rated
    gap = -400 * math.log10(1 / 0.025 ** (1 / 30) - 1)  # +352: the bound of a 30-block sweep
    assert (champion.record, loser.record) == ("won all", "lost all")
    assert math.isclose(champion.lo, gap / 2, abs_tol=5) and champion.lo > loser.hi
    assert math.isclose(loser.hi, -gap / 2, abs_tol=5)


def test_a_bound_never_ranks_above_an_entrant_whose_elo_it_lies_below():
    """rank_key: a perfect record, whose Elo the prior sets, ranks by its Elo but never past its
    bound."""
    table = pd.DataFrame({"elo": [300.0, 50.0, 100.0], "lo": [-200.0, -np.inf, 20.0],
                          "hi": [np.inf, -400.0, 180.0], "record": ["won all", "lost all", ""]},
                         index=["sweeper", "loser", "middle"])
    key = rank_key(table)
    assert list(key.sort_values(ascending=False).index) == ["sweeper", "middle", "loser"]
    assert key["loser"] == -400.0 and key["sweeper"] == 300.0


def test_an_entrant_that_won_everything_gets_a_one_sided_bound_in_the_report(tmp_path):
    perfect(tmp_path / "p")
    ctx = build_context(tmp_path / "p", n_boot=N_BOOT)
    rows = {r["name"]: r for r in ctx["standings"]}
    assert rows["champion"]["record"] == "won all" and rows["champion"]["elo_hi"] == math.inf
    assert rows["greedy"]["record"] == "" and math.isfinite(rows["greedy"]["elo_hi"])
    page = write_report(tmp_path / "p", n_boot=N_BOOT).read_text()
    assert "won every comparison" in page
    assert f"\u2265 {'+' if rows['champion']['elo_lo'] >= 0 else ''}" in page


def test_the_terminal_standings_keep_every_column_at_80_columns(tmp_path):
    """At 80 columns the entrant column stays (a long spec folds) and a bound is whole."""
    from rich.console import Console

    from kdtourney.terminal.tables import standings_table

    simulate(tmp_path / "p", {"mcts:iterations=200:c=0.5": 5000, "greedy": 0, "random": -300},
             blocks=8, seed=8)
    console = Console(width=80, record=True, force_terminal=False, file=io.StringIO())
    console.print(standings_table(tmp_path / "p"))
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = {line.split()[0]: line for line in lines[3:] if line.strip()}
    assert {"mcts:iterati", "greedy", "random"} <= set(rows)
    assert rows["mcts:iterati"].rstrip().endswith("(won all)")
    assert re.search(r"[-+]\d+ \[[-+]\d+, [-+]\d+\]$", rows["greedy"].rstrip())
