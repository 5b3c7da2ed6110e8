"""A slow, deliberately simple reference implementation of Kingdomino's kingdom rules.

The fast engine (kdtourney.engine) is checked against this module, so this module must stay
obviously correct rather than fast: plain dicts, brute force, no cleverness. It imports nothing
from kdtourney except the tile data and terrain codes.

A kingdom is a dict {(row, col): (terrain, crowns)}. The castle is at (0, 0) as (CASTLE, 0);
rows grow downwards, columns to the right; coordinates are relative to the castle. Empty squares
are simply absent from the dict.

A placement is ((ra, ca), (rb, cb)): the square covered by half a of the domino, then the square
covered by half b. For a domino whose two halves are identical (same terrain, same crowns),
((p), (q)) and ((q), (p)) are the same placement; `legal_placements` returns it once, in the
canonical form with a before b in (row, col) order (see `canonical`).

Rules followed (docs/rules.md, "Placement" and "Scoring"):
- a domino covers two orthogonally adjacent empty squares;
- at least one half is orthogonally adjacent to the castle or to a square of its own terrain;
- the whole kingdom, castle and new squares included, fits in a size x size square;
- a territory is a 4-connected group of same-terrain squares (the castle is in none) and scores
  squares x crowns;
- harmony (for a bare kingdom): +5 when the kingdom is a full size x size grid;
- middle kingdom: +10 when every square lies within the size x size square centred on the castle.
"""

from kdtourney.engine.tiles import CASTLE, TERRAIN_LETTERS, TILES

LETTER_TERRAIN = {letter: terrain for terrain, letter in TERRAIN_LETTERS.items()}
NEIGHBOUR_STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def neighbours(cell):
    """The four orthogonal neighbours of a cell."""
    r, c = cell
    return [(r + dr, c + dc) for dr, dc in NEIGHBOUR_STEPS]


# ---------------------------------------------------------------------------------------------
# Text format
# ---------------------------------------------------------------------------------------------

def parse_text(text):
    """Parse the engine's text format into a kingdom dict.

    One line per row of the kingdom's bounding box, cells separated by whitespace. A cell is
    `C` (castle), `.` (empty) or a terrain letter (W F L G S M) followed by its crowns 0..3;
    a bare letter means 0 crowns. Blank lines around the grid are ignored.
    """
    lines = [line.split() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        raise ValueError("empty kingdom text")
    width = len(lines[0])
    cells = {}
    castle = None
    for r, row in enumerate(lines):
        if len(row) != width:
            raise ValueError(f"line {r + 1}: {len(row)} cells, expected {width}")
        for c, token in enumerate(row):
            if token == ".":
                continue
            if token == "C":
                if castle is not None:
                    raise ValueError(f"line {r + 1}, column {c + 1}: second castle")
                castle = (r, c)
                continue
            letter, crowns = token[0], token[1:] or "0"
            if letter not in LETTER_TERRAIN or crowns not in ("0", "1", "2", "3"):
                raise ValueError(f"line {r + 1}, column {c + 1}: bad cell {token!r}")
            cells[(r, c)] = (LETTER_TERRAIN[letter], int(crowns))
    if castle is None:
        raise ValueError("no castle")
    kingdom = {(0, 0): (CASTLE, 0)}
    for (r, c), square in cells.items():
        kingdom[(r - castle[0], c - castle[1])] = square
    return kingdom


def to_text(kingdom):
    """The inverse of parse_text: the bounding box, `C`, `.` and letter+crowns cells."""
    rows = [r for r, _ in kingdom]
    cols = [c for _, c in kingdom]
    lines = []
    for r in range(min(rows), max(rows) + 1):
        cells = []
        for c in range(min(cols), max(cols) + 1):
            if (r, c) not in kingdom:
                cells.append(".")
            elif kingdom[(r, c)][0] == CASTLE:
                cells.append("C")
            else:
                terrain, crowns = kingdom[(r, c)]
                cells.append(TERRAIN_LETTERS[terrain] + str(crowns))
        lines.append(" ".join(cells))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Placement
# ---------------------------------------------------------------------------------------------

def fits(cells, size):
    """True when all the cells fit in a size x size square."""
    rows = [r for r, _ in cells]
    cols = [c for _, c in cells]
    return max(rows) - min(rows) < size and max(cols) - min(cols) < size


def half_connects(kingdom, cell, terrain):
    """True when a half of `terrain` on `cell` touches the castle or a square of its terrain."""
    for n in neighbours(cell):
        if n in kingdom and kingdom[n][0] in (CASTLE, terrain):
            return True
    return False


def canonical(placement):
    """The canonical form of a placement of a symmetric domino: a before b in (row, col) order."""
    a, b = placement
    return (a, b) if a <= b else (b, a)


def legal_placements(kingdom, domino_number, size=5):
    """All legal placements of domino `domino_number` in `kingdom`, as a set of ((ra,ca),(rb,cb)).

    Brute force: every cell within `size` of the castle for half a, each of its four neighbours
    for half b. Placements of a domino with identical halves are returned once, canonicalized
    (a before b in (row, col) order).
    """
    domino = TILES[domino_number]
    result = set()
    for ra in range(-size, size + 1):
        for ca in range(-size, size + 1):
            a = (ra, ca)
            for b in neighbours(a):
                if a in kingdom or b in kingdom:
                    continue
                if not (half_connects(kingdom, a, domino.a.terrain)
                        or half_connects(kingdom, b, domino.b.terrain)):
                    continue
                if not fits(list(kingdom) + [a, b], size):
                    continue
                result.add(canonical((a, b)) if domino.a == domino.b else (a, b))
    return result


def place(kingdom, domino_number, placement):
    """A new kingdom with the domino placed (no legality check)."""
    domino = TILES[domino_number]
    a, b = placement
    new = dict(kingdom)
    new[a] = (domino.a.terrain, domino.a.crowns)
    new[b] = (domino.b.terrain, domino.b.crowns)
    return new


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------

def territories_of(kingdom):
    """The territories: a list of lists of cells, each a 4-connected same-terrain group."""
    seen = set()
    groups = []
    for start, (terrain, _) in kingdom.items():
        if terrain == CASTLE or start in seen:
            continue
        group = []
        stack = [start]
        seen.add(start)
        while stack:
            cell = stack.pop()
            group.append(cell)
            for n in neighbours(cell):
                if n in kingdom and n not in seen and kingdom[n][0] == terrain:
                    seen.add(n)
                    stack.append(n)
        groups.append(group)
    return groups


def is_full_grid(kingdom, size=5):
    """True when the kingdom is a full size x size grid with no holes."""
    return len(kingdom) == size * size and fits(list(kingdom), size)


def is_middle_kingdom(kingdom, size=5):
    """True when every square lies within the size x size square centred on the castle."""
    half = size // 2
    return all(abs(r) <= half and abs(c) <= half for r, c in kingdom)


def score(kingdom, size=5, harmony=False, middle_kingdom=False):
    """Score a kingdom: a dict with total, territories, largest_territory, crowns, bonus.

    `harmony` and `middle_kingdom` switch the bonuses on; harmony here means a full grid (for a
    kingdom from a game, the caller decides harmony by discards and adds it itself).
    """
    groups = territories_of(kingdom)
    territories = sum(len(g) * sum(kingdom[cell][1] for cell in g) for g in groups)
    largest = max((len(g) for g in groups), default=0)
    crowns = sum(crowns for terrain, crowns in kingdom.values() if terrain != CASTLE)
    bonus = 0
    if harmony and is_full_grid(kingdom, size):
        bonus += 5
    if middle_kingdom and is_middle_kingdom(kingdom, size):
        bonus += 10
    return {"total": territories + bonus, "territories": territories,
            "largest_territory": largest, "crowns": crowns, "bonus": bonus}


# ---------------------------------------------------------------------------------------------
# Test data files (tests/data/golden_kingdoms.txt, tests/data/perft.txt)
# ---------------------------------------------------------------------------------------------

def read_cases(path):
    """Read a block-format data file: a list of dicts with the header keys and a `text` key.

    A block starts at a `# name: ...` line; its other `# key: value` header lines follow, then the
    grid lines (the kingdom text). `# expect: a=1 b=2` is split into ints under key `expect`.
    Comment lines (`#` without a recognised key) and lines before the first block are ignored.
    """
    keys = ("name", "size", "domino", "expect")
    cases = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            stripped = line.strip()
            if stripped.startswith("#"):
                key, sep, value = stripped[1:].partition(":")
                key, value = key.strip(), value.strip()
                if not sep or key not in keys:
                    continue
                if key == "name":
                    cases.append({"name": value, "line": lineno, "text": ""})
                elif key == "expect":
                    cases[-1]["expect"] = {k: int(v) for k, v in
                                           (item.split("=") for item in value.split())}
                else:
                    cases[-1][key] = int(value)
            elif stripped and cases:
                cases[-1]["text"] += stripped + "\n"
    return cases
