"""`kdtourney sprt` from the command line: verdicts, resume, report, bad input.

Fixed cases (2 players): greedy against random accepts H1 at the 30-block minimum (60 games);
random against random with seed 11 and elo1=50 accepts H0 at block 40 (see
tests/commands/test_sprt_feed.py, which also checks the worker-count independence of the decision).
"""

import html
import shutil
from pathlib import Path

import pytest
from arena_support import MINE, dawdler, interrupt_when, snapshot, write_bot
from arena_support import stored as stored_games  # this module has a `stored` fixture
from click.testing import CliRunner
from kdtp_support import write_fake_bots

from kdtourney import store
from kdtourney.cli import main
from kdtourney.report.html import build_context, write_report
from kdtourney.store import load_config

pytestmark = pytest.mark.process


def run(*args):
    return CliRunner().invoke(main, ["sprt", *[str(a) for a in args]])


def lines(result):
    return result.stdout.strip().splitlines()


@pytest.mark.slow
def test_greedy_against_random_accepts_h1_early(tmp_path):
    folder = tmp_path / "h1"
    result = run("--candidate", "greedy", "--baseline", "random", "--elo0", 0, "--elo1", 10,
                 "--max-games", 2000, "--seed", 3, "--workers", 2, "--out", folder)
    assert result.exit_code == 0, result.output
    out = lines(result)
    assert out[0].startswith("SPRT greedy against random (gauntlet, 2-player): H0 elo <= 0, "
                             "H1 elo >= 10, alpha 0.05, beta 0.05, LLR bounds [-2.94, 2.94]")
    assert "at most 2000 games, seed 3, 2 workers" in out[0]
    assert out[-1].startswith("H1 accepted: the candidate is stronger than the baseline (a "
                              "candidate that is not passes about 5% of the time); LLR ")
    # all 104 blocks won: each adds log(L(10) / L(0)) = 0.029 to the LLR, and 2.94 takes 104
    assert "after 208 games (104 blocks)" in out[-1]  # far below the cap of 2000
    # the chunk of the decision may play on for about two seconds: stored, not counted
    stored = len(store.load_games(folder))
    assert out[-2].startswith(f"{folder / 'index.html'}: {stored} games stored")
    page = (folder / "index.html").read_text()
    assert 'id="sprt"' in page and 'id="llr-plot"' in page and 'id="partial"' not in page
    assert len(store.load_sprt(folder)) == 104
    # the report states the verdict, and its standings count the test's games only
    assert html.escape(out[-1], quote=False) in page and "H1 accepted</strong>" in page
    assert [row["seats"] for row in build_context(folder, n_boot=20)["standings"]] == [208, 208]
    assert load_config(folder)["meta"]["sessions"] == 1
    # the same command again: nothing to play, the same verdict
    again = run("--candidate", "greedy", "--baseline", "random", "--elo0", 0, "--elo1", 10,
                "--max-games", 2000, "--out", folder, "--no-report")
    assert again.exit_code == 0, again.output
    assert lines(again)[-1] == out[-1]
    assert lines(again)[-2].startswith(f"{folder}: {stored} games stored (0 played now)")


def test_a_bot_against_itself_does_not_accept_h1(tmp_path):
    result = run("--candidate", "random", "--baseline", "random", "--elo1", 200, "--max-games",
                 400, "--seed", 5, "--workers", 1, "--out", tmp_path / "aa", "--quiet",
                 "--no-report")
    assert result.exit_code == 0, result.output
    assert len(lines(result)) == 1  # --quiet: the verdict only
    assert lines(result)[0].startswith("H0 accepted: the candidate is not shown to be at least 200 "
                                       "Elo stronger than the baseline")
    assert "after 30 games (15 blocks)" in lines(result)[0]  # the earliest decision
    assert load_config(tmp_path / "aa")["tournament"]["entrants"] == ["random#1", "random#2"]


@pytest.mark.slow
def test_undecided_then_resumed_with_a_larger_cap(tmp_path):
    folder = tmp_path / "cap"
    common = ("--candidate", "random", "--baseline", "random", "--elo1", 50, "--seed", 11,
              "--workers", 1, "--no-report")
    first = run(*common, "--max-games", 40, "--out", folder, "--quiet")
    assert first.exit_code == 0, first.output
    assert lines(first) == [lines(first)[0]]
    assert lines(first)[0].startswith("undecided after 40 games (20 blocks): LLR ")
    assert "within [-2.94, 2.94]" in lines(first)[0]
    # --resume keeps the stored test; --max-games may raise its cap
    resumed = run("--resume", folder, "--max-games", 400, "--workers", 2, "--no-report")
    assert resumed.exit_code == 0, resumed.output
    assert "; 40 games stored" in lines(resumed)[0]
    assert lines(resumed)[-1].startswith("H0 accepted: the candidate is not shown to be at least "
                                         "50 Elo stronger than the baseline")
    assert "after 80 games (40 blocks)" in lines(resumed)[-1]
    uninterrupted = run(*common, "--max-games", 400, "--out", tmp_path / "whole", "--quiet")
    assert lines(uninterrupted) == lines(resumed)[-1:]
    assert store.load_sprt(folder).equals(store.load_sprt(tmp_path / "whole"))


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sprt") / "stored"
    result = run("--candidate", "greedy", "--baseline", "random", "--max-games", 60, "--seed", 1,
                 "--workers", 1, "--out", folder, "--quiet", "--no-report")
    assert result.exit_code == 0, result.output
    return folder


BASE = ("--candidate", "greedy", "--baseline", "random")


@pytest.mark.slow
def test_the_report_states_the_verdict_and_counts_only_the_games_the_test_counted(stored,
                                                                                  tmp_path):
    """60 games stored, then a cap of 40: the test counts 20 blocks; the page says so, in the
    words of the command's last line, and its standings hold those 40 games, not the 60."""
    folder = tmp_path / "capped"
    shutil.copytree(stored, folder)
    result = run("--resume", folder, "--max-games", 40, "--no-report")
    assert result.exit_code == 0, result.output
    verdict = lines(result)[-1]
    assert verdict.startswith("undecided after 40 games (20 blocks): LLR ")
    page = " ".join(write_report(folder, n_boot=20).read_text().split())
    assert html.escape(verdict, quote=False) in page
    assert "Undecided</strong>: is the candidate <strong>greedy</strong> more than 0 Elo " \
           "stronger than the baseline <strong>random</strong>" in page
    assert "count the 40 games of the test; 20 more are stored beyond the blocks counted" in page
    context = build_context(folder, n_boot=20)
    assert [row["seats"] for row in context["standings"]] == [40, 40]
    assert context["n_games"] == 60  # the header still counts every stored game


@pytest.mark.parametrize("args, needle", [
    (("--candidate", "nobot", "--baseline", "random"), "nobot"),
    (("--candidate", "greedy", "--baseline", "random:depth=3"), "depth"),
    (("--candidate", "greedy"), "--baseline"),
    (BASE + ("--elo0", 10, "--elo1", 10), "--elo1 must be greater than --elo0"),
    (BASE + ("--elo0", 5, "--elo1", -5), "--elo1 must be greater than --elo0"),
    (BASE + ("--elo1", "abc"), "--elo1 expects a number"),
    (BASE + ("--elo1", "nan"), "--elo1 must be a finite number"),
    (BASE + ("--elo1", "1e308"), "--elo0 and --elo1 must lie within +-1000 and at least 0.1 apart"),
    (BASE + ("--elo0", 0, "--elo1", "0.0000001"), "at least 0.1 apart"),
    (BASE + ("--alpha", 0.7), "--alpha is an error rate strictly between 0 and 0.5"),
    (BASE + ("--alpha", 0), "--alpha is an error rate"),
    (BASE + ("--beta", 0.5), "--beta is an error rate"),
    (BASE + ("--beta", -0.1), "--beta is an error rate"),
    (BASE + ("--players", 5), "--players: a table has 2, 3 or 4 players, not 5"),
    (BASE + ("--players", "2,4"), "one table size"),
    (BASE + ("--max-games", 0), "--max-games must be positive"),
    (BASE + ("--workers", 0), "--workers must be positive"),
    (BASE + ("--variant", "duel", "--players", 3), "impossible rules"),
    (("--resume", "{stored}", "--elo1", 20), "--resume DIR continues the stored test: drop --elo1"),
    (("--resume", "{missing}"), "no tournament in"),
    (BASE + ("--elo1", 20, "--out", "{stored}"), "holds another SPRT: sprt.elo1: 10.0 (stored) "
                                                 "vs 20.0 (now)"),
    (("--candidate", "random", "--baseline", "random", "--out", "{stored}"),
     "holds another SPRT: sprt.baseline: random (stored) vs random#2 (now) (and "),
])
def test_bad_input_is_one_line_and_exit_2(stored, tmp_path, args, needle):
    before = snapshot(stored)
    args = [str(a).format(stored=stored, missing=tmp_path / "missing") for a in args]
    result = run(*args, "--no-report", *([] if "--workers" in args else ["--workers", "1"]))
    assert result.exit_code == 2, result.output
    out = result.output.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("Error: ") and needle in out[0], out
    assert snapshot(stored) == before  # a refused command changes nothing


def test_a_run_tournament_is_not_an_sprt(tmp_path):
    folder = tmp_path / "run"
    played = CliRunner().invoke(main, ["run", "--bots", "greedy,random", "--games", "4", "--seed",
                                       "1", "--workers", "1", "--out", str(folder), "--quiet",
                                       "--no-report"])
    assert played.exit_code == 0, played.output
    for args in (BASE + ("--out", folder), ("--resume", folder)):
        result = run(*args, "--workers", 1)
        assert result.exit_code == 2, result.output
        assert "not an SPRT" in result.output and len(result.output.strip().splitlines()) == 1


def test_run_resume_refuses_an_sprt(stored):
    result = CliRunner().invoke(main, ["run", "--resume", str(stored), "--no-report"])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (f"Error: {stored} holds an SPRT: continue it with kdtourney "
                                     f"sprt --resume {stored}")


@pytest.mark.slow
def test_ctrl_c_then_resume_reaches_the_uninterrupted_decision(tmp_path):
    import sys

    bots = write_bot(tmp_path / "bots", "dawdler", dawdler(0.002))
    # elo1 60: decided after 19 blocks (38 games)
    args = ["sprt", "--candidate", "greedy", "--baseline", "dawdler", "--elo1", "60",
            "--max-games", "400", "--seed", "4", "--bots-dir", str(bots), "--workers", "1",
            "--no-report"]
    folder = tmp_path / "cut"
    status, out, err = interrupt_when(  # once a dozen games are stored
        [Path(sys.executable).parent / "kdtourney", *args, "--out", folder],
        lambda: stored_games(folder) >= 12)
    assert status == 130, (out, err)
    assert err.startswith("interrupted: no decision yet after ") and \
        err.strip().endswith(f"continue with: kdtourney sprt --resume {folder}"), err
    cut = len(store.load_games(folder))
    assert 12 <= cut < 38  # interrupted before the decision
    resumed = run("--resume", folder, "--workers", 2, "--no-report")  # bots folder from the store
    assert resumed.exit_code == 0, resumed.output
    now = len(store.load_games(folder))
    assert f"{folder}: {now} games stored ({now - cut} played now)" in resumed.stdout
    whole = run(*args[1:], "--out", tmp_path / "whole", "--quiet")
    assert whole.exit_code == 0, whole.output
    assert lines(resumed)[-1] == lines(whole)[-1] and lines(whole)[-1].startswith("H1 accepted")
    assert store.load_sprt(folder).equals(store.load_sprt(tmp_path / "whole"))


@pytest.mark.slow
def test_an_isolated_sprt_with_a_bot_in_its_own_process(tmp_path):
    folder = write_fake_bots(tmp_path / "bots", ["first-legal"], at=-1)
    result = run("--candidate", "first-legal", "--baseline", "random", "--isolate",
                 "--bots-dir", folder, "--max-games", 8, "--seed", 2, "--workers", 1,
                 "--move-time-limit", 5, "--out", tmp_path / "t", "--no-report")
    assert result.exit_code == 0, result.output
    assert lines(result)[-1].startswith("undecided after 8 games (4 blocks)")
    assert load_config(tmp_path / "t")["play"]["isolate"] is True
    assert store.load_faults(tmp_path / "t").empty
    # continued as it was played: isolated; a run that is not is refused
    before = snapshot(tmp_path / "t")
    refused = run("--resume", tmp_path / "t", "--move-time-margin", 1, "--no-report")
    assert refused.exit_code == 2 and refused.stderr == (
        f"Error: {tmp_path / 't'} was played with --move-time-margin 0.2, not 1: one store holds "
        "games played one way; drop --move-time-margin to go on as stored, or play under a new "
        "--out\n"), refused.output
    assert snapshot(tmp_path / "t") == before


def test_a_decided_test_refuses_new_code(tmp_path):
    bots = write_bot(tmp_path / "bots", "mine", MINE)
    folder = tmp_path / "t"
    args = ("--candidate", "mine", "--baseline", "random", "--elo1", 200, "--max-games", 400,
            "--seed", 5, "--bots-dir", bots, "--workers", 1, "--out", folder, "--no-report")
    first = run(*args, "--quiet")
    assert first.exit_code == 0 and lines(first)[0].startswith("H0 accepted"), first.output
    before = snapshot(folder)
    (bots / "mine.py").write_text(MINE.replace('Random, from', 'Random (better now), from'))
    for again in (args, ("--resume", folder, "--no-report")):
        result = run(*again)
        assert result.exit_code == 2, result.output
        out = result.output.strip().splitlines()
        assert len(out) == 1 and out[0].startswith("Error: mine (") and \
            "its code changed since the games stored in" in out[0], out
        assert snapshot(folder) == before
