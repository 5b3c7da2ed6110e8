"""Stores written by kdtourney before the `blocks` and `sessions` tables (schema 1) still read
(report, export, ratings, replay) and resume: a run, an SPRT, a tune (one finished, one killed by
SIGKILL in the middle of a batch) and a ladder, each made by that kdtourney (tests/data/old_stores,
made with the commands in tests/data/old_stores/README.md)."""

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdtourney import store
from kdtourney.cli import main
from kdtourney.registry import BotRegistry
from kdtourney.report.html import write_report
from kdtourney.report.pool import rating_list
from kdtourney.terminal.replay import replay_text
from kdtourney.tournament.tune import Tune

OLD = Path(__file__).parent.parent / "data" / "old_stores"
TUNE_BOTS = Path(__file__).parent.parent / "data" / "tune_bots"
KINDS = ("run", "sprt", "tune", "tune_killed", "ladder")


def copy(kind, tmp_path) -> Path:
    folder = tmp_path / kind
    shutil.copytree(OLD / kind, folder)
    built_in_code_of_today(folder)
    return folder


def built_in_code_of_today(folder):
    """Record today's identity for the built-in bots of an old store: a built-in bot's identity
    covers the engine files it imports, which have changed since these stores were made, and a
    resume would (rightly) refuse, or a ladder take a new version; these tests are about the
    store's layout, not the code check."""
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    with sqlite3.connect(folder / store.STORE_FILE) as conn:
        for entrant, identity in conn.execute("SELECT entrant, identity FROM entrants").fetchall():
            if json.loads(identity).get("origin") != "built-in":
                continue
            now = registry.identity(entrant)
            conn.execute("UPDATE entrants SET digest = ?, identity = ? WHERE entrant = ?",
                         (now["digest"], json.dumps(now, sort_keys=True), entrant))
            if sql(folder, "SELECT name FROM sqlite_master WHERE name = 'ladder_entrants'"):
                conn.execute("UPDATE ladder_entrants SET digest = ? WHERE label = ?",
                             (now["digest"], entrant))


def sql(folder, query, *args):
    with sqlite3.connect(folder / store.STORE_FILE) as conn:
        return conn.execute(query, args).fetchall()


def forget(folder, first_game):
    """The store as a kill -9 leaves it: the games from `first_game` on never stored."""
    with sqlite3.connect(folder / store.STORE_FILE) as conn:
        for table in ("results", "faults", "games"):
            conn.execute(f"DELETE FROM {table} WHERE game >= ?", (first_game,))


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def played(folder):
    """{game: (deal seeds, [(seat, entrant, score, rank)])} of every stored game."""
    games = {g: [json.loads(s)] for g, s in sql(folder, "SELECT game, deal_seeds FROM games")}
    for g, seat, entrant, score, rank in sql(folder, "SELECT game, seat, entrant, score, rank "
                                                     "FROM results ORDER BY game, seat"):
        games[g].append((seat, entrant, score, rank))
    return games


@pytest.mark.parametrize("kind", KINDS)
def test_an_old_store_reads_as_it_is(kind, tmp_path):
    folder = copy(kind, tmp_path)
    before = (folder / store.STORE_FILE).read_bytes()
    config = store.load_config(folder)
    assert config["schema_version"] == 1
    blocks = store.load_blocks(folder)
    games = store.load_games(folder, ["game", "block", "arrangement", "deal_seeds"])
    # every stored game's block, with the deal it was played on and who sat where
    by_block = blocks.set_index("block")
    for g in games.itertuples():
        assert json.loads(g.deal_seeds) == by_block.loc[g.block, "deal_seeds"]
        assert by_block.loc[g.block, "first_game"] + g.arrangement == g.game
    seated = store.load_results(folder, ["game", "seat", "entrant", "block"])
    for r in seated.itertuples():
        b = by_block.loc[r.block]
        n = b["n_players"]
        assert b["seats"][(r.seat - (r.game - b["first_game"])) % n] == r.entrant
    # its fixed settings: a ladder's without a chunk's entrants, a tune's without a batch's
    tournament = config["tournament"]
    if kind == "ladder":
        assert tournament["entrants"] == [] and tournament["format"] == "ladder"
    if kind.startswith("tune"):
        assert tournament["entrants"] == ["theta+", "theta-"]
    assert write_report(folder, n_boot=50).is_file()
    assert invoke("export", folder, "--table", "blocks", "-o", tmp_path / "b.csv").output \
        .startswith(f"{tmp_path / 'b.csv'}: {len(blocks)} rows")
    invoke("export", folder, "-o", tmp_path / "r.csv")
    assert replay_text(folder, 1).startswith(f"game 1 of {folder}: block 0, arrangement 1")
    if not kind.startswith("tune"):  # a tune's folder is left out of ratings: below
        assert {e.label for e in rating_list([folder], n_boot=20).rated} == {"greedy", "random"}
    assert len(store.load_sessions(folder)) >= 1
    # reading wrote nothing
    assert (folder / store.STORE_FILE).read_bytes() == before


def test_rating_an_old_tune_folder_says_it_is_left_out(tmp_path):
    folder = copy("tune", tmp_path)
    with pytest.raises(Exception, match="nothing to rate") as caught:
        rating_list([folder], n_boot=20)
    assert any("a tune" in line for line in caught.value.notes)


def test_replay_of_an_old_tune_game_shows_the_values_its_block_played(tmp_path):
    folder = copy("tune_killed", tmp_path)
    tune = Tune.from_dict(store.load_config(folder)["tune"])
    table = store.load_tune_table(folder)
    for game in (2, 3):  # block 1: iteration 2
        it = table[table["k"] == 2].iloc[0]
        text = replay_text(folder, game)
        assert f"theta+ ({tune.spec(it['plus'])})" in text.splitlines()[1]
        assert f"theta- ({tune.spec(it['minus'])})" in text.splitlines()[1]


@pytest.mark.process
def test_an_old_run_resumes_the_games_it_lacks_as_they_were(tmp_path):
    folder = copy("run", tmp_path)
    original = played(folder)
    forget(folder, 5)
    invoke("run", "--resume", folder, "--no-report", "--workers", 1)
    assert played(folder) == original
    config = store.load_config(folder)
    assert config["schema_version"] == store.SCHEMA_VERSION == 2
    assert config["tournament"] == store.load_config(OLD / "run")["tournament"]
    assert len(store.load_blocks(folder)) == 4
    sessions = store.load_sessions(folder)
    assert len(sessions) == 2 and sessions["started"].iloc[-1] > sessions["started"].iloc[0]


@pytest.mark.process
def test_an_old_sprt_resumes_under_a_new_cap_recorded_as_its_own_session(tmp_path):
    folder = copy("sprt", tmp_path)
    original = played(folder)
    forget(folder, 10)
    invoke("sprt", "--resume", folder, "--max-games", 16, "--no-report", "--workers", 1)
    now = played(folder)
    assert {g: now[g] for g in original} == original and len(now) == 16
    # the tournament as it was made; the cap in the session's row
    assert store.load_config(folder)["tournament"] == store.load_config(OLD / "sprt")["tournament"]
    assert store.load_sessions(folder)["games"].tolist() == [12, 16]
    assert store.load_blocks(folder)["block"].tolist() == list(range(8))


@pytest.mark.process
def test_an_old_tune_killed_in_a_batch_finishes_as_an_uninterrupted_one(tmp_path):
    folder = copy("tune_killed", tmp_path)
    assert sql(folder, "SELECT COUNT(*) FROM games")[0][0] == 7  # killed in its second batch
    invoke("tune", "--resume", folder, "--bots-dir", TUNE_BOTS, "--no-report", "--workers", 1)
    whole = OLD / "tune"
    assert played(folder) == played(whole)
    columns = "k, batch, theta, signs, plus, minus, result, after"
    assert sql(folder, f"SELECT {columns} FROM tune") == sql(whole, f"SELECT {columns} FROM tune")
    # every block records the values it played, as the finished tune's blocks imply
    assert store.load_blocks(folder)[["block", "seats", "entrants", "deal_seeds"]].equals(
        store.load_blocks(whole)[["block", "seats", "entrants", "deal_seeds"]])
    assert store.load_config(folder)["tournament"]["entrants"] == ["theta+", "theta-"]


@pytest.mark.process
def test_an_old_ladder_resumes_its_scheduled_blocks_first(tmp_path):
    folder = copy("ladder", tmp_path)
    original = played(folder)
    before = store.load_blocks(folder)
    forget(folder, 10)  # block 5 scheduled, its games never stored
    invoke("ladder", "--resume", folder, "--games", 16, "--workers", 1)
    now = played(folder)
    assert {g: now[g] for g in original} == original and len(now) >= 16
    assert not sql(folder, "SELECT name FROM sqlite_master WHERE name = 'ladder_blocks'")
    after = store.load_blocks(folder)
    kept = after[after["block"] < len(before)].reset_index(drop=True)
    assert kept[["block", "seats", "entrants", "deal_seeds"]].equals(
        before[["block", "seats", "entrants", "deal_seeds"]])
    assert len(after) > len(before)


def test_a_copied_ladder_counts_once_in_ratings_as_a_copied_run_does(tmp_path):
    for kind in ("ladder", "run"):
        folder = copy(kind, tmp_path / "a")
        shutil.copytree(folder, tmp_path / "b" / kind)
    listed = rating_list([tmp_path / "a", tmp_path / "b"], n_boot=20)
    assert len(listed.sources) == 2 and listed.n_games == 8 + 12
    assert sorted(reason.split(" (")[0] for _, reason in listed.skipped) == [
        f"the same games as {tmp_path / 'a' / 'ladder'}",
        f"the same games as {tmp_path / 'a' / 'run'}"]
