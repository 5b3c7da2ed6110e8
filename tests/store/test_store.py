"""The SQLite store: schema, one transaction per game, refusing foreign files, pandas and export."""

import sqlite3
import sys

import pandas as pd
import pytest

from kdtourney import store
from kdtourney.store import Store, StoreError, open_store, writer
from kdtourney.store.schema import transaction

TOURNAMENT = {"entrants": ["a", "b"], "seed": 3, "games": 2}


def add(st, game, status="ok"):
    st.add_game(
        dict(game=game, block=game // 2, arrangement=game % 2, n_players=2, deal_seeds=[11 + game],
             status=status, duration=0.1, moves=[1001, 5, 676], error=None),
        [dict(game=game, seat=s, entrant="ab"[s], score=10 + s, rank=2 - s, win_share=float(s),
              margin=2 * s - 1, largest_territory=4, crowns=3, discards=0, fault=False,
              time_total=0.01, time_max=0.001, decisions=24) for s in range(2)],
        [dict(seat=0, entrant="a", kind="illegal", message="9999", call=7)]
        if status == "fault" else [])


def test_round_trip(tmp_path):
    with Store.create(tmp_path / "t", TOURNAMENT, {"name": "t"}) as st:
        add(st, 0)
        add(st, 1, "fault")
        assert st.done_games() == {0, 1} and st.count_games() == 2
        assert st.entrant_totals() == {"a": (2, 0.0, 0), "b": (2, 2.0, 0)}
    cfg = store.load_config(tmp_path / "t")
    assert cfg["application"] == "kdtourney" and cfg["schema_version"] == store.SCHEMA_VERSION
    assert cfg["tournament"] == TOURNAMENT and cfg["meta"]["name"] == "t"
    results = store.load_results(tmp_path / "t")
    assert list(results.columns) == list(store.RESULT_COLUMNS) + ["block", "n_players", "status"]
    assert results["fault"].dtype == bool and len(results) == 4
    games = store.load_games(tmp_path / "t")
    assert games["moves"][0] == "[1001,5,676]" and games["seed"].tolist() == [11, 12]
    faults = store.load_faults(tmp_path / "t")
    assert faults.to_dict("records") == [dict(game=1, seat=0, entrant="a", kind="illegal",
                                              message="9999", call=7, stderr=None)]
    with sqlite3.connect(store.store_path(tmp_path / "t")) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_faults_keep_the_stderr_of_bots_and_older_stores_get_the_column(tmp_path):
    with Store.create(tmp_path, TOURNAMENT, {}) as st:
        add(st, 0)
    with sqlite3.connect(store.store_path(tmp_path)) as conn:  # as a store made before the column
        conn.execute("ALTER TABLE faults DROP COLUMN stderr")
        conn.execute("INSERT INTO faults VALUES (0, 1, 'b', 'crash', 'old', NULL)")
    conn.close()
    assert store.load_faults(tmp_path)["stderr"].tolist() == [None]  # read: nothing changes
    with open_store(tmp_path) as st:  # opened to add games: the column is added
        st.add_game(dict(game=1, block=0, arrangement=1, n_players=2, deal_seeds=[12],
                         status="fault", duration=0.1, moves=[], error="x"), [],
                    [dict(seat=0, entrant="a", kind="crash", message="exited with status 1",
                          call=3, stderr="Traceback ...\nValueError: no")])
    stderr = store.load_faults(tmp_path)["stderr"]
    assert stderr.isna()[0] and stderr[1] == "Traceback ...\nValueError: no"


def test_a_failed_insert_stores_nothing_of_that_game(tmp_path):
    with Store.create(tmp_path, TOURNAMENT, {}) as st:
        add(st, 0)
        with pytest.raises(sqlite3.IntegrityError):
            add(st, 0)  # the same game twice
        assert st.count_games() == 1
    assert len(store.load_results(tmp_path)) == 2


def test_a_create_cut_short_leaves_no_store(tmp_path, monkeypatch):
    """A store appears whole or not at all: a create stopped midway (here Ctrl-C while its tables
    are written) leaves nothing that would refuse the next run in the folder."""
    def interrupted(*args):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(writer, "add_session", interrupted)
        with pytest.raises(KeyboardInterrupt):
            Store.create(tmp_path, TOURNAMENT, {})
    assert list(tmp_path.iterdir()) == []
    with Store.create(tmp_path, TOURNAMENT, {}) as st:
        assert st.tournament == TOURNAMENT


def test_of_two_creates_at_once_the_second_is_refused(tmp_path, monkeypatch):
    first = writer.add_session

    def other_process_first(*args):  # another run creates the store meanwhile
        monkeypatch.setattr(writer, "add_session", first)
        Store.create(tmp_path, dict(TOURNAMENT, seed=4), {}).close()
        return first(*args)

    monkeypatch.setattr(writer, "add_session", other_process_first)
    with pytest.raises(StoreError, match="already exists"):
        Store.create(tmp_path, TOURNAMENT, {})
    assert store.load_config(tmp_path)["tournament"]["seed"] == 4
    assert not list(tmp_path.glob("*.part*"))


def test_refuses_what_is_not_ours(tmp_path):
    with pytest.raises(StoreError, match="no tournament"):
        open_store(tmp_path)
    store.store_path(tmp_path).write_bytes(b"this is not a database at all" * 100)
    before = store.store_path(tmp_path).read_bytes()
    with pytest.raises(StoreError, match="corrupt or not an SQLite"):
        open_store(tmp_path)
    assert store.store_path(tmp_path).read_bytes() == before
    store.store_path(tmp_path).unlink()
    with sqlite3.connect(store.store_path(tmp_path)) as conn:
        conn.execute("CREATE TABLE config (key TEXT, value TEXT)")
        conn.execute("INSERT INTO config VALUES ('application', '\"other\"')")
    conn.close()
    with pytest.raises(StoreError, match="not a kdtourney tournament"):
        store.load_results(tmp_path)
    with pytest.raises(StoreError, match="newer|schema"):
        with sqlite3.connect(store.store_path(tmp_path)) as conn:
            conn.execute("UPDATE config SET value = '\"kdtourney\"'")
            conn.execute("INSERT INTO config VALUES ('schema_version', '99')")
        conn.close()
        open_store(tmp_path)


def test_export(tmp_path):
    with Store.create(tmp_path, TOURNAMENT, {}) as st:
        add(st, 0)
        add(st, 1, "fault")
    assert store.export_table(tmp_path, tmp_path / "r.csv") == 4
    back = pd.read_csv(tmp_path / "r.csv")
    assert list(back.columns) == list(store.load_results(tmp_path).columns) and len(back) == 4
    assert back["score"].tolist() == [10, 11, 10, 11]
    assert store.export_table(tmp_path, tmp_path / "g.parquet", "parquet", "games") == 2
    back = pd.read_parquet(tmp_path / "g.parquet")
    pd.testing.assert_frame_equal(back, store.load_games(tmp_path))
    with pytest.raises(StoreError, match="unknown table"):
        store.export_table(tmp_path, tmp_path / "x.csv", table="nope")


def test_parquet_without_pyarrow(tmp_path, monkeypatch):
    with Store.create(tmp_path, TOURNAMENT, {}) as st:
        add(st, 0)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(StoreError, match=r"pip install 'kdtourney\[parquet\]'"):
        store.export_table(tmp_path, tmp_path / "r.parquet", "parquet")
    assert not (tmp_path / "r.parquet").exists()


def test_a_reader_reads_one_state_while_games_are_stored(tmp_path):
    """Every table read through one reader (and every load_* of its folder in its thread, nested
    readers included) is of one state: a game stored meanwhile is in none of them."""
    with Store.create(tmp_path, TOURNAMENT, {}) as st:
        add(st, 0)
        with store.reader(tmp_path) as r:
            add(st, 1, "fault")
            assert r.count_games() == 1 and len(r.results()) == 2 and r.faults().empty
            assert store.load_games(tmp_path)["game"].tolist() == [0]
            with store.reader(tmp_path) as inner:
                assert inner is r
            assert r.game(1) is None
            game = r.game(0)
            assert game.row["seed"] == 11 and game.row["moves"] == "[1001,5,676]"
            assert [p["entrant"] for p in game.results] == ["a", "b"] and game.faults == []
        assert store.load_games(tmp_path)["game"].tolist() == [0, 1]
        assert store.load_faults(tmp_path)["kind"].tolist() == ["illegal"]


def test_a_reader_reads_the_columns_of_its_tables_only(tmp_path):
    with Store.create(tmp_path, TOURNAMENT, {}) as st:
        add(st, 0)
    assert store.load_games(tmp_path, ["game", "block"]).columns.tolist() == ["game", "block"]
    with pytest.raises(KeyError, match="no column"):
        store.load_games(tmp_path, ["COUNT(*) AS n"])
    with pytest.raises(StoreError, match="no tournament"):
        store.load_games(tmp_path / "nothing")


class CtrlCAfterBegin:
    """A connection on which a Ctrl-C lands just after BEGIN returns, before the `with` block."""

    def __init__(self, conn):
        self.conn, self.armed = conn, True

    def execute(self, sql, *args):
        cursor = self.conn.execute(sql, *args)
        if self.armed and sql.startswith("BEGIN"):
            self.armed = False
            raise KeyboardInterrupt
        return cursor

    @property
    def in_transaction(self):
        return self.conn.in_transaction


def test_a_transaction_cut_by_ctrl_c_before_its_block_never_blocks_the_next(tmp_path):
    conn = sqlite3.connect(tmp_path / "t.sqlite", isolation_level=None)
    conn.execute("CREATE TABLE t (x)")
    cut = CtrlCAfterBegin(conn)
    with pytest.raises(KeyboardInterrupt), transaction(cut):
        cut.execute("INSERT INTO t VALUES (1)")
    with transaction(cut):  # as the command's last write (its meta) does after Ctrl-C
        cut.execute("INSERT INTO t VALUES (2)")
    assert conn.execute("SELECT x FROM t").fetchall() == [(2,)]
