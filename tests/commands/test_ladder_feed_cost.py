"""A ladder meant to run for days reads its history once, when it starts: a chunk's matchmaking,
standing and storing issue no query that reads the stored games, results or blocks beyond the
chunk's own (its cost per chunk cannot grow with the games stored). The real ladder over a game
service whose games take no time (tests/ladder_support.py); the store's SQL statements traced."""

from __future__ import annotations

import re
import sqlite3

import pytest
from ladder_support import instant_games, play

# what a chunk may say to the store once the ladder has started: record its blocks (checking the
# chunk's own range), store each game in its own transaction, and at the end the meta's count
PER_CHUNK = re.compile(
    r"BEGIN IMMEDIATE|COMMIT"
    r"|INSERT INTO (games|results|faults|blocks) .*"
    r"|SELECT block, first_game, n_players, seats, entrants FROM blocks WHERE block BETWEEN \d+ "
    r"AND \d+", re.S)
AT_THE_END = re.compile(r"SELECT key, value FROM config|INSERT OR REPLACE INTO config .*", re.S)


@pytest.mark.process
def test_a_chunk_reads_nothing_of_the_history(tmp_path, monkeypatch):
    folder = tmp_path / "ladder"
    with instant_games(monkeypatch):
        play(folder, 400, entrants=6)  # the history a resumed ladder starts from
        statements, chunks = [], []
        connect = sqlite3.connect

        def traced(*args, **kwargs):
            conn = connect(*args, **kwargs)
            conn.set_trace_callback(lambda sql: statements.append((conn, sql)))
            return conn

        monkeypatch.setattr(sqlite3, "connect", traced)
        outcome = play(folder, 800, entrants=6,
                       after_chunk=lambda _: chunks.append(len(statements)))
    assert outcome.stored == 800 and outcome.chunks == len(chunks) >= 10
    started = statements[:chunks[0]]
    assert any("FROM results" in sql for _, sql in started)  # the history, read once
    later = statements[chunks[0]:]
    assert {conn for conn, _ in later} == {later[0][0]}  # no store opened to read it again
    assert [sql for _, sql in later if not PER_CHUNK.fullmatch(sql)
            and not AT_THE_END.fullmatch(sql)] == []
    assert sum(1 for _, sql in later if sql.startswith("INSERT INTO games")) == 400
    assert sum(1 for _, sql in later if AT_THE_END.fullmatch(sql)) <= 2
