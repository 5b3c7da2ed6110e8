"""`kdtourney ratings`: one rating list over many tournament folders (kdtourney.report.pool).

Statistics on synthetic stores with known strengths (tests/pool_support.py, written through the
store API); code identities end to end with tournaments played by the arena.
"""

from __future__ import annotations

import datetime
import html
import math
import re
import shutil

import numpy as np
import pytest
from arena_support import MINE, write_bot
from click.testing import CliRunner
from pool_support import START, simulate, write_store

from kdtourney.cli import main
from kdtourney.errors import UserError
from kdtourney.registry import BotRegistry
from kdtourney.report.fmt import fmt_elo
from kdtourney.report.page import name_tokens
from kdtourney.report.pool import PoolError, rating_list
from kdtourney.stats import ratings
from kdtourney.store import load_results, open_store, store_path

N_BOOT = 200


def ratings_cli(*args):
    return CliRunner().invoke(main, ["ratings", *[str(a) for a in args]])


def by_name(found):
    return {e.name: e for e in found.entrants}


def test_two_tournaments_sharing_an_entrant_rate_as_one_tournament_with_all_games(tmp_path):
    a = simulate(tmp_path / "a", {"shared": 0, "strong": 300, "weak": -150}, blocks=150, seed=1)
    b = simulate(tmp_path / "b", {"shared": 0, "middle": 130, "poor": -350}, blocks=150, seed=2,
                 sprt=True)
    # the same games as one tournament: b's blocks after a's
    write_store(tmp_path / "one", a + [dict(g, block=g["block"] + 150) for g in b],
                ["shared", "strong", "weak", "middle", "poor"], players=2)
    found = rating_list([tmp_path / "a", tmp_path / "b"], n_boot=N_BOOT)
    single = ratings.bootstrap_elo(load_results(tmp_path / "one"), n_boot=N_BOOT)

    assert [e.name for e in found.rated] == list(single.index)
    assert [e.name for e in found.rated] == ["strong", "middle", "shared", "weak", "poor"]
    for e in found.rated:  # the same model, the same blocks: the same numbers
        assert (e.elo, e.lo, e.hi) == pytest.approx(tuple(single.loc[e.name, ["elo", "lo", "hi"]]))
    assert by_name(found)["shared"].folders == [0, 1] and by_name(found)["shared"].games == 400
    assert [s.kind for s in found.sources] == ["run", "sprt"]
    assert found.n_blocks == 300 and found.n_games == 600 and not found.notes()


def test_ratings_recover_known_strengths_across_folders_and_table_sizes(tmp_path):
    truth = {"a": 0.0, "b": 150.0, "c": 300.0, "d": -200.0, "e": 60.0}
    simulate(tmp_path / "ab", {k: truth[k] for k in "ab"}, blocks=300, seed=3)
    simulate(tmp_path / "bce", {k: truth[k] for k in "bce"}, blocks=300, seed=4)
    simulate(tmp_path / "cda", {k: truth[k] for k in "cda"}, blocks=300, seed=5)
    simulate(tmp_path / "four", truth, blocks=150, players=4, seed=6)

    two = rating_list([tmp_path], n_boot=N_BOOT)
    assert two.players == (2,) and [f for f, _ in two.skipped] == [str(tmp_path / "four")]
    both = rating_list([tmp_path], players=(2, 4), n_boot=N_BOOT)
    assert not both.skipped and len(both.sources) == 4
    mean = np.mean(list(truth.values()))
    covered = 0
    for found in (two, both):
        assert [e.name for e in found.rated] == sorted(truth, key=truth.get, reverse=True)
        for e in found.rated:
            true = truth[e.name] - mean  # the list is anchored at mean 0
            # within 40 Elo and within about 4 standard errors (the interval spans about 3.9)
            assert abs(e.elo - true) < min(40, e.hi - e.lo), (e.name, e.elo, true)
            covered += e.lo <= true <= e.hi
    assert covered >= 8  # of 10 intervals at 95% (fewer: about 1% of the time when they are right)
    # more games, narrower intervals
    width = {e.name: e.hi - e.lo for e in two.rated}
    assert all(e.hi - e.lo < width[e.name] for e in both.rated)


def test_anchor_and_its_errors(tmp_path):
    simulate(tmp_path / "t", {"greedy": 0, "random": -300}, blocks=30)
    found = by_name(rating_list([tmp_path], anchor=("greedy", 1500.0), n_boot=N_BOOT))
    mean0 = by_name(rating_list([tmp_path], n_boot=N_BOOT))
    assert found["greedy"].elo == pytest.approx(1500.0)
    assert found["random"].elo - 1500.0 == pytest.approx(mean0["random"].elo - mean0["greedy"].elo)
    assert mean0["random"].elo + mean0["greedy"].elo == pytest.approx(0.0)
    result = ratings_cli(tmp_path, "--anchor", "greedy=1500", "--out", tmp_path / "page")
    assert result.exit_code == 0, result.output
    assert re.search(r"greedy\s+\+1500 \[\+1500, \+1500\]", result.output)
    for anchor, needle in (("nobody=0", "'nobody' is not in the list (rated: greedy, random)"),
                           ("greedy", "NAME=VALUE")):
        result = ratings_cli(tmp_path, "--anchor", anchor, "--out", tmp_path / "page")
        assert result.exit_code == 2 and result.output.strip().splitlines() == [
            result.output.strip()] and needle in result.output, result.output


def test_changed_code_splits_an_entrant_unchanged_code_merges_it(tmp_path):
    bots = write_bot(tmp_path / "bots", "mine", MINE)

    def tournament(folder, elo, seed):  # stored with the identities a run records
        registry = BotRegistry([bots], env=False, cwd=False)
        simulate(tmp_path / "runs" / folder, elo, blocks=12, seed=seed,
                 start=START + datetime.timedelta(days=seed),
                 identities={e: registry.identity(e) for e in elo})

    tournament("old", {"mine": 0, "random": -300}, 1)
    tournament("again", {"mine": 0, "greedy": 100}, 2)
    (bots / "mine.py").write_text(MINE + "\n\ndef helper():\n    return 1\n")  # edited
    tournament("new", {"mine": 200, "random": -300, "greedy": 100}, 3)

    result = ratings_cli(tmp_path / "runs", "--out", tmp_path / "page")
    assert result.exit_code == 0, result.output
    found = rating_list([tmp_path / "runs"], n_boot=N_BOOT)
    entrants = by_name(found)
    edited, first = entrants["mine"], [e for e in found.entrants if e.name.startswith("mine@")]
    assert len(first) == 1 and first[0].digest != edited.digest
    assert first[0].name == f"mine@{first[0].digest[:6]}"  # the old code shows its version
    names = [str(s.folder.name) for s in found.sources]
    assert [names[i] for i in first[0].folders] == ["again", "old"]  # unchanged code: merged
    assert first[0].games == 48 and [names[i] for i in edited.folders] == ["new"]
    assert edited.games == 16  # two of new's three tables
    assert [names[i] for i in entrants["random"].folders] == ["new", "old"]  # built-ins too
    assert [names[i] for i in entrants["greedy"].folders] == ["again", "new"]
    registry = BotRegistry([bots], env=False, cwd=False)
    for name in ("greedy", "random"):  # a built-in's digest: the kdtourney code its module uses
        digest = entrants[name].digest
        assert digest == registry.identity(name)["digest"][:len(digest)]
    assert entrants["greedy"].digest != entrants["random"].digest
    for e in (edited, first[0]):
        assert re.search(rf"^ *\d+ +{re.escape(e.name)} .*{e.digest}", result.output, re.M)


def test_unknown_code_pools_by_name_and_never_with_known_code(tmp_path):
    elo = {"greedy": 0, "random": -300}
    simulate(tmp_path / "old1", elo, blocks=10, seed=1)  # before code was recorded: unknown
    simulate(tmp_path / "old2", elo, blocks=10, seed=2)
    simulate(tmp_path / "resumed", elo, blocks=10, seed=3, recorded_after=6)
    found = rating_list([tmp_path], n_boot=N_BOOT)
    entrants = by_name(found)
    assert set(entrants) == {"greedy", "random", "greedy@unknown", "random@unknown"}
    assert entrants["greedy@unknown"].digest is None
    assert entrants["greedy@unknown"].games == 20 + 20 + 6  # and the resumed store's first 6
    assert entrants["greedy"].games == 14 and entrants["greedy"].digest
    # a name that never played with known code keeps its name
    only_old = rating_list([tmp_path / "old1", tmp_path / "old2"], n_boot=N_BOOT)
    assert {e.name for e in only_old.rated} == {"greedy", "random"}
    assert all(e.games == 40 and e.digest is None for e in only_old.rated)
    assert "unknown" in only_old.sources[0].code


def write_folders(root):
    """A tree of tournament folders with every kind of problem, each in its own folder."""
    two = simulate(root.parent / "scratch" / "2", {"greedy": 0, "random": -300}, blocks=4)
    four = simulate(root.parent / "scratch" / "4", {"greedy": 0, "random": -300}, blocks=2,
                    players=4)
    write_store(root / "week1" / "mixed", two + [dict(g, block=g["block"] + 4) for g in four],
                ["greedy", "random"], players=[2, 4])  # as run --players 2,4 (blocks apart)
    simulate(root / "week1" / "a", {"greedy": 0, "random": -300, "mine": 100}, blocks=20,
             seed=1, failed_blocks=2)
    simulate(root / "week1" / "b", {"greedy": 0, "mine": 150}, blocks=20, seed=2)
    simulate(root / "week2" / "four", {"greedy": 0, "random": -300}, blocks=5, players=4)
    simulate(root / "week2" / "harmony", {"greedy": 0, "random": -300}, blocks=5,
             rules={"harmony": True})
    simulate(root / "week2" / "island", {"x": 0, "y": 50}, blocks=5)
    simulate(root / "week2" / "alone", {"solo": 0}, blocks=5)  # self-play only
    simulate(root / "week2" / "empty", {"greedy": 0, "random": 0}, blocks=0)
    shutil.copytree(root / "week1" / "b", root / "week2" / "copy-of-b")
    shutil.copytree(root / "week1" / "b", root / "week2" / "tuned")
    with open_store(root / "week2" / "tuned") as st:  # as kdtourney tune writes its folder
        st.set_config("tune", {"params": []})
    (root / "week2" / "corrupt").mkdir()
    store_path(root / "week2" / "corrupt").write_bytes(b"SQLite format 3\0" + b"\xff" * 200)
    (root / "week2" / "foreign").mkdir()
    import sqlite3
    with sqlite3.connect(store_path(root / "week2" / "foreign")) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_two_sandboxed_runs_with_one_seed_count_twice_and_a_copy_once(tmp_path):
    from kdtp_support import SANDBOX_ALLOW, write_fake_bots

    from kdtourney.commands.run import run_tournament
    from kdtourney.match.settings import PlaySettings
    from kdtourney.tournament.definition import prepare

    # two KDTP bots that start in milliseconds, even sandboxed
    registry = BotRegistry([write_fake_bots(tmp_path / "bots", ["plain", "steady"])], env=False,
                           cwd=False, entry_points=False)
    t = prepare(registry, bots="plain,steady", games=2, seed=1)
    for name in ("one", "two"):  # each store mixes its own secret into the seeds: other deals
        assert run_tournament(t, tmp_path / "runs" / name, registry, workers=1,
                              play=PlaySettings(sandbox=True,
                                                sandbox_allow=SANDBOX_ALLOW)).complete
    shutil.copytree(tmp_path / "runs" / "one", tmp_path / "runs" / "three")
    found = rating_list([tmp_path / "runs"], n_boot=N_BOOT)
    assert found.n_games == 4 and len(found.sources) == 2
    [(copy, reason)] = found.skipped
    assert copy == str(tmp_path / "runs" / "three")
    assert reason.startswith(f"the same games as {tmp_path / 'runs' / 'one'} ")


def test_games_played_another_way_are_other_games(tmp_path):
    simulate(tmp_path / "in-process", {"greedy": 0, "random": -300}, blocks=4, seed=3)
    shutil.copytree(tmp_path / "in-process", tmp_path / "isolated")
    with open_store(tmp_path / "isolated") as st:  # the same command with --isolate
        st.set_config("play", {"isolate": True, "margin": 0.2, "sandbox": False,
                               "bot_memory": 1024, "clock_rule": 2})
    assert rating_list([tmp_path], n_boot=N_BOOT).n_games == 16
    with open_store(tmp_path / "isolated") as st:  # a margin changes nothing without a clock
        st.set_config("play", {"isolate": False, "margin": 0.5, "sandbox": False,
                               "bot_memory": 1024, "clock_rule": 2})
    assert rating_list([tmp_path], n_boot=N_BOOT).n_games == 8


def test_every_folder_and_entrant_left_out_gets_one_line(tmp_path):
    root = tmp_path / "runs"
    write_folders(root)
    (root / "nothing").mkdir()
    result = ratings_cli(root, root / "week1" / "a", tmp_path / "missing", root / "nothing",
                         "--out", tmp_path / "page")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    expected = {
        "four": "4-player games (this list: 2-player; --players 2,4 pools them together)",
        "harmony": "other rules: harmony on (this list: harmony off)",
        "empty": "no games stored",
        "corrupt": "corrupt or not an SQLite database",
        "foreign": "not a kdtourney tournament",
        "copy-of-b": f"the same games as {root / 'week1' / 'b'} (the same tournament, seed, "
                     "code and play settings): counted once",
        "missing": "no such folder",
        "nothing": "no tournament in it",
        "tuned": "a tune: its theta+ and theta- play other values in every iteration",
    }
    assert f"{root / 'week1' / 'mixed'}: 8 of its 16 games pooled; left out: 4-player games " \
        "(this list: 2-player; --players 2,4 pools them together)" in lines
    for folder, reason in expected.items():
        hits = [line for line in lines if line.startswith("skipped ") and f"/{folder}" in line]
        assert len(hits) == 1 and reason in hits[0], (folder, hits)
    hits = [line for line in lines if line.startswith("unrated ")]
    assert hits == ["unrated solo: no game against another entrant"]
    # x and y met only each other: rated, as a group of their own
    assert "group 2 (x, y): no game connects it to group 1, so its Elo is on a scale of its own" \
        in lines or "group 2 (y, x): no game connects it to group 1, so its Elo is on a scale " \
        "of its own" in lines
    assert "Traceback" not in result.output
    assert lines[-1] == (f"{tmp_path / 'page' / 'index.html'}: 5 entrants rated from 94 games "
                         "in 4 folders; 9 skipped")  # 2 failed blocks of a are not rated
    refused = ratings_cli(root, "--out", root / "week1" / "a")
    assert refused.exit_code == 2 and "holds a tournament" in refused.output
    assert not (root / "week1" / "a" / "index.html").exists()
    found = rating_list([root], n_boot=N_BOOT)
    # a's last two blocks (greedy-random, greedy-mine; 2 games each) failed: not rated, counted
    assert {e.name: e.failed for e in found.rated} == {"greedy": 4, "random": 2, "mine": 2,
                                                       "x": 0, "y": 0}
    assert re.search(r"^ *2 +greedy +1 .* 4 *$", result.output, re.M)  # group, failed columns
    assert by_name(found)["greedy"].folders == [0, 1, 2]  # a, b and mixed's 2-player games
    assert [e.name for e in found.rated][:3] == ["mine", "greedy", "random"]
    assert [e.group for e in found.rated] == [1, 1, 1, 2, 2]
    assert all(np.isnan(e.elo) for e in found.entrants if e.unrated)


def test_every_connected_group_is_rated_not_only_the_largest(tmp_path):
    """A pair with many games and five bots connected among themselves by fewer: both groups are
    rated, each on its own scale, and no likelihood of superiority crosses them (the five were
    left unrated)."""
    simulate(tmp_path / "runs" / "pair", {"p1": 0, "p2": 100}, blocks=100, seed=1)
    five = {f"bot{k}": 50 * k for k in range(5)}
    simulate(tmp_path / "runs" / "five", five, blocks=20, seed=2)
    found = rating_list([tmp_path / "runs"], n_boot=N_BOOT)
    assert not [e for e in found.entrants if e.unrated]
    groups = {e.name: e.group for e in found.rated}
    assert groups == {"p1": 1, "p2": 1, **{name: 2 for name in five}}
    assert [e.name for e in found.rated][:2] == ["p2", "p1"]
    assert math.isclose(np.mean([e.elo for e in found.rated if e.group == 2]), 0, abs_tol=1e-6)
    assert np.isnan(found.los.loc["p1", "bot0"]) and 0 <= found.los.loc["bot4", "bot0"] <= 1
    result = ratings_cli(tmp_path / "runs", "--out", tmp_path / "page")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].endswith("7 entrants rated from 240 games in 2 folders")
    page = (tmp_path / "page" / "index.html").read_text()
    assert 'id="groups"' in page and "<strong>2 groups</strong>" in page


def test_exit_2_only_when_nothing_can_be_rated(tmp_path):
    root = tmp_path / "runs"
    write_folders(root)
    bad = [root / "week2" / n for n in ("four", "empty", "corrupt", "foreign", "alone")]
    result = ratings_cli(*bad, "--players", "3", "--out", tmp_path / "page")
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("Error: nothing to rate") and len(lines) == 6  # 5 + the error
    assert "Traceback" not in result.output and not (tmp_path / "page").exists()
    result = ratings_cli(root / "week2" / "alone", "--out", tmp_path / "page")
    assert result.exit_code == 2 and result.output.strip().splitlines() == [
        "unrated solo: no game against another entrant",
        "Error: nothing to rate: no game between two different entrants"]
    four = ratings_cli(root / "week2" / "four", "--out", tmp_path / "page")
    assert four.exit_code == 0, four.output  # alone, its 4-player games are the list
    with pytest.raises(PoolError):
        rating_list([tmp_path / "missing"])
    assert issubclass(PoolError, UserError)  # the command line's one-line error, exit 2


def test_page_shows_the_list_and_where_every_game_came_from(tmp_path):
    root = tmp_path / "runs"
    write_folders(root)
    evil = "<script>alert(1)</script>"
    simulate(root / "week3" / "evil", {"greedy": 0, evil: -100}, blocks=10)
    result = ratings_cli(root, "--out", tmp_path / "page")
    assert result.exit_code == 0, result.output
    page = (tmp_path / "page" / "index.html").read_text()
    for section in ("list-table", "unrated-table", "los-table", "elo-dates-plot",
                    "sources-table", "skipped-table"):
        assert f'id="{section}"' in page, section
    assert "default-src 'none'" in page and not re.search(r"<(?:link|img|iframe)\b", page)
    assert not re.search(r'(?:src|href)\s*=\s*["\']?\s*(?:https?:)?//', page)
    assert evil not in page and html.escape(evil, quote=False) in page
    assert len(re.findall(r"<script\b", page)) == 1  # the page's own
    # the terminal and the page show the same numbers
    found = rating_list([root], n_boot=1000)
    assert len(found.rated) == 6  # x and y too, a group of their own
    for e in found.rated:
        shown = re.escape(f"{e.elo:+.0f} [{e.lo:+.0f}, {e.hi:+.0f}]")
        assert re.search(rf" {re.escape(e.name)} +{e.group} +{shown}", result.output), e.name
        name = re.escape(str(name_tokens(e.name)))
        row = re.search(rf'</span>{name}</th>.*?<span class="est">(.*?)</span>'
                        r'<span class="ci">(.*?)</span>', page, re.S)
        assert row.groups() == (fmt_elo(e.elo), f"{fmt_elo(e.lo)} to {fmt_elo(e.hi)}"), e.name
    for folder in [s.folder for s in found.sources] + [f for f, _ in found.skipped]:
        assert f'<th scope="row">{html.escape(str(folder))}</th>' in page, folder
