"""The 48 dominoes of Kingdomino, and the terrain codes used everywhere in the engine.

`TILES[n]` is domino number n (1..48) as a `Domino`; `TILE_TERRAIN` and `TILE_CROWNS` are the same
data as read-only int64 arrays of shape (49, 2) (row 0 unused) for the kernels.
"""

import csv
from importlib.resources import files
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

# Terrain codes: plain ints so that kernels can use them.
EMPTY = 0
WHEAT = 1
FOREST = 2
LAKE = 3
GRASSLAND = 4
SWAMP = 5
MINE = 6
CASTLE = 7

TERRAINS = (WHEAT, FOREST, LAKE, GRASSLAND, SWAMP, MINE)
TERRAIN_NAMES = {WHEAT: "wheat", FOREST: "forest", LAKE: "lake",
                 GRASSLAND: "grassland", SWAMP: "swamp", MINE: "mine"}
TERRAIN_LETTERS = {WHEAT: "W", FOREST: "F", LAKE: "L", GRASSLAND: "G", SWAMP: "S", MINE: "M"}
N_DOMINOES = 48


class Half(NamedTuple):
    terrain: int
    crowns: int


class Domino(NamedTuple):
    number: int
    a: Half
    b: Half

    @property
    def symmetric(self) -> bool:
        """True when both halves are identical, so that swapping them changes nothing."""
        return self.a == self.b

    def __str__(self) -> str:
        def half(h):
            return TERRAIN_LETTERS[h.terrain] + str(h.crowns)
        return f"#{self.number} {half(self.a)}|{half(self.b)}"


def _load():
    by_name = {name: code for code, name in TERRAIN_NAMES.items()}
    tiles = {}
    with files("kdtourney.engine").joinpath("tiles.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            n = int(row["number"])
            tiles[n] = Domino(n, Half(by_name[row["terrain_a"]], int(row["crowns_a"])),
                              Half(by_name[row["terrain_b"]], int(row["crowns_b"])))
    assert sorted(tiles) == list(range(1, N_DOMINOES + 1)), "tiles.csv must list dominoes 1..48"
    return MappingProxyType(tiles)


TILES = _load()

TILE_TERRAIN = np.zeros((N_DOMINOES + 1, 2), dtype=np.int64)
TILE_CROWNS = np.zeros((N_DOMINOES + 1, 2), dtype=np.int64)
for _n, _d in TILES.items():
    TILE_TERRAIN[_n] = (_d.a.terrain, _d.b.terrain)
    TILE_CROWNS[_n] = (_d.a.crowns, _d.b.crowns)
TILE_TERRAIN.flags.writeable = False
TILE_CROWNS.flags.writeable = False
