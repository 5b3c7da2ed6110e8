"""kdtourney: tournaments and bot evaluation for Kingdomino.

The names a script needs, from the packages that hold them (docs/api.md):

    Game, GameView, Kingdom, Rules        the rules engine (kdtourney.engine)
    Bot, check_bot                        the bot contract and its conformance check
    BotRegistry                           finding bots: built-ins, folders, installed packages
    prepare, run_tournament               a tournament checked from input, then played
    load_results, load_games, reader      a tournament folder's store, read
    KdtourneyError, UserError             the errors kdtourney raises on purpose

Each is imported when first used, so that `import kdtourney` stays light (a command's fork
server imports the package before anything else).
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kdtourney")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

_PUBLIC = {
    "Game": "kdtourney.engine", "GameView": "kdtourney.engine", "Kingdom": "kdtourney.engine",
    "Rules": "kdtourney.engine", "Bot": "kdtourney.bots", "check_bot": "kdtourney.testing",
    "BotRegistry": "kdtourney.registry", "prepare": "kdtourney.tournament.definition",
    "run_tournament": "kdtourney.commands.run", "load_results": "kdtourney.store",
    "load_games": "kdtourney.store", "reader": "kdtourney.store",
    "KdtourneyError": "kdtourney.errors", "UserError": "kdtourney.errors",
}


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'kdtourney' has no attribute {name!r}")
    value = getattr(import_module(_PUBLIC[name]), name)
    globals()[name] = value  # the next use finds it without this call
    return value


def __dir__():
    return sorted([*globals(), *_PUBLIC])


__all__ = [*_PUBLIC, "__version__"]
