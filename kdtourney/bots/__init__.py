"""Bots: the `Bot` contract and the built-in players.

    from kdtourney.bots import Bot

Finding bots (built-ins, folders, entry points) is kdtourney.registry's.
"""

from kdtourney.bots.base import Bot

__all__ = ["Bot"]
