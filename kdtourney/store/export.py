"""Export: one table of a tournament store written as CSV or Parquet.

    export_table(folder, path, fmt="csv", table="results") -> rows written
    EXPORT_TABLES, EXPORT_FORMATS     the tables and formats it writes

The tables are read as `kdtourney.store.reader` gives them (one state of the store), but for
`entrants` (the identity as JSON text), `blocks` (seats, entrants and deal seeds as the JSON text
the store holds) and `faults` (`bot_call` beside `call`: the call as the pages name it).
StoreError (one line) for an unknown table or format, Parquet without pyarrow, a path that is an
SQLite file, or a file that cannot be written.
"""

from __future__ import annotations

import json
from pathlib import Path

from kdtourney.store.deals import fault_calls, rules_for
from kdtourney.store.reader import Reader, reader
from kdtourney.store.schema import StoreError


def _entrants(r: Reader):
    """The entrants table with each identity as JSON text."""
    df = r.entrants()
    df["identity"] = [None if i is None else json.dumps(i, sort_keys=True) for i in df["identity"]]
    return df


def _faults(r: Reader):
    """The faults table with `bot_call` beside `call`: the call named as the bot counts its calls
    and as the report and `replay` name it ('act 3'; `deals.fault_calls`), empty where unknown
    (a failed game's rows, a game that cannot be replayed from its row)."""
    df = r.faults()
    rules = r.config()["tournament"].get("rules", {})
    tables: dict = {}
    named: list = []
    for f in df.to_dict("records"):
        call = None
        stored = r.game(int(f["game"])) if f["kind"] != "failed" else None
        if stored is not None:
            n = int(stored.row["n_players"])
            try:
                table = tables.get(n) or tables.setdefault(n, rules_for(rules, n))
                [placed] = fault_calls(stored.row, table, [f])
                call = None if placed is None else placed[1]
            except (ValueError, KeyError, TypeError, IndexError):  # a row changed by hand
                call = None
        named.append(call)
    df.insert(df.columns.get_loc("call") + 1, "bot_call", named)
    return df


EXPORT_TABLES = {"results": lambda r: r.results(), "games": lambda r: r.games(),
                 "faults": _faults, "entrants": _entrants,
                 "blocks": lambda r: r.blocks(decode=False), "sessions": lambda r: r.sessions(),
                 "notes": lambda r: r.notes()}
EXPORT_FORMATS = ("csv", "parquet")
PARQUET_NEEDS = "Parquet export needs pyarrow: pip install 'kdtourney[parquet]'"


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\0"
    except OSError:
        return False


def export_table(folder, path, fmt: str = "csv", table: str = "results") -> int:
    """Write one table of the store in `folder` to `path` as CSV or Parquet; returns the number of
    rows. Parquet needs pyarrow (`pip install 'kdtourney[parquet]'`)."""
    if table not in EXPORT_TABLES:
        raise StoreError(f"unknown table {table!r}; tables: {', '.join(EXPORT_TABLES)}")
    if fmt not in EXPORT_FORMATS:
        raise StoreError(f"unknown format {fmt!r}; formats: {', '.join(EXPORT_FORMATS)}")
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401  (an optional dependency: the extra `parquet`)
        except ImportError:
            raise StoreError(PARQUET_NEEDS) from None
    path = Path(path)
    if _is_sqlite(path):
        raise StoreError(f"{path} is an SQLite database (a tournament's store?): export writes a "
                         "new file, it does not overwrite that")
    with reader(folder) as r:
        df = EXPORT_TABLES[table](r)
    try:
        if fmt == "csv":
            df.to_csv(path, index=False)
        else:
            df.to_parquet(path, index=False, engine="pyarrow")
    except ImportError:
        raise StoreError(PARQUET_NEEDS) from None
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None
    return len(df)
