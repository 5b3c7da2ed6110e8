"""The layout of a tournament store, `DIR/tournament.sqlite`: its tables, the schema version, the
check that a file is a store this kdtourney reads, and the stores of schema 1 read and upgraded.

    STORE_FILE, LOCK_FILE, SCHEMA_VERSION, each table's *_COLUMNS, LADDER_INTAKE
    StoreError                 a missing, corrupt, foreign or newer store (the message: one line)
    store_path(folder), exists(folder), now()
    connect_read_only(path), checked_config(conn, path), check(path): a store's config, checked
    read_config(conn), has_table(conn, name), transaction(conn), insert(table, columns),
    run_script(conn, script), encode_block(block), plain(value): what reader and writer share
    implied_blocks(conn), implied_sessions(config), upgrade(conn): the stores of schema 1

Each table's columns are described in docs/commands.md ("The store's tables").
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import sqlite3
from pathlib import Path

from kdtourney.errors import UserError
from kdtourney.tournament.blocks import games_of
from kdtourney.tournament.definition import Tournament
from kdtourney.tournament.tune import MINUS, PLUS, Tune

STORE_FILE = "tournament.sqlite"
LOCK_FILE = "tournament.lock"
APPLICATION = "kdtourney"  # config `application`: tells our files from foreign ones
SCHEMA_VERSION = 2  # 1: before the tables blocks and sessions
REQUIRED_TABLES = ("games", "results", "faults")
LADDER_INTAKE = "ladder_intake"  # config: the last look's notes (the bots that did not enter)

# config: key -> JSON value (application, schema_version, tournament, meta, ...)
# games: one row per game stored; results: one row per player per game; faults: one row per
# forfeit, or per seat of a game that could not be finished ('failed')
SCHEMA = """
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
# blocks: one row per block scheduled, before any of its games is played; sessions: one row per
# command that played into the folder (schema 2)
BLOCKS_SCHEMA = """
CREATE TABLE blocks (
    block INTEGER PRIMARY KEY, first_game INTEGER NOT NULL, n_players INTEGER NOT NULL,
    seats TEXT NOT NULL, entrants TEXT NOT NULL, deal_seeds TEXT NOT NULL, scheduled TEXT NOT NULL,
    cancelled INTEGER NOT NULL DEFAULT 0);
CREATE TABLE sessions (
    session INTEGER PRIMARY KEY, started TEXT, command TEXT, kdtourney TEXT, games INTEGER);
"""
# entrants: what code each entrant played (its identity), checked on every resume
ENTRANTS_SCHEMA = ("CREATE TABLE IF NOT EXISTS entrants (entrant TEXT PRIMARY KEY, digest TEXT, "
                   "identity TEXT)")
# the commands' own tables: an SPRT's test block by block, a tune's iterations, a ladder's entrants
SPRT_SCHEMA = ("CREATE TABLE IF NOT EXISTS sprt (block INTEGER PRIMARY KEY, llr REAL, lower REAL, "
               "upper REAL, elo REAL, lo REAL, hi REAL)")
TUNE_SCHEMA = ("CREATE TABLE IF NOT EXISTS tune (k INTEGER PRIMARY KEY, batch INTEGER, "
               "theta TEXT, signs TEXT, plus TEXT, minus TEXT, result REAL, after TEXT)")
LADDER_SCHEMA = """
CREATE TABLE IF NOT EXISTS ladder_entrants (
    label TEXT PRIMARY KEY, spec TEXT NOT NULL, version INTEGER NOT NULL, digest TEXT, origin TEXT,
    status TEXT NOT NULL, added TEXT NOT NULL, changed TEXT NOT NULL, note TEXT)"""

GAME_COLUMNS = ("game", "block", "arrangement", "seed", "deal_seeds", "n_players", "status",
                "duration", "moves", "error", "finished_at")
RESULT_COLUMNS = ("game", "seat", "entrant", "score", "rank", "win_share", "margin",
                  "largest_territory", "crowns", "discards", "fault", "time_total", "time_max",
                  "decisions")
FAULT_COLUMNS = ("game", "seat", "entrant", "kind", "message", "call", "stderr")
# notes: the notes bots attached to their decisions (KDTP's optional `note`), made with the first
NOTES_SCHEMA = ("CREATE TABLE IF NOT EXISTS notes (game INTEGER NOT NULL, deal INTEGER NOT NULL, "
                "move INTEGER NOT NULL, seat INTEGER NOT NULL, note TEXT NOT NULL, "
                "PRIMARY KEY (game, deal, move))")
NOTE_COLUMNS = ("game", "deal", "move", "seat", "note")
BLOCK_COLUMNS = ("block", "first_game", "n_players", "seats", "entrants", "deal_seeds",
                 "scheduled", "cancelled")
BLOCK_JSON_COLUMNS = ("seats", "entrants", "deal_seeds")
SESSION_COLUMNS = ("session", "started", "command", "kdtourney", "games")
SPRT_COLUMNS = ("block", "llr", "lower", "upper", "elo", "lo", "hi")
TUNE_COLUMNS = ("k", "batch", "theta", "signs", "plus", "minus", "result", "after")
TUNE_JSON_COLUMNS = ("theta", "signs", "plus", "minus", "after")
LADDER_ENTRANT_COLUMNS = ("label", "spec", "version", "digest", "origin", "status", "added",
                          "changed", "note")
TIMING_COLUMNS = {"games": ("duration", "finished_at"), "results": ("time_total", "time_max")}


class StoreError(UserError):
    """A missing, corrupt, foreign or newer store, or a failed export; the message is one line."""


def now() -> str:
    """The time now, UTC, ISO 8601 to the second: what the store records."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def store_path(folder) -> Path:
    return Path(folder) / STORE_FILE


def exists(folder) -> bool:
    """Whether `folder` holds a store file (valid or not)."""
    return store_path(folder).exists()


# --------------------------------------------------------------------------------------------------
# A store this kdtourney reads
# --------------------------------------------------------------------------------------------------


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the file at `path`; StoreError if there is no file."""
    if not path.is_file():
        raise StoreError(f"no tournament in {path.parent} (no {STORE_FILE})")
    try:
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from None


def checked_config(conn, path: Path) -> dict:
    """The config of the store `conn` reads (at `path`, which the messages name); StoreError if it
    is not a kdtourney store this version can read. A schema-1 store's `tournament` is given as its
    fixed settings (`fixed_tournament`)."""
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        config = read_config(conn) if "config" in names else None
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is corrupt or not an SQLite database ({exc}); use another "
                         "folder") from None
    except (ValueError, TypeError) as exc:
        raise StoreError(f"{path} has an unreadable config table ({exc})") from None
    if config is None:
        raise StoreError(f"{path} is not a kdtourney tournament (an SQLite file without our "
                         "config table); use another folder")
    if config.get("application") != APPLICATION:
        raise StoreError(f"{path} is not a kdtourney tournament (no kdtourney marker in its "
                         "config table); use another folder")
    version = config.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise StoreError(f"{path} has store schema {version!r}, this kdtourney reads up to "
                         f"{SCHEMA_VERSION}: upgrade kdtourney")
    missing = [t for t in REQUIRED_TABLES if t not in names]
    if missing or "tournament" not in config:
        raise StoreError(f"{path} is an incomplete kdtourney store (missing "
                         f"{', '.join(missing) or 'tournament config'})")
    if version < 2:
        config["tournament"] = fixed_tournament(config)
    return config


def check(path: Path) -> dict:
    """The config of the store at `path`, read without writing anything (`checked_config`)."""
    conn = connect_read_only(path)
    try:
        return checked_config(conn, path)
    finally:
        conn.close()


# --------------------------------------------------------------------------------------------------
# What reading and writing share
# --------------------------------------------------------------------------------------------------


def read_config(conn) -> dict:
    """The config table as it is: {key: value decoded from JSON}."""
    return {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM config")}


def has_table(conn, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                        (name,)).fetchone() is not None


def run_script(conn, script: str) -> None:
    """Execute the statements of `script` one by one (inside the caller's transaction)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def insert(table: str, columns, verb: str = "INSERT") -> str:
    """The statement inserting one row of `columns` into `table` (parameters `?`)."""
    return (f"{verb} INTO {table} ({', '.join(columns)}) VALUES "
            f"({', '.join('?' * len(columns))})")


class transaction:
    """`with transaction(conn):` one write transaction (BEGIN IMMEDIATE), rolled back on error.
    One that a Ctrl-C left open (its KeyboardInterrupt raised after BEGIN returned and before the
    block began, so no exit ran) never committed: the next transaction rolls it back first."""

    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, exc, tb):
        self.conn.execute("COMMIT" if kind is None else "ROLLBACK")


def encode_block(block: dict, when: str | None = None) -> tuple:
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


def plain(value):
    """A value as SQLite stores it (a bool as 0 or 1)."""
    if isinstance(value, bool):
        return int(value)
    return value


# --------------------------------------------------------------------------------------------------
# Stores of schema 1 (kdtourney before the tables blocks and sessions): read as they are, upgraded
# when opened for writing. Their config `tournament` was rewritten for each of a ladder's chunks
# (its entrants), a tune's batches (theta+ and theta- of every iteration appended) and an SPRT's
# sessions (its cap); their blocks follow from that and the ladder's and tune's tables.
# --------------------------------------------------------------------------------------------------


def fixed_tournament(config: dict) -> dict:
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


def implied_blocks(conn) -> list[dict]:
    """The block records a schema-1 store implies (BLOCK_COLUMNS): a run's plan, an SPRT's blocks
    with games stored, a tune's iterations (the `tune` table's, and those of the batch it was
    killed in), a ladder's `ladder_blocks`."""
    config = read_config(conn)
    stored = config["tournament"]
    fixed = Tournament.from_dict(fixed_tournament(config))
    if "ladder" in config:
        rows = _ladder_blocks(conn)
    elif "tune" in config:
        rows = _tune_blocks(conn, config, fixed)
    else:
        # an SPRT may have stored games past the cap it was given last
        last_game, last_block = (-1 if v is None else int(v) for v in conn.execute(
            "SELECT MAX(game), MAX(block) FROM games").fetchone())
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


def _ladder_blocks(conn) -> list[dict]:
    if not has_table(conn, "ladder_blocks"):
        return []
    specs = dict(conn.execute("SELECT label, spec FROM ladder_entrants"))
    rows = [dict(block=b, first_game=f, n_players=n, seats=json.loads(seats), scheduled=when,
                 cancelled=c)
            for b, f, n, seats, when, c in conn.execute(
                "SELECT block, first_game, n_players, seats, scheduled, cancelled "
                "FROM ladder_blocks ORDER BY block")]
    for row in rows:
        row["entrants"] = {label: specs[label] for label in row["seats"]}
    return rows


def _tune_blocks(conn, config: dict, fixed: Tournament) -> list[dict]:
    stored = config["tournament"]
    tune = Tune.from_dict(config["tune"])
    plays = {}  # iteration -> (theta+'s spec, theta-'s)
    if has_table(conn, "tune"):
        for k, plus, minus in conn.execute("SELECT k, plus, minus FROM tune"):
            plays[k] = (tune.spec(json.loads(plus)), tune.spec(json.loads(minus)))
    extra = list(zip(stored["specs"], stored["entrants"]))[len(fixed.entrants):]
    for j in range(len(extra) // 2):  # the batch it was killed in, in order
        plays[max(plays, default=0) + 1] = (extra[2 * j][0], extra[2 * j + 1][0])
    n = fixed.players[0]
    assert fixed.lineup is not None  # a tune plays a lineup
    seats = [fixed.entrants[i] for i in fixed.lineup]
    return [dict(block=b, first_game=b * n, n_players=n, seats=seats,
                 entrants=dict(zip(fixed.entrants, fixed.specs), **{PLUS: p, MINUS: m}))
            for k, (p, m) in sorted(plays.items())
            for b in range((k - 1) * tune.blocks, k * tune.blocks)]


def implied_sessions(config: dict) -> list[dict]:
    """The sessions a schema-1 store's meta counts (SESSION_COLUMNS), what it does not record
    left None."""
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


def upgrade(conn) -> None:
    """Bring a schema-1 store to this schema, in one transaction: its blocks and sessions
    recorded, its tournament's fixed settings written back, `ladder_blocks` folded into
    `blocks`."""
    with transaction(conn):
        config = read_config(conn)
        blocks, sessions = implied_blocks(conn), implied_sessions(config)
        run_script(conn, BLOCKS_SCHEMA)
        conn.executemany(insert("blocks", BLOCK_COLUMNS), [encode_block(b) for b in blocks])
        conn.executemany(insert("sessions", SESSION_COLUMNS),
                         [tuple(s[c] for c in SESSION_COLUMNS) for s in sessions])
        conn.execute("DROP TABLE IF EXISTS ladder_blocks")
        meta = dict(config.get("meta") or {}, upgraded_from_schema=config["schema_version"],
                    upgraded=now())
        conn.executemany(insert("config", ("key", "value"), "INSERT OR REPLACE"),
                         [(k, json.dumps(v, sort_keys=True)) for k, v in
                          (("tournament", fixed_tournament(config)),
                           ("schema_version", SCHEMA_VERSION), ("meta", meta))])
