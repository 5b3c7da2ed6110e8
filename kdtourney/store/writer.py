"""The writer of a tournament store: one per command, in the process that plays (no other writes).

    Store.create(folder, tournament, meta, entrants=None)   a new store (whole or not at all)
    open_store(folder)        the existing store, checked first, upgraded from schema 1 if need be
    Store                     add_game (one transaction per game), add_blocks, begin_session,
                              record_entrants, set_config, update_meta, seed_secret, the commands'
                              own tables (write_sprt, write_tune, write_ladder), and the reads a
                              command makes of what it writes (done_games, count_games, ...)

WAL mode, one transaction per finished game: killing the process loses at most the games in
flight. StoreError (one line) for a store that cannot be made, opened or is not ours.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
from pathlib import Path

from kdtourney import __version__
from kdtourney.store.schema import (
    APPLICATION,
    BLOCK_COLUMNS,
    BLOCKS_SCHEMA,
    ENTRANTS_SCHEMA,
    FAULT_COLUMNS,
    GAME_COLUMNS,
    LADDER_ENTRANT_COLUMNS,
    LADDER_SCHEMA,
    NOTE_COLUMNS,
    NOTES_SCHEMA,
    RESULT_COLUMNS,
    SCHEMA,
    SCHEMA_VERSION,
    SPRT_COLUMNS,
    SPRT_SCHEMA,
    TUNE_COLUMNS,
    TUNE_SCHEMA,
    StoreError,
    check,
    encode_block,
    has_table,
    insert,
    now,
    plain,
    read_config,
    run_script,
    store_path,
    transaction,
    upgrade,
)


def connect(path: Path) -> sqlite3.Connection:
    """The writer's connection to the store at `path`: WAL, autocommit outside `transaction`."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # WAL: a committed game survives a process kill
    return conn


def add_session(conn, command: str | None, games) -> int:
    """Insert a row of `sessions` (inside the caller's transaction); returns its number."""
    cursor = conn.execute(
        "INSERT INTO sessions (started, command, kdtourney, games) VALUES (?, ?, ?, ?)",
        (now(), command, __version__, int(games) if games else None))  # a ladder's: 0
    return cursor.lastrowid


def write_entrants(conn, entrants: dict) -> None:
    """Insert or replace {entrant: identity dict} and this kdtourney's version (inside the
    caller's transaction; the table made if missing)."""
    conn.execute(ENTRANTS_SCHEMA)
    conn.executemany(insert("entrants", ("entrant", "digest", "identity"), "INSERT OR REPLACE"),
                     [(e, i["digest"], json.dumps(i, sort_keys=True))
                      for e, i in entrants.items()])
    conn.execute("INSERT OR REPLACE INTO config (key, value) VALUES ('kdtourney_version', ?)",
                 (json.dumps(__version__),))


def write_table(conn, schema: str, table: str, columns, rows) -> None:
    """Replace the rows of one of the commands' own tables (made if missing), in one
    transaction."""
    with transaction(conn):
        conn.execute(schema)
        conn.execute(f"DELETE FROM {table}")
        conn.executemany(insert(table, columns), rows)


class Store:
    """An open tournament store, for writing: `Store.create(folder, ...)` or `open_store(folder)`;
    a context manager that closes it."""

    def __init__(self, path: Path, conn: sqlite3.Connection):
        self.path = path
        self.folder = path.parent
        self._conn = conn

    @classmethod
    def create(cls, folder, tournament: dict, meta: dict, entrants: dict | None = None) -> Store:
        """A new store in `folder` (made if needed); StoreError if one is already there.
        entrants: {entrant: identity dict} (`BotRegistry.identity`), recorded with it."""
        folder = Path(folder)
        path = store_path(folder)
        if path.exists():
            raise StoreError(f"{path} already exists")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder {folder}: {exc.strerror}") from None
        meta = dict(meta, created=meta.get("created") or now(), updated=now())
        # Built whole under a private name, then linked in: a create cut short (a kill, a full
        # disk) leaves no half store that would refuse every later run in this folder.
        part = folder / f".tournament-{secrets.token_hex(6)}.part"
        try:
            conn = sqlite3.connect(part, isolation_level=None)
            try:
                with transaction(conn):
                    run_script(conn, SCHEMA + BLOCKS_SCHEMA)
                    conn.executemany(
                        insert("config", ("key", "value")),
                        [(k, json.dumps(v, sort_keys=True)) for k, v in
                         (("application", APPLICATION), ("schema_version", SCHEMA_VERSION),
                          ("tournament", tournament), ("meta", meta))])
                    if entrants is not None:
                        write_entrants(conn, entrants)
                    add_session(conn, meta.get("command"), tournament.get("games"))
            finally:
                conn.close()
            os.link(part, path)  # fails if another process made the store meanwhile
        except FileExistsError:
            raise StoreError(f"{path} already exists") from None
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot create {path}: {exc}") from None
        finally:
            for leftover in (part, part.with_name(part.name + "-journal")):
                leftover.unlink(missing_ok=True)
        return cls(path, connect(path))

    # what the command reads of what it writes

    def config(self) -> dict:
        return read_config(self._conn)

    @property
    def tournament(self) -> dict:
        return self.config()["tournament"]

    def entrants(self) -> dict | None:
        """{entrant: identity dict} as recorded; None for a store made before identities were
        recorded (no `entrants` table)."""
        if not has_table(self._conn, "entrants"):
            return None
        return {e: json.loads(i)
                for e, i in self._conn.execute("SELECT entrant, identity FROM entrants")}

    def done_games(self) -> set[int]:
        return {r[0] for r in self._conn.execute("SELECT game FROM games")}

    def count_games(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    def count_finished(self) -> int:
        """Games with player rows (the others could not be finished)."""
        return self._conn.execute("SELECT COUNT(DISTINCT game) FROM results").fetchone()[0]

    def entrant_totals(self) -> dict:
        """{entrant: (player-games, sum of win shares, faults)} over the stored results."""
        return {e: (n, w or 0.0, f or 0) for e, n, w, f in self._conn.execute(
            "SELECT entrant, COUNT(*), SUM(win_share), SUM(fault) FROM results GROUP BY entrant")}

    def games_per_block(self) -> dict[int, int]:
        """{block: games stored} (a block is complete when it has n_players games)."""
        return dict(self._conn.execute("SELECT block, COUNT(*) FROM games GROUP BY block"))

    def seed_secret(self, create: bool = False) -> str | None:
        """The store's seed secret; with `create`, a new one if the store has none."""
        secret = self.config().get("seed_secret")
        if secret is None and create:
            secret = secrets.token_hex(16)
            self.set_config("seed_secret", secret)
        return secret

    # writing

    def update_meta(self, **changes) -> None:
        meta = dict(self.config().get("meta", {}), **changes, updated=now())
        self.set_config("meta", meta)

    def set_config(self, key: str, value) -> None:
        """Write one config entry (any JSON value), e.g. the `sprt` parameters."""
        with transaction(self._conn):
            self._conn.execute("INSERT OR REPLACE INTO config (key, value) VALUES (?, ?)",
                              (key, json.dumps(value, sort_keys=True)))

    def begin_session(self, command: str | None, games: int | None = None) -> int:
        """Record a new session (a resume, an SPRT with another cap) and count it in the meta;
        returns its number. games: the games it was asked for (an SPRT's cap), None if none."""
        with transaction(self._conn):
            number = add_session(self._conn, command, games)
        self.update_meta(sessions=number, last_command=command)
        return number

    def record_entrants(self, entrants: dict) -> None:
        """Record {entrant: identity dict} (and this kdtourney's version), in one transaction."""
        with transaction(self._conn):
            write_entrants(self._conn, entrants)

    def add_blocks(self, blocks) -> None:
        """Record the blocks (dicts: block, first_game, n_players, seats, entrants, deal_seeds;
        see kdtourney.tournament.blocks) not yet recorded, in one transaction; StoreError if one is
        recorded with another table (a bug: a block is what it was first recorded as)."""
        when = now()
        rows = [encode_block(b, when) for b in blocks]
        if not rows:
            return
        with transaction(self._conn):
            known = {r[0]: r[1:] for r in self._conn.execute(
                "SELECT block, first_game, n_players, seats, entrants FROM blocks "
                "WHERE block BETWEEN ? AND ?", (min(r[0] for r in rows), max(r[0] for r in rows)))}
            new = []
            for row in rows:
                if row[0] not in known:
                    new.append(row)
                elif known[row[0]] != row[1:5]:
                    raise StoreError(f"block {row[0]} of {self.folder} is recorded with another "
                                     "table than the one asked for now")
            self._conn.executemany(insert("blocks", BLOCK_COLUMNS), new)

    def cancel_blocks(self, numbers) -> None:
        """Mark blocks never to be played (a ladder's entrant left before their games)."""
        with transaction(self._conn):
            self._conn.executemany("UPDATE blocks SET cancelled = 1 WHERE block = ?",
                                  [(int(b),) for b in numbers])

    def add_game(self, game: dict, results: list[dict], faults: list[dict]) -> None:
        """Store one finished game with its player rows and faults, in one transaction."""
        row = dict(game, seed=game["deal_seeds"][0],
                   deal_seeds=json.dumps(list(game["deal_seeds"])),
                   moves=json.dumps(game["moves"], separators=(",", ":")),
                   error=game.get("error"), finished_at=game.get("finished_at") or now())
        with transaction(self._conn):
            self._conn.execute(insert("games", GAME_COLUMNS), [row[c] for c in GAME_COLUMNS])
            self._conn.executemany(insert("results", RESULT_COLUMNS),
                                  [tuple(plain(r[c]) for c in RESULT_COLUMNS) for r in results])
            self._conn.executemany(
                insert("faults", FAULT_COLUMNS),
                [(game["game"], f["seat"], f.get("entrant"), f["kind"], f.get("message"),
                  f.get("call"), f.get("stderr")) for f in faults])
            if game.get("notes"):  # the bots' notes on their decisions: a table of their own
                self._conn.execute(NOTES_SCHEMA)
                self._conn.executemany(insert("notes", NOTE_COLUMNS),
                                       [(game["game"], *note) for note in game["notes"]])

    # the commands' own tables, each rewritten as a whole

    def write_sprt(self, rows) -> None:
        """Replace the `sprt` table (an SPRT's test, block by block) with `rows`, tuples in
        SPRT_COLUMNS order."""
        write_table(self._conn, SPRT_SCHEMA, "sprt", SPRT_COLUMNS,
                    [tuple(plain(v) for v in row) for row in rows])

    def write_tune(self, rows) -> None:
        """Replace the `tune` table (a tune's iterations) with `rows`, tuples in TUNE_COLUMNS
        order (lists stored as JSON)."""
        write_table(self._conn, TUNE_SCHEMA, "tune", TUNE_COLUMNS,
                    [tuple(json.dumps(v) if isinstance(v, list) else plain(v) for v in row)
                     for row in rows])

    def write_ladder(self, entrants=()) -> None:
        """Insert or replace the ladder's `entrants` (dicts with LADDER_ENTRANT_COLUMNS), in one
        transaction (the table made if missing)."""
        with transaction(self._conn):
            self._conn.execute(LADDER_SCHEMA)
            self._conn.executemany(
                insert("ladder_entrants", LADDER_ENTRANT_COLUMNS, "INSERT OR REPLACE"),
                [tuple(e.get(c) for c in LADDER_ENTRANT_COLUMNS) for e in entrants])

    def close(self) -> None:
        self._conn.close()  # (again: nothing)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open_store(folder) -> Store:
    """The existing store of a tournament folder, for adding games. StoreError (one line) if the
    folder has none, or a corrupt, foreign or newer one; nothing is written before the file has
    been checked. A store made before faults kept the bots' stderr gets the column; one of schema
    1 is upgraded (`schema.upgrade`)."""
    path = store_path(folder)
    check(path)
    try:
        conn = connect(path)
        columns = {r[1] for r in conn.execute("PRAGMA table_info(faults)")}
        if "stderr" not in columns:
            conn.execute("ALTER TABLE faults ADD COLUMN stderr TEXT")
        if not has_table(conn, "blocks"):
            upgrade(conn)
        return Store(path, conn)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from None
