"""The rules of Kingdomino: a Numba-compiled engine behind a small public API.

Public: TILES, Rules, Kingdom, Placement, Score, Game, GameView, the action helpers. The kernels in
`_kernels` take and return arrays; search bots may call them directly through `Game.arrays`.
"""

from kdtourney.engine.game import (CLAIM_BASE, DISCARD, Game, GameView, claim_action,
                                   describe_action)
from kdtourney.engine.kingdom import Kingdom, Placement, Score, decode_placement, encode_placement
from kdtourney.engine.rules import Rules
from kdtourney.engine.tiles import TILES, Domino, Half

__all__ = ["TILES", "Domino", "Half", "Rules", "Kingdom", "Placement", "Score", "Game", "GameView",
           "DISCARD", "CLAIM_BASE", "claim_action", "describe_action", "encode_placement",
           "decode_placement"]
