"""Reading a tournament store: one state of it, whatever is stored meanwhile.

    with reader(folder) as r:   r.config(), r.results(), r.games(), r.faults(), r.blocks(), ...
                                every table read in one read transaction (WAL keeps that state
                                while a command stores games), so what they hold agrees: a game
                                stored meanwhile is in none of them. Nested in one thread: the
                                outer reader.
    load_results(folder), load_games, load_faults, load_config, load_entrants, load_blocks,
    load_sessions, load_sprt, load_tune_table, load_ladder_entrants, load_incoming,
    failed_games: one table each, through the thread's reader of `folder` if one is open, else
    through a reader of their own.

Tables come as pandas DataFrames. StoreError (one line) for a missing, foreign or newer store, or a
table that cannot be read or decoded. Each table's columns: docs/commands.md.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import sqlite3
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from kdtourney.store.schema import (
    BLOCK_COLUMNS,
    BLOCK_JSON_COLUMNS,
    GAME_COLUMNS,
    LADDER_ENTRANT_COLUMNS,
    NOTE_COLUMNS,
    RESULT_COLUMNS,
    SESSION_COLUMNS,
    SPRT_COLUMNS,
    TUNE_COLUMNS,
    TUNE_JSON_COLUMNS,
    StoreError,
    checked_config,
    connect_read_only,
    encode_block,
    has_table,
    implied_blocks,
    implied_sessions,
    read_config,
    store_path,
)
from kdtourney.tournament.blocks import SCORED_COLUMNS, Incoming

if TYPE_CHECKING:  # pandas is imported where a table is read: worker processes never do, and
    import pandas as pd  # importing it would cost each of them most of a second

RESULT_GAME_COLUMNS = ("block", "n_players", "status")  # what `results` adds of each game


class StoredGame(NamedTuple):
    """One game as stored: its `games` row, its `results` rows and its `faults` rows (dicts, in
    seat order)."""

    row: dict
    results: list
    faults: list


def _reads(method):
    """A Reader method whose failure to read or decode a table is a StoreError."""
    @functools.wraps(method)
    def read(self, *args, **kwargs):
        import pandas as pd  # start-up time: only where a table is read

        try:
            return method(self, *args, **kwargs)
        except StoreError:
            raise
        except (sqlite3.Error, pd.errors.DatabaseError, ValueError) as exc:
            raise StoreError(f"cannot read {self.path}: {exc}") from None
    return read


class Reader:
    """One state of the store at `path`: a read-only connection in one read transaction, opened
    by `reader(folder)`. Its config is checked and read first, in that transaction."""

    def __init__(self, path):
        self.path = path
        self._conn = connect_read_only(path)
        try:
            self._conn.execute("BEGIN")  # the transaction reads from the first SELECT on
            self._config = checked_config(self._conn, path)
        except BaseException:
            self._conn.close()
            raise

    def close(self) -> None:
        self._conn.rollback()
        self._conn.close()

    def config(self) -> dict:
        """{'tournament': ..., 'meta': ..., 'application': ..., 'schema_version': ...}; a schema-1
        store's tournament as its fixed settings."""
        return copy.deepcopy(self._config)

    def _frame(self, sql: str, params=()) -> pd.DataFrame:
        import pandas as pd  # start-up time

        return pd.read_sql_query(sql, self._conn, params=params or None)

    @_reads
    def results(self, columns=None, blocks_from: int = 0) -> pd.DataFrame:
        """One row per player per game, ordered by game and seat: RESULT_COLUMNS plus `block`,
        `n_players` and `status` of the game (`fault` a bool). columns: only these of them
        (reading fewer is faster), default all; blocks_from: only the games of this block and
        later ones."""
        columns = tuple(columns or RESULT_COLUMNS + RESULT_GAME_COLUMNS)
        _known(columns, RESULT_COLUMNS + RESULT_GAME_COLUMNS)
        selected = ", ".join(("g." if c in RESULT_GAME_COLUMNS else "r.") + c for c in columns)
        where = f"WHERE g.block >= {int(blocks_from)} " if blocks_from else ""
        df = self._frame(f"SELECT {selected} FROM results r JOIN games g ON g.game = r.game "
                         f"{where}ORDER BY r.game, r.seat")
        if "fault" in df:
            df["fault"] = df["fault"].astype(bool)
        return df

    @_reads
    def games(self, columns=None, newest: int | None = None) -> pd.DataFrame:
        """One row per game, ordered by game; `moves` and `deal_seeds` stay JSON text. columns:
        only these (reading no moves is much faster), default all; newest: only the last this
        many games."""
        selected = "*"
        if columns:
            _known(columns, GAME_COLUMNS)
            selected = ", ".join(columns)
        if newest is None:
            return self._frame(f"SELECT {selected} FROM games ORDER BY game")
        return self._frame(f"SELECT * FROM (SELECT {selected} FROM games ORDER BY game DESC "
                           f"LIMIT {int(newest)}) ORDER BY game")

    @_reads
    def count_games(self) -> int:
        """The games stored."""
        return self._conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    @_reads
    def faults(self) -> pd.DataFrame:
        """One row per forfeit, ordered by game and seat (stderr None where the store has
        none)."""
        df = self._frame("SELECT * FROM faults ORDER BY game, seat")
        if "stderr" not in df:
            df["stderr"] = None
        return df

    @_reads
    def failed_games(self) -> pd.Series:
        """{entrant: games it sat in that could not be finished} (its 'failed' faults), entrants
        without any left out; named `failed`."""
        faults = self.faults()
        failed = faults[faults["kind"] == "failed"]
        return failed.groupby("entrant")["game"].nunique().rename("failed")

    @_reads
    def game(self, number: int) -> StoredGame | None:
        """Game `number` as stored (plain values, JSON text as stored), or None if it is not."""
        row = _rows(self._conn.execute("SELECT * FROM games WHERE game = ?", (number,)))
        if not row:
            return None
        return StoredGame(row[0], _rows(self._conn.execute(
            "SELECT * FROM results WHERE game = ? ORDER BY seat", (number,))), _rows(
            self._conn.execute("SELECT * FROM faults WHERE game = ? ORDER BY seat", (number,))))

    @_reads
    def entrants(self) -> pd.DataFrame:
        """One row per entrant: entrant, digest, identity (a dict, `BotRegistry.identity`): what
        code played. A store made before identities were recorded gives every entrant of its
        tournament with digest and identity None (unknown)."""
        import pandas as pd  # start-up time

        if has_table(self._conn, "entrants"):
            df = self._frame("SELECT entrant, digest, identity FROM entrants ORDER BY rowid")
            df["identity"] = [json.loads(i) if i else None for i in df["identity"]]
            return df
        entrants = self._config["tournament"].get("entrants") or []
        return pd.DataFrame({"entrant": list(entrants), "digest": [None] * len(entrants),
                             "identity": [None] * len(entrants)}, dtype=object)

    @_reads
    def blocks(self, decode: bool = True) -> pd.DataFrame:
        """One row per recorded block (BLOCK_COLUMNS), in block order: `seats` and `deal_seeds`
        lists, `entrants` a dict {label: spec} (decode False: the three as the JSON text the
        table holds, which is faster to read). A store of schema 1 gets the records its layout
        implies."""
        import pandas as pd  # start-up time

        if has_table(self._conn, "blocks"):
            rows = self._conn.execute(f"SELECT {', '.join(BLOCK_COLUMNS)} FROM blocks "
                                      "ORDER BY block").fetchall()
        else:
            rows = [encode_block(b) for b in implied_blocks(self._conn)]
        columns = dict(zip(BLOCK_COLUMNS, map(list, zip(*rows)))) if rows else \
            {c: [] for c in BLOCK_COLUMNS}
        if decode:  # the tables repeat: each decoded once (the lists and dicts are shared)
            for key in BLOCK_JSON_COLUMNS:
                decoded = {text: json.loads(text) for text in set(columns[key])}
                columns[key] = [decoded[v] for v in columns[key]]
        return pd.DataFrame(columns, columns=list(BLOCK_COLUMNS))

    @_reads
    def sessions(self) -> pd.DataFrame:
        """One row per session (SESSION_COLUMNS): the first made the folder, each later one
        resumed it (an SPRT's `games`: the cap it was given). A store of schema 1 gets one row
        per session its meta counts, what it does not record left None."""
        import pandas as pd  # start-up time

        if has_table(self._conn, "sessions"):
            return self._frame(f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions "
                               "ORDER BY session")
        return pd.DataFrame(implied_sessions(read_config(self._conn)),
                            columns=list(SESSION_COLUMNS))

    @_reads
    def incoming(self) -> Incoming:
        """The games stored, as the feeds take them in (kdtourney.tournament.blocks.Incoming)."""
        out = Incoming()
        for block, n_players in self._conn.execute("SELECT block, n_players FROM games"):
            out.counts[block] += 1
            out.players[block] = n_players
        for row in self.results(SCORED_COLUMNS).to_dict("records"):
            out.rows[row["block"]].append(row)
        return out

    @_reads
    def notes(self) -> pd.DataFrame:
        """The bots' notes on their decisions (game, deal, move, seat, note), in game order; empty
        if none was sent."""
        import pandas as pd  # start-up time

        if has_table(self._conn, "notes"):
            return self._frame("SELECT * FROM notes ORDER BY game, deal, move")
        return pd.DataFrame({c: pd.Series(dtype=object if c == "note" else "int64")
                             for c in NOTE_COLUMNS})

    @_reads
    def sprt(self) -> pd.DataFrame:
        """An SPRT's `sprt` table ordered by block; empty if the store has none."""
        import pandas as pd  # start-up time

        if has_table(self._conn, "sprt"):
            return self._frame("SELECT * FROM sprt ORDER BY block")
        return pd.DataFrame({c: pd.Series(dtype="int64" if c == "block" else "float64")
                             for c in SPRT_COLUMNS})

    @_reads
    def tune(self) -> pd.DataFrame:
        """A tune's `tune` table ordered by k, lists decoded; empty if the store has none."""
        import pandas as pd  # start-up time

        if has_table(self._conn, "tune"):
            df = self._frame("SELECT * FROM tune ORDER BY k")
            for c in TUNE_JSON_COLUMNS:
                df[c] = [json.loads(v) for v in df[c]]
            return df
        return pd.DataFrame(columns=list(TUNE_COLUMNS))

    @_reads
    def ladder_entrants(self) -> pd.DataFrame:
        """A ladder's `ladder_entrants` table; an empty one for a store without it."""
        import pandas as pd  # start-up time

        if has_table(self._conn, "ladder_entrants"):
            return self._frame("SELECT * FROM ladder_entrants ORDER BY rowid")
        return pd.DataFrame(columns=list(LADDER_ENTRANT_COLUMNS))


def _known(columns, table_columns) -> None:
    """KeyError (a bug, not a store that cannot be read) for a column the table does not have."""
    unknown = [c for c in columns if c not in table_columns]
    if unknown:
        raise KeyError(f"no column {unknown[0]!r} (columns: {', '.join(table_columns)})")


def _rows(cursor) -> list[dict]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor]


_OPEN = threading.local()  # `readers`: {store path: Reader} of this thread's open readers


@contextlib.contextmanager
def reader(folder) -> Iterator[Reader]:
    """The Reader of the store in `folder`: one state of it for the whole block (see the module's
    docstring); StoreError if the folder holds no store this kdtourney reads. Within the block
    this thread's readers of `folder`, and so its `load_*` of it, are this one."""
    path = store_path(folder)
    key = path.resolve()
    held = _OPEN.__dict__.setdefault("readers", {})
    if key in held:
        yield held[key]
        return
    r = held[key] = Reader(path)
    try:
        yield r
    finally:
        del held[key]
        r.close()


def load_config(folder) -> dict:
    """The config of the store in `folder` (`Reader.config`)."""
    with reader(folder) as r:
        return r.config()


def load_results(folder, columns=None, blocks_from: int = 0) -> pd.DataFrame:
    """`Reader.results` of the store in `folder`."""
    with reader(folder) as r:
        return r.results(columns, blocks_from)


def load_games(folder, columns=None, newest: int | None = None) -> pd.DataFrame:
    """`Reader.games` of the store in `folder`."""
    with reader(folder) as r:
        return r.games(columns, newest)


def _one_read(method: str, name: str, doc: str | None = None):
    """The loader `name(folder, ...)`: `Reader.<method>(...)` in one read of `folder`'s store."""
    def load(folder, *args, **kwargs):
        with reader(folder) as r:
            return getattr(r, method)(*args, **kwargs)

    load.__name__ = load.__qualname__ = name
    load.__doc__ = doc or f"`Reader.{method}` of the store in `folder`."
    return load


load_faults = _one_read("faults", "load_faults")
failed_games = _one_read("failed_games", "failed_games")
load_entrants = _one_read("entrants", "load_entrants")
load_blocks = _one_read("blocks", "load_blocks", "`Reader.blocks` of the store in `folder` "
                        "(decode: bool = True).")
load_sessions = _one_read("sessions", "load_sessions")
load_incoming = _one_read("incoming", "load_incoming")
load_notes = _one_read("notes", "load_notes",
                       "The bots' notes on their decisions (`Reader.notes`).")
load_sprt = _one_read("sprt", "load_sprt")
load_tune_table = _one_read("tune", "load_tune_table")
load_ladder_entrants = _one_read("ladder_entrants", "load_ladder_entrants")
