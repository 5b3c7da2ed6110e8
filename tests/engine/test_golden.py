"""The engine's Kingdom against the golden data (tests/data) and the naive reference
(tests/naive.py)."""

import re
from pathlib import Path

import naive
import pytest

from kdtourney.engine import Kingdom, Placement, Rules
from kdtourney.engine.tiles import TILES

DATA = Path(__file__).resolve().parent.parent / "data"
GOLDEN = naive.read_cases(DATA / "golden_kingdoms.txt")
PERFT = naive.read_cases(DATA / "perft.txt")


def ids(cases):
    return [c["name"] for c in cases]


def rules_for(size, harmony, middle_kingdom, players=4):
    if size == 7:
        return Rules(players=2, variant="duel", harmony=harmony, middle_kingdom=middle_kingdom)
    return Rules(players=players, harmony=harmony, middle_kingdom=middle_kingdom)


def engine_placements(kingdom, domino):
    """The engine's legal placements as a set of ((ra,ca),(rb,cb)), canonical for symmetric
    dominoes."""
    placements = kingdom.legal_placements(domino)
    assert all(isinstance(p, Placement) for p in placements)
    pairs = [(tuple(p.a), tuple(p.b)) for p in placements]
    if TILES[domino].symmetric:
        pairs = [naive.canonical(p) for p in pairs]
    assert len(pairs) == len(set(pairs)), f"duplicate placements of #{domino}: {sorted(pairs)}"
    return set(pairs)


# --- scores -------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", GOLDEN, ids=ids(GOLDEN))
def test_golden_score_without_rules(case):
    k = Kingdom.from_text(case["text"], size=case["size"])
    s = k.score()
    e = case["expect"]
    assert (s.total, s.territories, s.largest_territory, s.crowns, s.bonus) == (
        e["total"], e["territories"], e["largest_territory"], e["crowns"], 0)


@pytest.mark.parametrize("case", GOLDEN, ids=ids(GOLDEN))
@pytest.mark.parametrize("harmony,middle_kingdom,key", [
    (False, False, "total"), (True, False, "harmony"), (False, True, "middle_kingdom"),
    (True, True, "both")])
@pytest.mark.parametrize("players", [2, 4])
def test_golden_score_with_bonuses(case, harmony, middle_kingdom, key, players):
    k = Kingdom.from_text(case["text"], size=case["size"])
    s = k.score(rules=rules_for(case["size"], harmony, middle_kingdom, players))
    e = case["expect"]
    assert s.total == e[key]
    assert s.bonus == e[key] - e["total"]
    assert (s.territories, s.largest_territory, s.crowns) == (
        e["territories"], e["largest_territory"], e["crowns"])


# --- placements ---------------------------------------------------------------------------------

@pytest.mark.parametrize("case", PERFT, ids=ids(PERFT))
def test_perft(case):
    k = Kingdom.from_text(case["text"], size=case["size"])
    placements = k.legal_placements(case["domino"])
    assert len(placements) == case["expect"]["placements"]
    assert engine_placements(k, case["domino"]) == naive.legal_placements(
        naive.parse_text(case["text"]), case["domino"], case["size"])


@pytest.mark.parametrize("case", PERFT + GOLDEN, ids=ids(PERFT) + ids(GOLDEN))
def test_placements_of_every_domino(case):
    """On every data kingdom, every domino's placements agree with naive."""
    k = Kingdom.from_text(case["text"], size=case["size"])
    ref = naive.parse_text(case["text"])
    for domino in TILES:
        assert engine_placements(k, domino) == naive.legal_placements(ref, domino, case["size"]), (
            f"domino #{domino} on\n{case['text']}")


@pytest.mark.parametrize("case", PERFT, ids=ids(PERFT))
def test_place_legal_and_illegal(case):
    """Every legal placement can be placed and gives naive's kingdom; every other pair of adjacent
    squares near the kingdom raises ValueError and leaves the kingdom unchanged."""
    size, domino = case["size"], case["domino"]
    ref = naive.parse_text(case["text"])
    legal = naive.legal_placements(ref, domino, size)
    for a, b in legal:
        k = Kingdom.from_text(case["text"], size=size)
        k.place(domino, Placement(a, b))
        assert naive.parse_text(k.to_text()) == naive.place(ref, domino, (a, b))
    symmetric = TILES[domino].symmetric
    for ra in range(-size + 1, size):
        for ca in range(-size + 1, size):
            a = (ra, ca)
            for b in naive.neighbours(a):
                if (naive.canonical((a, b)) if symmetric else (a, b)) in legal:
                    continue
                k = Kingdom.from_text(case["text"], size=size)
                with pytest.raises(ValueError):
                    k.place(domino, Placement(a, b))
                assert naive.parse_text(k.to_text()) == ref


def test_place_rejects_obvious_mistakes():
    k = Kingdom.from_text("C W0", size=5)
    before = k.to_text()
    for placement in [((0, 1), (0, 2)),    # on a wheat square
                      ((0, 0), (1, 0)),    # on the castle
                      ((1, 0), (1, 2)),    # halves not adjacent
                      ((1, 0), (1, 0)),    # both halves on one square
                      ((2, 2), (2, 3)),    # touches nothing
                      ((0, 3), (0, 2)),    # lake half next to wheat, wheat half next to nothing
                      ]:
        with pytest.raises(ValueError):
            k.place(14, Placement(*placement))
        assert k.to_text() == before
    with pytest.raises(ValueError):
        k.place(49, Placement((1, 0), (2, 0)))
    k.place(14, Placement((0, 2), (0, 3)))
    assert naive.parse_text(k.to_text()) == naive.parse_text("C W0 W0 L0")
    with pytest.raises(ValueError):  # would make the kingdom six wide
        k.place(1, Placement((0, -1), (0, -2)))
    with pytest.raises(ValueError):
        k.place(1, Placement((0, 4), (0, 5)))


def test_symmetric_placement_either_way_round():
    """A symmetric domino may be placed naming its halves in either order."""
    for a, b in [((0, 1), (0, 2)), ((0, 2), (0, 1)), ((1, 0), (2, 0)), ((2, 0), (1, 0))]:
        k = Kingdom.from_text("C", size=5)
        k.place(1, Placement(a, b))
        assert naive.parse_text(k.to_text()) == naive.place(naive.parse_text("C"), 1, (a, b))


# --- text ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", GOLDEN + PERFT, ids=ids(GOLDEN) + ids(PERFT))
def test_text_round_trip(case):
    k = Kingdom.from_text(case["text"], size=case["size"])
    assert naive.parse_text(k.to_text()) == naive.parse_text(case["text"])
    again = Kingdom.from_text(k.to_text(), size=case["size"])
    assert again.to_text() == k.to_text()
    assert again == k


def test_text_details():
    k = Kingdom.from_text("\n\n   W F1\n   . C\n\n", size=5)
    assert naive.parse_text(k.to_text()) == naive.parse_text("W0 F1\n. C")
    assert naive.parse_text(Kingdom.from_text("C", size=7).to_text()) == {
        (0, 0): naive.parse_text("C")[(0, 0)]}


LOCATION = re.compile(r"line (\d+), column (\d+)")


@pytest.mark.parametrize("text,size,where", [
    ("C W0\nW0 C", 5, (2, 2)),                   # two castles: the second one
    ("W0 W0\nW0 W1", 5, None),                   # no castle
    ("C W0 W0\nW0 W0", 5, (2, None)),            # ragged rows
    ("C W0\nW0 W0 W0", 5, (2, None)),
    ("\nC W0\nW0 X1", 5, (3, 2)),                # unknown letter (blank lines count)
    ("C W0\nW0 W4", 5, (2, 2)),                  # four crowns
    ("C W0 W0 W0 W0 W0", 5, None),               # six wide
    ("C\nW0\nW0\nW0\nW0\nW0", 5, None),          # six tall
    ("C W0 W0 W0 W0 W0 W0 W0", 7, None),         # eight wide in a 7x7
])
def test_bad_text(text, size, where):
    with pytest.raises(ValueError) as info:
        Kingdom.from_text(text, size=size)
    message = str(info.value)
    locations = [(int(line), int(col)) for line, col in LOCATION.findall(message)]
    assert locations, f"no line and column in {message!r}"
    if where is not None:
        line, col = where
        assert any(found_line == line and (col is None or found_col == col)
                   for found_line, found_col in locations), message


def test_size_of_kingdom_checked_against_rules():
    k = Kingdom.from_text("C W1", size=5)
    with pytest.raises(ValueError):
        k.score(rules=Rules(players=2, variant="duel"))
