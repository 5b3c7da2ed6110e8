"""An example bot: a file like this one in a bots folder (here in a folder of its own, which it
could share with its data and package) joins tournaments by its `name`.

See it with `kdtourney bots --bots-dir examples/bots`; test it with
`kdtourney.testing.check_bot(CrownGrabber, strict=True)`.
"""

from kdtourney.bots import Bot
from kdtourney.engine import CLAIM_BASE, DISCARD, TILES, decode_placement


class CrownGrabber(Bot):
    """Claims the free domino with the most crowns; places where its score gains most."""

    name = "crown-grabber"

    def __init__(self, prefer_high: bool = True):
        self.prefer_high = prefer_high  # break crown ties towards high domino numbers

    def act(self, view):
        legal = view.legal_actions()
        if view.phase == "claim":
            def crowns(action):
                domino = TILES[action - CLAIM_BASE]
                order = domino.number if self.prefer_high else -domino.number
                return domino.a.crowns + domino.b.crowns, order
            return max(legal, key=crowns)
        if legal == [DISCARD]:  # no room for the domino
            return DISCARD
        kingdom, domino = view.kingdom(view.player), view.domino_to_place

        def points(action):  # score after the placement; the first best wins ties
            after = kingdom.copy()
            after.place(domino, decode_placement(action))
            return after.score().total
        return max(legal, key=points)
