"""The store: the one way to read and write a tournament folder (DIR/tournament.sqlite). `schema`
holds its tables, the schema version, the check that a file is a store this kdtourney reads and
the upgrade of schema-1 folders; `writer` the writer (`Store`, `open_store`: one per command, one
transaction per game, the commands' own tables too); `reader` one consistent state of a folder
(`with reader(folder) as r: r.results(); r.games()`, one read transaction) and the path-taking
loaders over it (`load_results`, `load_games`, ...); `export` a table as CSV or Parquet
(`export_table`); `lock` the folder's lock while a command plays into it (`locked`); `deals` a
stored game replayed for what its rows do not say (`fault_calls`: each call at fault named as the
bot counts its calls). Each table's columns are described in docs/commands.md.
"""

from kdtourney.store.export import EXPORT_FORMATS, EXPORT_TABLES, export_table
from kdtourney.store.lock import locked
from kdtourney.store.reader import (
                                    Reader,
                                    StoredGame,
                                    failed_games,
                                    load_blocks,
                                    load_config,
                                    load_entrants,
                                    load_faults,
                                    load_games,
                                    load_incoming,
                                    load_ladder_entrants,
                                    load_notes,
                                    load_results,
                                    load_sessions,
                                    load_sprt,
                                    load_tune_table,
                                    reader,
)
from kdtourney.store.schema import (
                                    BLOCK_COLUMNS,
                                    LADDER_INTAKE,
                                    LOCK_FILE,
                                    RESULT_COLUMNS,
                                    SCHEMA_VERSION,
                                    SESSION_COLUMNS,
                                    SPRT_COLUMNS,
                                    STORE_FILE,
                                    TIMING_COLUMNS,
                                    TUNE_COLUMNS,
                                    StoreError,
                                    exists,
                                    now,
                                    store_path,
)
from kdtourney.store.writer import Store, open_store

__all__ = ["Store", "open_store", "Reader", "StoredGame", "reader", "StoreError", "load_results",
           "load_games", "load_faults", "load_entrants", "load_config", "load_blocks",
           "load_sessions", "load_incoming", "load_sprt", "load_tune_table",
           "load_ladder_entrants", "load_notes", "failed_games", "export_table", "locked",
           "exists", "now", "store_path", "STORE_FILE", "LOCK_FILE", "SCHEMA_VERSION",
           "LADDER_INTAKE", "RESULT_COLUMNS", "BLOCK_COLUMNS", "SESSION_COLUMNS", "SPRT_COLUMNS",
           "TUNE_COLUMNS", "TIMING_COLUMNS", "EXPORT_FORMATS", "EXPORT_TABLES"]
