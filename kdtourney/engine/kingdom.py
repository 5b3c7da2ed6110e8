"""`Kingdom`: one player's grid, its text format, its legal placements and its score."""

from typing import NamedTuple

import numpy as np

from kdtourney.engine import kernels as K
from kdtourney.engine.tiles import CASTLE, EMPTY, TERRAIN_LETTERS, TILES

_LETTER_TERRAIN = {letter: t for t, letter in TERRAIN_LETTERS.items()}


class Placement(NamedTuple):
    """The squares covered by half a and half b of a domino, as (row, col) relative to the castle
    at (0, 0), rows growing downwards."""

    a: tuple[int, int]
    b: tuple[int, int]


class Score(NamedTuple):
    total: int              # territories + bonus
    territories: int        # sum over territories of squares x crowns
    bonus: int              # Harmony and Middle Kingdom points, as the rules switch them on
    largest_territory: int  # squares of the largest territory, crowns or not (first tie-break)
    crowns: int             # crowns in the whole kingdom (second tie-break)


_DIRECTIONS = {(0, 1): 0, (1, 0): 1, (0, -1): 2, (-1, 0): 3}


def encode_placement(placement: Placement, domino: int | None = None) -> int:
    """The place action of `placement`; with `domino` given, a symmetric domino's placement is
    written in its canonical direction (right or down), the one `legal_actions` lists."""
    (ra, ca), (rb, cb) = placement
    direction = _DIRECTIONS.get((rb - ra, cb - ca))
    if direction is None:
        raise ValueError(f"the two halves of {placement} are not orthogonally adjacent")
    if domino is not None and TILES[domino].symmetric and direction >= 2:
        return encode_placement(Placement(placement.b, placement.a))
    row, col = ra + K.CENTER, ca + K.CENTER
    if not (0 <= row < K.G and 0 <= col < K.G
            and 0 <= rb + K.CENTER < K.G and 0 <= cb + K.CENTER < K.G):
        raise ValueError(f"{placement} lies outside any kingdom")
    return (direction * K.G + row) * K.G + col


def decode_placement(action: int) -> Placement:
    """The Placement of a place action (0 <= action < 676)."""
    if not 0 <= action < K.N_PLACE_ACTIONS:
        raise ValueError(f"{action} is not a place action")
    direction, rest = divmod(action, K.G * K.G)
    row, col = divmod(rest, K.G)
    row -= K.CENTER
    col -= K.CENTER
    return Placement((row, col), (row + int(K.DIR_ROW[direction]), col + int(K.DIR_COL[direction])))


class Kingdom:
    """One player's kingdom on a size x size square (5, or 7 in Mighty Duel).

    Coordinates are (row, col) relative to the castle at (0, 0), rows growing downwards.
    """

    def __init__(self, size: int = 5):
        if size not in (5, 7):
            raise ValueError(f"a kingdom is 5x5 or 7x7, not {size}x{size}")
        self.size = size
        # kingdom 0 of the kernels' arrays (see kdtourney.engine.kernels)
        self._bits = np.zeros((1, K.kingdom_width(size)), dtype=np.int64)
        self._bbox = np.zeros((1, 4), dtype=np.int64)
        self._scratch = np.zeros((1, K.SCRATCH), dtype=np.int64)
        K.clear_kingdom(self._bits, self._bbox, 0, size)

    @classmethod
    def _from_arrays(cls, bits, bbox, size):
        """A copy of a kingdom of a game: bits[p] and bbox[p] of the kernels' arrays."""
        kingdom = cls.__new__(cls)
        kingdom.size = size
        kingdom._bits = bits[np.newaxis].copy()
        kingdom._bbox = bbox[np.newaxis].copy()
        kingdom._scratch = np.zeros((1, K.SCRATCH), dtype=np.int64)
        return kingdom

    @classmethod
    def from_squares(cls, squares, size: int = 5) -> "Kingdom":
        """The kingdom of these squares: a dict {(row, col): (terrain, crowns)} as `squares()` gives
        it, or (row, col, terrain, crowns) rows; the castle at (0, 0) may be listed. Squares off the
        grid, given twice, a second castle, a bad terrain or crown count raise ValueError (the
        placement rules are not checked: any land the rules allow, and more, can be described)."""
        rows = [(r, c, t, k) for (r, c), (t, k) in squares.items()] if isinstance(squares, dict) \
            else squares
        cells = [cell for cell in rows if not (cell[2] == CASTLE and cell[0] == cell[1] == 0)]
        for row, col, terrain, crowns in cells:
            if terrain not in TERRAIN_LETTERS or crowns not in (0, 1, 2, 3):
                raise ValueError(f"square ({row}, {col}): {(terrain, crowns)!r} is not a terrain "
                                 "code 1..6 with 0-3 crowns")
        places = [(row, col) for row, col, _, _ in cells] + [(0, 0)]
        if len(set(places)) < len(places):
            raise ValueError("a square is given twice (or is the castle's)")
        rs, cs = [r for r, _ in places], [c for _, c in places]
        height, width = max(rs) - min(rs) + 1, max(cs) - min(cs) + 1
        if height > size or width > size:
            raise ValueError(f"the squares span {height}x{width}, "
                             f"more than a {size}x{size} kingdom")
        kingdom = cls(size)
        if cells:
            K.set_squares(kingdom._bits, kingdom._bbox, 0, size, np.array(cells, dtype=np.int64),
                          len(cells))
        return kingdom

    # -- squares --------------------------------------------------------------------------------

    def square(self, row: int, col: int) -> tuple[int, int]:
        """(terrain, crowns) of a square; terrain EMPTY or CASTLE where there is no land."""
        code = int(K.square(self._bits, 0, self.size, row + K.CENTER, col + K.CENTER))
        return code >> 2, code & 3

    def bounds(self) -> tuple[int, int, int, int]:
        """(top, bottom, left, right) of the occupied rectangle, relative to the castle."""
        rmin, rmax, cmin, cmax = (int(v) - K.CENTER for v in self._bbox[0])
        return rmin, rmax, cmin, cmax

    def squares(self) -> dict[tuple[int, int], tuple[int, int]]:
        """Every occupied square, castle included: {(row, col): (terrain, crowns)}, row by row."""
        return {(r, c): (t, k) for r, c, t, k in self.square_array().tolist()}

    def square_array(self) -> np.ndarray:
        """`squares()` as an int64 array of (row, col, terrain, crowns) rows, row by row."""
        return square_array(self._bits, self._bbox, 0, self.size)

    # -- text -----------------------------------------------------------------------------------

    @classmethod
    def from_text(cls, text: str, size: int = 5) -> "Kingdom":
        """Parse the text format (see `to_text`); bad text raises ValueError naming line and
        column."""
        lines = text.splitlines()
        numbered = [(n, line.split()) for n, line in enumerate(lines, start=1)]
        while numbered and not numbered[0][1]:
            numbered.pop(0)
        while numbered and not numbered[-1][1]:
            numbered.pop()
        if not numbered:
            raise ValueError("no kingdom in the text: expected rows of cells with one castle C")
        width = len(numbered[0][1])
        castles = [(i, j) for i, (_, cells) in enumerate(numbered) for j, cell in enumerate(cells)
                   if cell == "C"]
        for line_no, cells in numbered:
            if len(cells) != width:
                raise ValueError(f"line {line_no}, column {min(len(cells), width) + 1}: "
                                 f"row has {len(cells)} cells, the first row has {width}")
        if len(castles) != 1:
            where = "; ".join(f"line {numbered[i][0]}, column {j + 1}" for i, j in castles)
            raise ValueError(f"line {numbered[0][0]}, column 1: "
                             f"a kingdom has exactly one castle C, "
                             f"found {len(castles)}{': ' + where if where else ''}")
        if len(numbered) > size or width > size:
            raise ValueError(f"line {numbered[0][0]}, column 1: "
                             f"the grid is {len(numbered)}x{width}, "
                             f"larger than the kingdom's {size}x{size}")
        ci, cj = castles[0]
        squares = []
        for i, (line_no, cells) in enumerate(numbered):
            for j, cell in enumerate(cells):
                if cell in ("C", "."):
                    continue
                terrain = _LETTER_TERRAIN.get(cell[0])
                crowns = cell[1:] or "0"
                if terrain is None or crowns not in ("0", "1", "2", "3"):
                    raise ValueError(f"line {line_no}, column {j + 1}: {cell!r} is not a cell "
                                     "(C, ., or W/F/L/G/S/M followed by 0-3 crowns)")
                squares.append((i - ci, j - cj, terrain, int(crowns)))
        return cls.from_squares(squares, size)

    def to_text(self) -> str:
        """One line per row of the occupied rectangle; cells `C`, `.`, or terrain letter +
        crowns."""
        top, bottom, left, right = self.bounds()
        lines = []
        for row in range(top, bottom + 1):
            cells = []
            for col in range(left, right + 1):
                terrain, crowns = self.square(row, col)
                if terrain == EMPTY:
                    cells.append(".")
                elif terrain == CASTLE:
                    cells.append("C")
                else:
                    cells.append(f"{TERRAIN_LETTERS[terrain]}{crowns}")
            lines.append(" ".join(cells))
        return "\n".join(lines)

    __str__ = to_text

    def __repr__(self):
        return f"Kingdom.from_text({self.to_text()!r}, size={self.size})"

    def __eq__(self, other):
        return isinstance(other, Kingdom) and self.size == other.size \
            and self.squares() == other.squares()

    def copy(self) -> "Kingdom":
        return Kingdom._from_arrays(self._bits[0], self._bbox[0], self.size)

    # -- rules ----------------------------------------------------------------------------------

    def _check_domino(self, domino):
        if domino not in TILES:
            raise ValueError(f"there is no domino number {domino!r} (dominoes are 1..48)")

    def legal_placements(self, domino: int) -> list[Placement]:
        """Every distinct legal placement of domino number `domino`; empty when it must be
        discarded.

        For a domino whose halves are identical, each pair of squares appears once.
        """
        self._check_domino(domino)
        K.legal_moves(self._bits, self._bbox, 0, self.size, domino, self._scratch, 0)
        actions = np.empty((1, K.MAX_ACTIONS), dtype=np.int64)
        n = K.moves_to_actions(self._scratch, 0, self.size, actions, 0)
        return [decode_placement(int(a)) for a in actions[0, :n]]

    def place(self, domino: int, placement: Placement) -> None:
        """Put a domino on the kingdom; an illegal placement raises ValueError."""
        self._check_domino(domino)
        placement = Placement(*placement)
        try:
            action = encode_placement(placement, domino)
        except ValueError as err:
            raise ValueError(f"illegal placement of {TILES[domino]}: {err}") from None
        if not K.is_legal_placement(self._bits, self._bbox, 0, self.size, domino, action,
                                    self._scratch, 0):
            raise ValueError(f"illegal placement of {TILES[domino]} at {placement}")
        K.place(self._bits, self._bbox, 0, self.size, domino, action)

    def score(self, rules=None) -> Score:
        """Score by territories; with `rules`, plus their bonuses (Harmony: a full size x size
        grid)."""
        points, largest, crowns = K.score_territories(self._bits, self._bbox, 0, self.size)
        bonus = 0
        if rules is not None:
            if rules.size != self.size:
                raise ValueError(f"rules for {rules.size}x{rules.size} kingdoms do not apply to a "
                                 f"{self.size}x{self.size} kingdom")
            full = K.land_squares(self._bits, 0, self.size) == self.size ** 2
            bonus = int(K.bonus_points(self._bbox, 0, self.size, flags_of(rules), full))
        return Score(int(points) + bonus, int(points), bonus, int(largest), int(crowns))


def square_array(bits, bbox, p, size) -> np.ndarray:
    """The occupied squares of kingdom p of the kernels' arrays (see Kingdom.square_array)."""
    out = np.empty((49, 4), dtype=np.int64)
    return out[:K.list_squares(bits, bbox, p, size, out)]


def flags_of(rules) -> int:
    """The kernels' flag bits for `rules`."""
    return ((K.FLAG_HARMONY if rules.harmony else 0)
            | (K.FLAG_MIDDLE if rules.middle_kingdom else 0)
            | (K.FLAG_TIEBREAK_TERRITORY if rules.tiebreak == "territory" else 0)
            | (K.FLAG_ABBA if rules.first_picks == "abba" else 0))
