"""An example bot of several files: a module, its package `terrains/` and its data `weights.json`.

`KDTOURNEY_FILES` lists what the bot needs beside this file; kdtourney takes those files to every
worker (and counts them in the bot's code identity). See it with
`kdtourney bots --bots-dir examples/bundle`.
"""

import json
from pathlib import Path

from terrains import claim_value

from kdtourney.bots import Bot
from kdtourney.engine import DISCARD, decode_placement

KDTOURNEY_FILES = ["terrains", "weights.json"]
WEIGHTS = json.loads((Path(__file__).parent / "weights.json").read_text(encoding="utf-8"))


class TerrainTaster(Bot):
    """Claims the domino its terrain weights (weights.json) like best; places for the best score."""

    name = "terrain-taster"

    def act(self, view):
        legal = view.legal_actions()
        if view.phase == "claim":
            return max(legal, key=lambda action: claim_value(action, WEIGHTS))
        if legal == [DISCARD]:
            return DISCARD
        kingdom, domino = view.kingdom(view.player), view.domino_to_place

        def points(action):
            after = kingdom.copy()
            after.place(domino, decode_placement(action))
            return after.score().total
        return max(legal, key=points)
