"""Tests of tests/naive.py itself, on tiny hand-checked cases, so that the reference is
trustworthy."""

from pathlib import Path

import naive
import pytest

from kdtourney.engine.tiles import CASTLE, FOREST, LAKE, MINE, TILES, WHEAT

DATA = Path(__file__).resolve().parent.parent / "data"
GOLDEN = naive.read_cases(DATA / "golden_kingdoms.txt")
PERFT = naive.read_cases(DATA / "perft.txt")


# --- text format --------------------------------------------------------------------------------

def test_parse_text_is_relative_to_castle():
    k = naive.parse_text("\n\n  W1 .\n  F  C\n\n")
    assert k == {(0, 0): (CASTLE, 0), (-1, -1): (WHEAT, 1), (0, -1): (FOREST, 0)}


def test_to_text_round_trip():
    text = "W1 .\nF0 C\n"
    assert naive.to_text(naive.parse_text(text)) == text
    for case in GOLDEN + PERFT:
        k = naive.parse_text(case["text"])
        assert naive.parse_text(naive.to_text(k)) == k


@pytest.mark.parametrize("text", ["W0 W1", "C C", "C W0\nW0", "C X0", "C W4", "C W-1", ""])
def test_parse_text_rejects_bad_text(text):
    with pytest.raises(ValueError):
        naive.parse_text(text)


# --- placements ---------------------------------------------------------------------------------

def test_empty_kingdom_placements_by_hand():
    k = naive.parse_text("C")
    # asymmetric domino: every pair of adjacent cells with one of them next to the castle
    around = [(-1, 0), (1, 0), (0, -1), (0, 1)]
    expected = set()
    for p in around:
        for q in naive.neighbours(p):
            if q != (0, 0):
                expected |= {(p, q), (q, p)}
    assert len(expected) == 24
    assert naive.legal_placements(k, 13) == expected
    # symmetric domino: each pair once, a before b
    assert naive.legal_placements(k, 1) == {naive.canonical(p) for p in expected}
    assert len(naive.legal_placements(k, 1)) == 12
    assert all(a < b for a, b in naive.legal_placements(k, 1))


def test_a_half_must_match_its_own_terrain():
    # lake square at (0,2): a lake half may go right of it, but only the lake half counts
    k = naive.parse_text("C W0 L0")
    placements = naive.legal_placements(k, 17)  # forest|lake
    assert ((1, 2), (0, 3)) not in placements  # forest half next to the lake,
                                               # lake half next to nothing
    assert ((1, 3), (0, 3)) in placements      # lake half right of the lake
    assert ((0, 3), (1, 3)) not in placements  # forest half right of the lake,
                                               # lake half below nothing
    assert ((0, -1), (0, -2)) in placements    # forest half beside the castle (wild)
    assert ((0, -2), (0, -1)) in placements    # lake half beside the castle (wild)


def test_squares_must_be_empty_and_adjacent():
    k = naive.parse_text("C W0")
    for a, b in naive.legal_placements(k, 14):
        assert a not in k and b not in k
        assert b in naive.neighbours(a)


def test_size_limit():
    k = naive.parse_text("C W0 W0 W0")
    placements = naive.legal_placements(k, 1)
    assert ((0, 4), (1, 4)) in placements       # cols 0..4: fits
    assert ((0, 4), (0, 5)) not in placements   # cols 0..5: six wide
    assert ((0, -2), (0, -1)) not in placements
    assert ((-1, -1), (0, -1)) in placements
    # in a 7x7 kingdom the long ones fit
    assert ((0, 4), (0, 5)) in naive.legal_placements(k, 1, size=7)


def test_identical_halves_means_symmetric():
    symmetric = [n for n, d in TILES.items() if d.a == d.b]
    assert symmetric == list(range(1, 13))


@pytest.mark.parametrize("case", PERFT, ids=[c["name"] for c in PERFT])
def test_perft_counts(case):
    k = naive.parse_text(case["text"])
    assert (len(naive.legal_placements(k, case["domino"], case["size"]))
            == case["expect"]["placements"])


def test_perft_file_coverage():
    assert len(PERFT) >= 12
    assert any(c["size"] == 7 for c in PERFT)
    assert any(c["expect"]["placements"] == 0 for c in PERFT)


# --- scoring ------------------------------------------------------------------------------------

def test_score_castle_splits_and_crownless():
    k = naive.parse_text("W1 W0 C W0 W2\n. . M0 . .")
    s = naive.score(k)
    assert s == {"total": 6, "territories": 6, "largest_territory": 2, "crowns": 3, "bonus": 0}


def test_score_same_terrain_apart_scores_separately():
    k = {(0, 0): (CASTLE, 0), (0, 1): (LAKE, 1), (0, 2): (MINE, 0), (0, 3): (LAKE, 1)}
    assert naive.score(k)["territories"] == 2
    k[(0, 2)] = (LAKE, 0)
    assert naive.score(k)["territories"] == 3 * 2


def test_bonuses():
    full = naive.parse_text("\n".join(["W0 W0 W0 W0 W0"] * 2 + ["W0 W0 C W0 W0"]
                                      + ["W0 W0 W0 W0 W0"] * 2))
    assert naive.score(full, harmony=True)["bonus"] == 5
    assert naive.score(full, middle_kingdom=True)["bonus"] == 10
    assert naive.score(full, harmony=True, middle_kingdom=True)["total"] == 15
    assert naive.score(full, size=7, harmony=True)["bonus"] == 0
    off = naive.parse_text("C W1 W0 W0")
    assert naive.score(off, middle_kingdom=True)["bonus"] == 0
    assert naive.score(off, size=7, middle_kingdom=True)["bonus"] == 10


@pytest.mark.parametrize("case", GOLDEN, ids=[c["name"] for c in GOLDEN])
def test_golden_scores(case):
    k = naive.parse_text(case["text"])
    size, expect = case["size"], case["expect"]
    plain = naive.score(k, size)
    assert {key: plain[key] for key in ("total", "territories", "largest_territory", "crowns")} == {
        key: expect[key] for key in ("total", "territories", "largest_territory", "crowns")}
    assert naive.score(k, size, harmony=True)["total"] == expect["harmony"]
    assert naive.score(k, size, middle_kingdom=True)["total"] == expect["middle_kingdom"]
    assert naive.score(k, size, harmony=True, middle_kingdom=True)["total"] == expect["both"]


def test_golden_file_coverage():
    assert len(GOLDEN) >= 20
    assert any(c["size"] == 7 for c in GOLDEN)
    assert any(c["expect"]["harmony"] > c["expect"]["total"] for c in GOLDEN)
    assert any(c["expect"]["middle_kingdom"] == c["expect"]["total"] for c in GOLDEN)
