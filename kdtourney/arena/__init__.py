"""The arena: scheduling, playing and storing tournaments.

    schedule.py    which games: formats, blocks of seat arrangements, seeds (pure functions)
    match.py       the game loop with the fairness rules (faults forfeit the game)
    runner.py      worker processes, batches, dead/hung workers, one commit per finished game
    cluster.py     the same on a Dask cluster
    workers.py     what a worker of either backend does: bot factories, warm-up
    forfeit.py     games whose worker died or hung: replay, forfeit or fail (both backends)
    store.py       the SQLite store and its pandas API (load_results, load_games, load_entrants,
                   export_table), the folder lock
    tournament.py  the Tournament definition, checked from user input (prepare)
    progress.py    the terminal progress display
"""

from kdtourney.arena.store import (StoreError, export_table, load_config, load_faults, load_games,
                                   load_results, open_store)
from kdtourney.arena.tournament import ArenaError, Tournament, prepare

__all__ = ["Tournament", "ArenaError", "StoreError", "prepare", "open_store", "load_results",
           "load_games", "load_faults", "load_config", "export_table", "run_tournament"]


def run_tournament(*args, **kwargs):
    """See kdtourney.arena.runner.run_tournament."""
    from kdtourney.arena.runner import run_tournament as run

    return run(*args, **kwargs)
