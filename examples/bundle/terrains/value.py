from kdtourney.engine import CLAIM_BASE, TILES
from kdtourney.engine.tiles import TERRAIN_LETTERS


def claim_value(action: int, weights: dict) -> float:
    """A claim's worth: each half's terrain weight times one more than its crowns."""
    domino = TILES[action - CLAIM_BASE]
    return sum(weights[TERRAIN_LETTERS[half.terrain]] * (1 + half.crowns)
               for half in (domino.a, domino.b))
