"""The tournament store: one SQLite file, `<tournament folder>/tournament.sqlite`.

Written by one process only (the runner's parent), in WAL mode, one transaction per finished game:
killing the process loses at most the games in flight. Read by anyone (`load_results` and friends
return pandas DataFrames).

Tables
------
config   key TEXT PRIMARY KEY, value TEXT (JSON):
         application = "kdtourney" (the marker that tells our files from foreign ones),
         schema_version = 2 (1: before the blocks and sessions tables, see below),
         tournament = the fixed settings of the games (format, players, rules, seed, dynasty,
                      move time limit and clock, the entrants of the folder's own table, games
                      first asked for), written once, when the folder is made: a run on an
                      existing folder must match it. What each block plays is in `blocks`
                      (a ladder has no entrants here; a tune has theta+ and theta- at their
                      start values),
         meta = everything else (name, command line, kdtourney/python/numba/numpy versions,
                platform, created, updated, sessions: how many),
         kdtourney_version = the kdtourney that created the store (or first recorded entrants),
         seed_secret = a random key (hex) mixed into the deal and bot seeds of a store made
                       under --sandbox, which hides it from the bots (absent: public seeds).
entrants one row per entrant: entrant TEXT PRIMARY KEY, digest TEXT, identity TEXT (JSON of
         `BotRegistry.identity`: kind, digest, origin, source_sha256, ...): what code played,
         written when the store is created and checked on every resume. Stores made before this
         table existed lack it: their entrants' identities are unknown (digest None).
blocks   one row per block scheduled, written when a command's feed hands the block to the game
         service (kdtourney.commands.run.schedule_blocks, one transaction), before any of its games
         is played: block INTEGER PRIMARY KEY, first_game, n_players, seats (JSON list of the
         entrant labels at arrangement 0; arrangement r seats rotation r, game first_game + r),
         entrants (JSON {label: canonical spec, parameters included} of the labels it seats: a
         tune's theta+ and theta- with the iteration's values, a ladder's versions), deal_seeds
         (JSON list as played: keyed with seed_secret if any; the bots' seeds follow from the
         tournament's seed and the game number, kdtourney.tournament.blocks), scheduled (ISO time),
         cancelled (1: never to be played: a ladder's entrant left before its games; the games
         played before stay stored, out of the statistics). `run` records every block of its
         plan, `sprt` each chunk's, `tune` each batch's, `ladder` the tables its matchmaker chose.
sessions one row per command that played into the folder: session INTEGER PRIMARY KEY (from 1: the
         one that made it), started (ISO time), command, kdtourney (its version), games (what it
         asked for: a run's games, an SPRT's cap, which a resume may change; NULL if nothing).
games    game INTEGER PRIMARY KEY (the game index), block, arrangement, seed (the deal seed; the
         first of three for a dynasty), deal_seeds (JSON list), n_players, status ('ok'|'fault'),
         duration (s), moves (JSON list of ints; for a dynasty a list of three lists), error,
         finished_at (ISO time, UTC).
results  one row per player per game, PRIMARY KEY (game, seat): entrant, score, rank, win_share,
         margin (own score minus best opponent's), largest_territory, crowns, discards, fault (0/1),
         time_total, time_max (decision times, s), decisions.
faults   PRIMARY KEY (game, seat): entrant, kind ('exception'|'illegal'|'timeout'|'crash'|
         'protocol'|'memory'|'output': a forfeit; 'failed': the game could not be finished, one row per seat, see
         kdtourney.service.forfeit), message, call (which call into the bot: 0 = construction, then
         setup and act in order; NULL when unknown), stderr (a bot in its own process: its last
         stderr lines; stores made before this column get it when next opened for writing).
         Stores made before 'failed' rows existed have one 'crash' row on seat -1 for a failed
         game.
sprt     only in stores of `kdtourney sprt` (kdtourney.commands.sprt), whose config also has the
         key `sprt` (the test's parameters): one row per counted block of the sequential test, in
         block order: block (blocks counted so far, from 1), llr, lower, upper (the decision
         bounds), elo, lo, hi (the Elo difference estimate and its 95% interval; NULL while
         undefined). Rewritten as a whole after every chunk of blocks.
tune     only in stores of `kdtourney tune` (kdtourney.commands.tune), whose config also has the key
         `tune`: one row per iteration with a result, in order: k (from 1), batch, theta (the
         values it started from), signs, plus, minus (theta+ and theta- as played), result
         (theta+'s score in game-pair units), after (theta after its step); lists as JSON.
         Rewritten as a whole after every batch.
ladder_entrants
         only in stores of `kdtourney ladder` (kdtourney.commands.ladder), whose config also has the
         key `ladder` (players, rules, seed): one row per entrant version, label TEXT PRIMARY KEY,
         spec, version (1, 2, ... per spec), digest, origin, status ('active'|'superseded'|
         'retired'), added (ISO time), changed (when the status last changed), note. Its config
         key `ladder_intake` (LADDER_INTAKE) holds the notes of the ladder's last look at its
         folders: the bots that did not enter, each with why (its page shows them).

Stores of schema 1 (kdtourney before `blocks` and `sessions`) rewrote config `tournament` for each
of a ladder's chunks and a tune's batches (their entrants) and each SPRT session (its cap), and
kept a ladder's blocks in `ladder_blocks`. They read as they are (`load_config` gives their fixed
settings, `load_blocks` and `load_sessions` the rows their layout implies), and are upgraded to
this schema, in one transaction, when opened for writing (a resume): `ladder_blocks` is folded
into `blocks`. A kdtourney that reads schema 1 only refuses a store of schema 2 in one line.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import json
import os
import secrets
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from kdtourney.tournament.blocks import SCORED_COLUMNS, Incoming, games_of
from kdtourney.tournament.definition import Tournament
from kdtourney.tournament.tune import MINUS, PLUS, Tune

if TYPE_CHECKING:  # pandas is imported where a table is read: worker processes never do, and
    import pandas as pd  # importing it would cost each of them most of a second

STORE_FILE = "tournament.sqlite"
LOCK_FILE = "tournament.lock"
APPLICATION = "kdtourney"
SCHEMA_VERSION = 2
TABLES = ("games", "results", "faults")
LADDER_INTAKE = "ladder_intake"  # config: the last look's notes (the bots that did not enter)
TIMING_COLUMNS = {"games": ("duration", "finished_at"), "results": ("time_total", "time_max")}

_SCHEMA = """
CREATE TABLE config (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE games (
    game INTEGER PRIMARY KEY, block INTEGER NOT NULL, arrangement INTEGER NOT NULL,
    seed INTEGER NOT NULL, deal_seeds TEXT NOT NULL, n_players INTEGER NOT NULL,
    status TEXT NOT NULL, duration REAL, moves TEXT NOT NULL, error TEXT, finished_at TEXT);
CREATE TABLE results (
    game INTEGER NOT NULL REFERENCES games(game), seat INTEGER NOT NULL, entrant TEXT NOT NULL,
    score INTEGER NOT NULL, rank INTEGER NOT NULL, win_share REAL NOT NULL, margin INTEGER NOT NULL,
    largest_territory INTEGER NOT NULL, crowns INTEGER NOT NULL, discards INTEGER NOT NULL,
    fault INTEGER NOT NULL, time_total REAL, time_max REAL, decisions INTEGER NOT NULL,
    PRIMARY KEY (game, seat));
CREATE TABLE faults (
    game INTEGER NOT NULL REFERENCES games(game), seat INTEGER NOT NULL, entrant TEXT,
    kind TEXT NOT NULL, message TEXT, call INTEGER, stderr TEXT, PRIMARY KEY (game, seat));
CREATE INDEX results_entrant ON results (entrant);
"""
_BLOCKS_SCHEMA = """
CREATE TABLE blocks (
    block INTEGER PRIMARY KEY, first_game INTEGER NOT NULL, n_players INTEGER NOT NULL,
    seats TEXT NOT NULL, entrants TEXT NOT NULL, deal_seeds TEXT NOT NULL, scheduled TEXT NOT NULL,
    cancelled INTEGER NOT NULL DEFAULT 0);
CREATE TABLE sessions (
    session INTEGER PRIMARY KEY, started TEXT, command TEXT, kdtourney TEXT, games INTEGER);
"""
_ENTRANTS_SCHEMA = ("CREATE TABLE IF NOT EXISTS entrants (entrant TEXT PRIMARY KEY, digest TEXT, "
                    "identity TEXT)")

_LADDER_SCHEMA = """
CREATE TABLE IF NOT EXISTS ladder_entrants (
    label TEXT PRIMARY KEY, spec TEXT NOT NULL, version INTEGER NOT NULL, digest TEXT, origin TEXT,
    status TEXT NOT NULL, added TEXT NOT NULL, changed TEXT NOT NULL, note TEXT)"""
LADDER_ENTRANT_COLUMNS = ("label", "spec", "version", "digest", "origin", "status", "added",
                          "changed", "note")

RESULT_COLUMNS = ("game", "seat", "entrant", "score", "rank", "win_share", "margin",
                  "largest_territory", "crowns", "discards", "fault", "time_total", "time_max",
                  "decisions")
BLOCK_COLUMNS = ("block", "first_game", "n_players", "seats", "entrants", "deal_seeds", "scheduled",
                 "cancelled")
SESSION_COLUMNS = ("session", "started", "command", "kdtourney", "games")
SPRT_COLUMNS = ("block", "llr", "lower", "upper", "elo", "lo", "hi")
TUNE_COLUMNS = ("k", "batch", "theta", "signs", "plus", "minus", "result", "after")


class StoreError(ValueError):
    """A missing, corrupt, foreign or newer store, or a failed export; the message is one line."""


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def store_path(folder) -> Path:
    return Path(folder) / STORE_FILE


def _check(path: Path) -> dict:
    """The config of the store at `path`, read without writing anything; StoreError if it is not a
    kdtourney store this version can read."""
    if not path.is_file():
        raise StoreError(f"no tournament in {path.parent} (no {STORE_FILE})")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from None
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "config" not in names:
            raise StoreError(f"{path} is not a kdtourney tournament (an SQLite file without our "
                             "config table); use another folder")
        config = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM config")}
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is corrupt or not an SQLite database ({exc}); use another folder") \
            from None
    except (ValueError, TypeError) as exc:
        raise StoreError(f"{path} has an unreadable config table ({exc})") from None
    finally:
        conn.close()
    if config.get("application") != APPLICATION:
        raise StoreError(f"{path} is not a kdtourney tournament (no kdtourney marker in its config "
                         "table); use another folder")
    version = config.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise StoreError(f"{path} has store schema {version!r}, this kdtourney reads up to "
                         f"{SCHEMA_VERSION}: upgrade kdtourney")
    missing = [t for t in TABLES if t not in names]
    if missing or "tournament" not in config:
        raise StoreError(f"{path} is an incomplete kdtourney store (missing "
                         f"{', '.join(missing) or 'tournament config'})")
    if version < 2:
        config["tournament"] = _fixed_tournament(config)
    return config


def exists(folder) -> bool:
    """Whether `folder` holds a store file (valid or not)."""
    return store_path(folder).exists()


class Store:
    """An open tournament store; `Store.create(folder, tournament, meta)` or `open_store(folder)`."""

    def __init__(self, path: Path, conn: sqlite3.Connection):
        self.path = path
        self.folder = path.parent
        self._conn = conn

    @classmethod
    def _connect(cls, path: Path) -> "Store":
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # WAL: a committed game survives a process kill
        return cls(path, conn)

    @classmethod
    def create(cls, folder, tournament: dict, meta: dict, entrants: dict | None = None) -> "Store":
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
                building = cls(path, conn)
                with _transaction(conn):
                    _execute(conn, _SCHEMA + _BLOCKS_SCHEMA)
                    conn.executemany(
                        "INSERT INTO config (key, value) VALUES (?, ?)",
                        [(k, json.dumps(v, sort_keys=True)) for k, v in
                         (("application", APPLICATION), ("schema_version", SCHEMA_VERSION),
                          ("tournament", tournament), ("meta", meta))])
                    if entrants is not None:
                        building._write_entrants(entrants)
                    building._add_session(meta.get("command"), tournament.get("games"))
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
        return cls._connect(path)

    # reading

    def config(self) -> dict:
        return {k: json.loads(v) for k, v in self._conn.execute("SELECT key, value FROM config")}

    @property
    def tournament(self) -> dict:
        return self.config()["tournament"]

    @property
    def meta(self) -> dict:
        return self.config().get("meta", {})

    def entrants(self) -> dict | None:
        """{entrant: identity dict} as recorded; None for a store made before identities were
        recorded (no `entrants` table)."""
        conn = self._conn
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='entrants'"
                            ).fetchone():
            return None
        return {e: json.loads(i) for e, i in conn.execute("SELECT entrant, identity FROM entrants")}

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

    # writing

    def update_meta(self, **changes) -> None:
        meta = dict(self.meta, **changes, updated=now())
        with _transaction(self._conn):
            self._conn.execute("INSERT OR REPLACE INTO config (key, value) VALUES ('meta', ?)",
                               (json.dumps(meta, sort_keys=True),))

    def begin_session(self, command: str | None, games: int | None = None) -> int:
        """Record a new session (a resume, an SPRT with another cap) and count it in the meta;
        returns its number. games: the games it was asked for (an SPRT's cap), None if none."""
        with _transaction(self._conn):
            number = self._add_session(command, games)
        self.update_meta(sessions=number, last_command=command)
        return number

    def _add_session(self, command, games) -> int:
        from kdtourney import __version__

        cursor = self._conn.execute(
            "INSERT INTO sessions (started, command, kdtourney, games) VALUES (?, ?, ?, ?)",
            (now(), command, __version__, int(games) if games else None))  # a ladder's: 0
        return cursor.lastrowid

    def add_blocks(self, blocks) -> None:
        """Record the blocks (dicts: block, first_game, n_players, seats, entrants, deal_seeds;
        see kdtourney.tournament.blocks) not yet recorded, in one transaction; StoreError if one is
        recorded with another table (a bug: a block is what it was first recorded as)."""
        when = now()
        rows = [_encoded(b, when) for b in blocks]
        if not rows:
            return
        conn = self._conn
        with _transaction(conn):
            known = {r[0]: r[1:] for r in conn.execute(
                "SELECT block, first_game, n_players, seats, entrants FROM blocks "
                "WHERE block BETWEEN ? AND ?", (min(r[0] for r in rows), max(r[0] for r in rows)))}
            new = []
            for row in rows:
                if row[0] not in known:
                    new.append(row)
                elif known[row[0]] != row[1:5]:
                    raise StoreError(f"block {row[0]} of {self.folder} is recorded with another "
                                     "table than the one asked for now")
            conn.executemany(f"INSERT INTO blocks ({', '.join(BLOCK_COLUMNS)}) VALUES "
                             f"({', '.join('?' * len(BLOCK_COLUMNS))})", new)

    def cancel_blocks(self, numbers) -> None:
        """Mark blocks never to be played (a ladder's entrant left before their games)."""
        with _transaction(self._conn):
            self._conn.executemany("UPDATE blocks SET cancelled = 1 WHERE block = ?",
                                   [(int(b),) for b in numbers])

    def record_entrants(self, entrants: dict) -> None:
        """Record {entrant: identity dict} (and this kdtourney's version), in one transaction."""
        with _transaction(self._conn):
            self._write_entrants(entrants)

    def _write_entrants(self, entrants: dict) -> None:
        from kdtourney import __version__

        conn = self._conn
        conn.execute(_ENTRANTS_SCHEMA)
        conn.executemany("INSERT OR REPLACE INTO entrants (entrant, digest, identity) VALUES (?, ?, ?)",
                         [(e, i["digest"], json.dumps(i, sort_keys=True)) for e, i in entrants.items()])
        conn.execute("INSERT OR REPLACE INTO config (key, value) VALUES ('kdtourney_version', ?)",
                     (json.dumps(__version__),))

    def set_config(self, key: str, value) -> None:
        """Write one config entry (any JSON value), e.g. the `sprt` parameters."""
        with _transaction(self._conn):
            self._conn.execute("INSERT OR REPLACE INTO config (key, value) VALUES (?, ?)",
                               (key, json.dumps(value, sort_keys=True)))

    def seed_secret(self, create: bool = False) -> str | None:
        """The store's seed secret; with `create`, a new one if the store has none."""
        secret = self.config().get("seed_secret")
        if secret is None and create:
            secret = secrets.token_hex(16)
            self.set_config("seed_secret", secret)
        return secret

    def games_per_block(self) -> dict[int, int]:
        """{block: games stored} (a block is complete when it has n_players games)."""
        return dict(self._conn.execute("SELECT block, COUNT(*) FROM games GROUP BY block"))

    def write_sprt(self, rows) -> None:
        """Replace the `sprt` table (created if missing) with `rows`, tuples in SPRT_COLUMNS
        order, in one transaction."""
        conn = self._conn
        with _transaction(conn):
            conn.execute("CREATE TABLE IF NOT EXISTS sprt (block INTEGER PRIMARY KEY, llr REAL, "
                         "lower REAL, upper REAL, elo REAL, lo REAL, hi REAL)")
            conn.execute("DELETE FROM sprt")
            conn.executemany(f"INSERT INTO sprt ({', '.join(SPRT_COLUMNS)}) VALUES "
                             f"({', '.join('?' * len(SPRT_COLUMNS))})",
                             [tuple(_plain(v) for v in row) for row in rows])

    def write_tune(self, rows) -> None:
        """Replace the `tune` table (created if missing) with `rows`, tuples in TUNE_COLUMNS
        order (lists stored as JSON), in one transaction."""
        conn = self._conn
        with _transaction(conn):
            conn.execute("CREATE TABLE IF NOT EXISTS tune (k INTEGER PRIMARY KEY, batch INTEGER, "
                         "theta TEXT, signs TEXT, plus TEXT, minus TEXT, result REAL, after TEXT)")
            conn.execute("DELETE FROM tune")
            conn.executemany(f"INSERT INTO tune ({', '.join(TUNE_COLUMNS)}) VALUES "
                             f"({', '.join('?' * len(TUNE_COLUMNS))})",
                             [tuple(json.dumps(v) if isinstance(v, list) else _plain(v)
                                    for v in row) for row in rows])

    def write_ladder(self, entrants=()) -> None:
        """Insert or replace the ladder's `entrants` (dicts with LADDER_ENTRANT_COLUMNS), in one
        transaction (the table created if missing)."""
        conn = self._conn
        with _transaction(conn):
            conn.execute(_LADDER_SCHEMA)
            conn.executemany(
                f"INSERT OR REPLACE INTO ladder_entrants ({', '.join(LADDER_ENTRANT_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(LADDER_ENTRANT_COLUMNS))})",
                [tuple(e.get(c) for c in LADDER_ENTRANT_COLUMNS) for e in entrants])

    def add_game(self, game: dict, results: list[dict], faults: list[dict]) -> None:
        """Store one finished game with its player rows and faults, in one transaction."""
        conn = self._conn
        with _transaction(conn):
            conn.execute(
                "INSERT INTO games (game, block, arrangement, seed, deal_seeds, n_players, status, "
                "duration, moves, error, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (game["game"], game["block"], game["arrangement"], game["deal_seeds"][0],
                 json.dumps(list(game["deal_seeds"])), game["n_players"], game["status"],
                 game["duration"], json.dumps(game["moves"], separators=(",", ":")),
                 game.get("error"), game.get("finished_at") or now()))
            conn.executemany(
                f"INSERT INTO results ({', '.join(RESULT_COLUMNS)}) VALUES "
                f"({', '.join('?' * len(RESULT_COLUMNS))})",
                [tuple(_plain(r[c]) for c in RESULT_COLUMNS) for r in results])
            conn.executemany(
                "INSERT INTO faults (game, seat, entrant, kind, message, call, stderr) VALUES "
                "(?, ?, ?, ?, ?, ?, ?)",
                [(game["game"], f["seat"], f.get("entrant"), f["kind"], f.get("message"),
                  f.get("call"), f.get("stderr")) for f in faults])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _execute(conn, script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


_JSON_COLUMNS = ("seats", "entrants", "deal_seeds")


def _encoded(block: dict, when: str | None = None) -> tuple:
    """A block record as its row of the `blocks` table (BLOCK_COLUMNS order, JSON text; scheduled
    `when` unless it says, not cancelled unless it says)."""
    return (int(block["block"]), int(block["first_game"]), int(block["n_players"]),
            _json_text(tuple(block["seats"])),
            _json_text(tuple(sorted(block["entrants"].items())), mapping=True),
            f"[{', '.join(str(int(s)) for s in block['deal_seeds'])}]",  # as json.dumps writes
            block.get("scheduled") or when, int(block.get("cancelled", 0)))


@functools.lru_cache(maxsize=4096)  # a plan's blocks repeat a few tables: each encoded once
def _json_text(items: tuple, mapping: bool = False) -> str:
    return json.dumps(dict(items) if mapping else list(items), sort_keys=True)


def _plain(value):
    if isinstance(value, bool):
        return int(value)
    return value


class _transaction:
    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, exc, tb):
        self.conn.execute("COMMIT" if kind is None else "ROLLBACK")


def open_store(folder) -> Store:
    """The existing store of a tournament folder, for reading and adding games. StoreError (one
    line) if the folder has none, or a corrupt, foreign or newer one; nothing is written before
    the file has been checked."""
    path = store_path(folder)
    _check(path)
    try:
        store = Store._connect(path)
        columns = {r[1] for r in store._conn.execute("PRAGMA table_info(faults)")}
        if "stderr" not in columns:  # a store made before faults kept the bots' stderr
            store._conn.execute("ALTER TABLE faults ADD COLUMN stderr TEXT")
        if not _has_table(store._conn, "blocks"):
            _upgrade(store._conn)
        return store
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from None


_HELD: dict[str, list] = {}  # lock file -> [descriptor, holds] of the locks this process holds


@contextlib.contextmanager
def locked(folder):
    """Hold the lock of a tournament folder while playing into it: a second process gets
    StoreError (one line) instead of writing the same games. The lock is an flock on
    `<folder>/tournament.lock` (made if needed, with the holder's process id inside for the
    message): the kernel releases it when its process ends, however it ends, so a killed run leaves
    no lock behind. Reentrant within a process (an SPRT holds it around its chunks' runs). An
    existing store is checked first (read-only), so a foreign folder gets no lock file."""
    import fcntl

    folder = Path(folder)
    if exists(folder):
        _check(store_path(folder))
    else:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder {folder}: {exc.strerror}") from None
    key = str((folder / LOCK_FILE).resolve())
    if key not in _HELD:
        try:
            fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise StoreError(f"cannot create {key}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise StoreError(f"{folder} is in use: another kdtourney run "
                             + (f"(process {holder}) " if holder.isdigit() else "")
                             + "is playing into it; wait for it to end, or choose another --out"
                             ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        _HELD[key] = [fd, 0]
    _HELD[key][1] += 1
    try:
        yield
    finally:
        _HELD[key][1] -= 1
        if not _HELD[key][1]:
            fd = _HELD.pop(key)[0]
            os.ftruncate(fd, 0)
            os.close(fd)  # releases the lock


_SNAPSHOTS = threading.local()  # {store path: (connection, config)} of this thread's snapshots


@contextlib.contextmanager
def _reading(folder):
    """(read-only connection, config) of the store in `folder` (within `snapshot(folder)`, the
    snapshot's); a table that cannot be read (or decoded) is a StoreError."""
    import pandas as pd
    path = store_path(folder)
    held = getattr(_SNAPSHOTS, "held", {}).get(path.resolve())
    if held is not None:
        try:
            yield held
        except (sqlite3.Error, pd.errors.DatabaseError, ValueError) as exc:
            raise StoreError(f"cannot read {path}: {exc}") from None
        return
    config = _check(path)
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        yield conn, config
    except (sqlite3.Error, pd.errors.DatabaseError, ValueError) as exc:
        raise StoreError(f"cannot read {path}: {exc}") from None
    finally:
        conn.close()


@contextlib.contextmanager
def snapshot(folder):
    """Within the block, every `load_*` of `folder` in this thread reads one state of the store
    (one read transaction: WAL keeps it while the runner stores games), so the results, games,
    faults and blocks read agree: a game stored meanwhile is in none of them, not in the games
    without its results (a page would show it failed). Nested: the outer snapshot."""
    path = store_path(folder).resolve()
    held = _SNAPSHOTS.__dict__.setdefault("held", {})
    if path in held:
        yield
        return
    with _reading(folder) as (conn, config):
        conn.execute("BEGIN")
        conn.execute("SELECT COUNT(*) FROM games").fetchone()  # the transaction reads from here
        held[path] = (conn, config)
        try:
            yield
        finally:
            del held[path]
            conn.rollback()


def _has_table(conn, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                        (name,)).fetchone() is not None


def _read(folder, sql: str) -> pd.DataFrame:
    import pandas as pd
    with _reading(folder) as (conn, _):
        return pd.read_sql_query(sql, conn)


def load_config(folder) -> dict:
    """{'tournament': ..., 'meta': ..., 'application': ..., 'schema_version': ...} of a store."""
    return _check(store_path(folder))


def load_results(folder, columns=None, blocks_from: int = 0) -> pd.DataFrame:
    """One row per player per game, ordered by game and seat: the results columns plus `block`,
    `n_players` and `status` of the game (what kdtourney.report reads). columns: only these of
    them (reading fewer is faster), default all; blocks_from: only the games of this block and
    later ones."""
    game_columns = ("block", "n_players", "status")
    columns = columns or RESULT_COLUMNS + game_columns
    selected = ", ".join(("g." if c in game_columns else "r.") + c for c in columns)
    where = f"WHERE g.block >= {int(blocks_from)} " if blocks_from else ""
    df = _read(folder, f"SELECT {selected} FROM results r JOIN games g ON g.game = r.game "
                       f"{where}ORDER BY r.game, r.seat")
    if "fault" in df:
        df["fault"] = df["fault"].astype(bool)
    return df


def load_incoming(folder) -> Incoming:
    """The games stored, as the feeds take them in (kdtourney.tournament.blocks.Incoming)."""
    out = Incoming()
    with _reading(folder) as (conn, _):
        for block, n_players in conn.execute("SELECT block, n_players FROM games"):
            out.counts[block] += 1
            out.players[block] = n_players
    results = load_results(folder, SCORED_COLUMNS)
    for row in results.to_dict("records"):
        out.rows[row["block"]].append(row)
    return out


def load_games(folder, columns=None, newest: int | None = None) -> pd.DataFrame:
    """One row per game, ordered by game; `moves` and `deal_seeds` stay JSON text. columns: only
    these columns of the games table (reading no moves is much faster), default all; newest: only
    the last this many games."""
    selected = ', '.join(columns) if columns else '*'
    if newest is None:
        return _read(folder, f"SELECT {selected} FROM games ORDER BY game")
    return _read(folder, f"SELECT * FROM (SELECT {selected} FROM games ORDER BY game DESC "
                         f"LIMIT {int(newest)}) ORDER BY game")


def load_faults(folder) -> pd.DataFrame:
    """One row per forfeit, ordered by game and seat (stderr None where the store has none)."""
    df = _read(folder, "SELECT * FROM faults ORDER BY game, seat")
    if "stderr" not in df:
        df["stderr"] = None
    return df


def load_entrants(folder) -> pd.DataFrame:
    """One row per entrant: entrant, digest, identity (a dict, `BotRegistry.identity`): what code
    played. A store made before identities were recorded gives every entrant of its tournament
    with digest and identity None (unknown)."""
    import pandas as pd
    with _reading(folder) as (conn, config):
        if _has_table(conn, "entrants"):
            df = pd.read_sql_query("SELECT entrant, digest, identity FROM entrants ORDER BY rowid",
                                   conn)
            df["identity"] = [json.loads(i) if i else None for i in df["identity"]]
            return df
    entrants = config["tournament"].get("entrants") or []
    return pd.DataFrame({"entrant": list(entrants), "digest": [None] * len(entrants),
                         "identity": [None] * len(entrants)}, dtype=object)


def _export_entrants(folder) -> pd.DataFrame:
    """The entrants table as written by `export`: the identity as JSON text."""
    df = load_entrants(folder)
    df["identity"] = [None if i is None else json.dumps(i, sort_keys=True) for i in df["identity"]]
    return df


def failed_games(folder) -> pd.Series:
    """{entrant: games it sat in that could not be finished} (its 'failed' faults), entrants
    without any left out; named `failed`."""
    faults = load_faults(folder)
    failed = faults[faults["kind"] == "failed"]
    return failed.groupby("entrant")["game"].nunique().rename("failed")


def load_sprt(folder) -> pd.DataFrame:
    """The `sprt` table (see the module docstring) ordered by block; empty if the store has none."""
    import pandas as pd
    with _reading(folder) as (conn, _):
        if _has_table(conn, "sprt"):
            return pd.read_sql_query("SELECT * FROM sprt ORDER BY block", conn)
    return pd.DataFrame({c: pd.Series(dtype="int64" if c == "block" else "float64")
                         for c in SPRT_COLUMNS})


def load_blocks(folder, decode: bool = True) -> pd.DataFrame:
    """One row per recorded block (BLOCK_COLUMNS, see the module docstring), in block order:
    `seats` and `deal_seeds` lists, `entrants` a dict {label: spec} (decode False: the three as
    the JSON text the table holds, which is faster to read). A store of schema 1 gets the records
    its layout implies (`_old_blocks`)."""
    import pandas as pd
    with _reading(folder) as (conn, _):
        if _has_table(conn, "blocks"):
            rows = conn.execute(f"SELECT {', '.join(BLOCK_COLUMNS)} FROM blocks ORDER BY block"
                                ).fetchall()
        else:
            rows = [_encoded(b) for b in _old_blocks(conn)]
    columns = dict(zip(BLOCK_COLUMNS, map(list, zip(*rows)))) if rows else \
        {c: [] for c in BLOCK_COLUMNS}
    if decode:  # the tables repeat: each decoded once (the lists and dicts are shared: read only)
        for key in _JSON_COLUMNS:
            decoded = {text: json.loads(text) for text in set(columns[key])}
            columns[key] = [decoded[v] for v in columns[key]]
    return pd.DataFrame(columns, columns=list(BLOCK_COLUMNS))


def load_sessions(folder) -> pd.DataFrame:
    """One row per session (SESSION_COLUMNS): the first made the folder, each later one resumed
    it (an SPRT's `games`: the cap it was given). A store of schema 1 gets one row per session
    its meta counts, what it does not record left None."""
    import pandas as pd
    with _reading(folder) as (conn, _):
        if _has_table(conn, "sessions"):
            return pd.read_sql_query(f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions "
                                     "ORDER BY session", conn)
        rows = _old_sessions(_raw_config(conn))
    return pd.DataFrame(rows, columns=list(SESSION_COLUMNS))


def load_ladder_entrants(folder) -> pd.DataFrame:
    """The `ladder_entrants` table; an empty one for a store without it."""
    import pandas as pd
    with _reading(folder) as (conn, _):
        if _has_table(conn, "ladder_entrants"):
            return pd.read_sql_query("SELECT * FROM ladder_entrants ORDER BY rowid", conn)
    return pd.DataFrame(columns=list(LADDER_ENTRANT_COLUMNS))


def _export_blocks(folder) -> pd.DataFrame:
    """The blocks table as written by `export`: lists and the entrants as JSON text."""
    return load_blocks(folder, decode=False)


# --------------------------------------------------------------------------------------------------
# Stores of schema 1 (kdtourney before the blocks table): read as they are, upgraded when opened
# for writing. Their config `tournament` was rewritten for each of a ladder's chunks (its
# entrants) and a tune's batches (theta+ and theta- of every iteration appended), and for each of
# an SPRT's sessions (its cap); their blocks were implied by that and the ladder's and tune's
# tables.
# --------------------------------------------------------------------------------------------------


def _raw_config(conn) -> dict:
    return {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM config")}


def _fixed_tournament(config: dict) -> dict:
    """The fixed settings of a schema-1 store's tournament: a ladder's without the last chunk's
    entrants, a tune's without the batch it was killed in."""
    table = dict(config["tournament"])
    entrants, specs = list(table.get("entrants") or []), list(table.get("specs") or [])
    if "ladder" in config:
        table.update(entrants=[], specs=[], games=0)
    elif "tune" in config and len(entrants) != len(set(entrants)):
        keep = len(entrants) - 2 * sum(1 for e in entrants[2:] if e == PLUS)
        table.update(entrants=entrants[:keep], specs=specs[:keep])
    return table


def _old_blocks(conn) -> list[dict]:
    """The block records a schema-1 store implies: a run's plan, an SPRT's blocks with games
    stored, a tune's iterations (the `tune` table's, and those of the batch it was killed in),
    a ladder's `ladder_blocks`."""
    config = _raw_config(conn)
    stored = config["tournament"]
    fixed = Tournament.from_dict(_fixed_tournament(config))
    played = conn.execute("SELECT MAX(game), MAX(block) FROM games").fetchone()
    last_game, last_block = (-1 if v is None else int(v) for v in played)
    if "ladder" in config:
        if not _has_table(conn, "ladder_blocks"):
            return []
        specs = dict(conn.execute("SELECT label, spec FROM ladder_entrants"))
        rows = [dict(block=b, first_game=f, n_players=n, seats=json.loads(seats),
                     scheduled=when, cancelled=c)
                for b, f, n, seats, when, c in conn.execute(
                    "SELECT block, first_game, n_players, seats, scheduled, cancelled "
                    "FROM ladder_blocks ORDER BY block")]
        for row in rows:
            row["entrants"] = {label: specs[label] for label in row["seats"]}
    elif "tune" in config:
        tune = Tune.from_dict(config["tune"])
        plays = {}  # iteration -> (theta+'s spec, theta-'s)
        if _has_table(conn, "tune"):
            for k, plus, minus in conn.execute("SELECT k, plus, minus FROM tune"):
                plays[k] = (tune.spec(json.loads(plus)), tune.spec(json.loads(minus)))
        extra = list(zip(stored["specs"], stored["entrants"]))[len(fixed.entrants):]
        for j in range(len(extra) // 2):  # the batch it was killed in, in order
            plays[max(plays, default=0) + 1] = (extra[2 * j][0], extra[2 * j + 1][0])
        n = fixed.players[0]
        seats = [fixed.entrants[i] for i in fixed.lineup]
        rows = [dict(block=b, first_game=b * n, n_players=n, seats=seats,
                     entrants=dict(zip(fixed.entrants, fixed.specs), **{PLUS: p, MINUS: m}))
                for k, (p, m) in sorted(plays.items())
                for b in range((k - 1) * tune.blocks, k * tune.blocks)]
    else:
        # an SPRT may have stored games past the cap it was given last
        everything = Tournament.from_dict(dict(stored, games=max(stored["games"], last_game + 1)))
        labels, specs = everything.entrants, everything.specs
        rows = [dict(block=b, first_game=f, n_players=len(table), seats=[labels[i] for i in table],
                     entrants={labels[i]: specs[i] for i in table})
                for b, f, table in everything.tables() if "sprt" not in config or b <= last_block]
    when = conn.execute("SELECT MIN(finished_at) FROM games").fetchone()[0] or now()
    for row in rows:
        row.setdefault("scheduled", when)
        row.setdefault("cancelled", 0)
    # the deals as played; those of blocks without a game stored made as they would be
    dealt = dict(conn.execute("SELECT block, deal_seeds FROM games GROUP BY block"))
    for row in rows:
        if row["block"] in dealt:
            row["deal_seeds"] = json.loads(dealt[row["block"]])
    games_of([r for r in rows if "deal_seeds" not in r], fixed.seed, fixed.dynasty,
             config.get("seed_secret"))
    return [{c: row[c] for c in BLOCK_COLUMNS} for row in rows]


def _old_sessions(config: dict) -> list[dict]:
    meta = config.get("meta") or {}
    count = max(1, int(meta.get("sessions") or 1))
    rows = [dict(session=k, started=None, command=None, kdtourney=None, games=None)
            for k in range(1, count + 1)]
    rows[0].update(started=meta.get("created"), command=meta.get("command"),
                   kdtourney=meta.get("kdtourney"))
    if count > 1:
        rows[-1]["command"] = meta.get("last_command")
    if "ladder" not in config and "tune" not in config:  # a run's games, an SPRT's cap
        rows[-1]["games"] = config["tournament"].get("games")
    return rows


def _upgrade(conn) -> None:
    """Bring a schema-1 store to this schema, in one transaction: its blocks and sessions
    recorded, its tournament's fixed settings written back, `ladder_blocks` folded into
    `blocks`."""
    with _transaction(conn):
        config = _raw_config(conn)
        blocks, sessions = _old_blocks(conn), _old_sessions(config)
        _execute(conn, _BLOCKS_SCHEMA)
        conn.executemany(
            f"INSERT INTO blocks ({', '.join(BLOCK_COLUMNS)}) VALUES "
            f"({', '.join('?' * len(BLOCK_COLUMNS))})", [_encoded(b) for b in blocks])
        conn.executemany(
            f"INSERT INTO sessions ({', '.join(SESSION_COLUMNS)}) VALUES "
            f"({', '.join('?' * len(SESSION_COLUMNS))})",
            [tuple(s[c] for c in SESSION_COLUMNS) for s in sessions])
        conn.execute("DROP TABLE IF EXISTS ladder_blocks")
        meta = dict(config.get("meta") or {}, upgraded_from_schema=config["schema_version"],
                    upgraded=now())
        conn.executemany("INSERT OR REPLACE INTO config (key, value) VALUES (?, ?)",
                         [(k, json.dumps(v, sort_keys=True)) for k, v in
                          (("tournament", _fixed_tournament(config)),
                           ("schema_version", SCHEMA_VERSION), ("meta", meta))])


LOADERS = {"results": load_results, "games": load_games, "faults": load_faults,
           "entrants": _export_entrants, "blocks": _export_blocks, "sessions": load_sessions}
EXPORT_FORMATS = ("csv", "parquet")


def load_tune_table(folder) -> pd.DataFrame:
    """The `tune` table (see the module docstring) ordered by k, lists decoded; empty if none."""
    import pandas as pd
    with _reading(folder) as (conn, _):
        if _has_table(conn, "tune"):
            df = pd.read_sql_query("SELECT * FROM tune ORDER BY k", conn)
            for c in ("theta", "signs", "plus", "minus", "after"):
                df[c] = [json.loads(v) for v in df[c]]
            return df
    return pd.DataFrame(columns=list(TUNE_COLUMNS))


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\0"
    except OSError:
        return False


def export_table(folder, path, fmt: str = "csv", table: str = "results") -> int:
    """Write one table of the store to `path` as CSV or Parquet; returns the number of rows.
    Parquet needs pyarrow (`pip install 'kdtourney[parquet]'`)."""
    if table not in LOADERS:
        raise StoreError(f"unknown table {table!r}; tables: {', '.join(LOADERS)}")
    if fmt not in EXPORT_FORMATS:
        raise StoreError(f"unknown format {fmt!r}; formats: {', '.join(EXPORT_FORMATS)}")
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise StoreError("Parquet export needs pyarrow: pip install 'kdtourney[parquet]'") from None
    path = Path(path)
    if _is_sqlite(path):
        raise StoreError(f"{path} is an SQLite database (a tournament's store?): export writes a "
                         "new file, it does not overwrite that")
    df = LOADERS[table](folder)
    try:
        if fmt == "csv":
            df.to_csv(path, index=False)
        else:
            df.to_parquet(path, index=False, engine="pyarrow")
    except ImportError:
        raise StoreError("Parquet export needs pyarrow: pip install 'kdtourney[parquet]'") from None
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None
    return len(df)


__all__ = ["Store", "StoreError", "open_store", "load_results", "load_games", "load_faults",
           "load_entrants", "load_config", "locked", "failed_games", "load_sprt", "load_tune_table",
           "load_ladder_entrants", "load_blocks", "load_sessions", "load_incoming", "export_table",
           "store_path", "STORE_FILE", "LOCK_FILE", "SCHEMA_VERSION", "RESULT_COLUMNS",
           "BLOCK_COLUMNS", "SESSION_COLUMNS", "SPRT_COLUMNS", "TUNE_COLUMNS", "TIMING_COLUMNS",
           "EXPORT_FORMATS"]
