"""Bots: the `Bot` contract, the built-in players and the registry that finds the others.

    from kdtourney.bots import Bot, BotRegistry
    registry = BotRegistry(["my_bots/"])     # built-ins, folders, entry points
    bot = registry.create("mcts:iterations=2000:c=0.7")

Nothing is discovered at import: building a `BotRegistry` does the discovery.
"""

from kdtourney.bots.base import Bot
from kdtourney.bots.registry import (BotInfo, BotRegistry, BotsDirError, BrokenModule,
                                     DuplicateBotError, Entrant, EntrantError, parse_entrant)

__all__ = ["Bot", "BotRegistry", "BotInfo", "BrokenModule", "Entrant", "EntrantError",
           "DuplicateBotError", "BotsDirError", "parse_entrant"]
