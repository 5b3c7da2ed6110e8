"""The heuristic's features (kdtourney.bots.heuristic_kernels) on positions made by hand, counted
square by square in the comments (coordinates: row, column from the castle); its tune
(benchmarks/tune_heuristic.py) reproducible from a seed."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kdtourney.bots import heuristic_kernels as HK
from kdtourney.bots import kernels as BK
from kdtourney.engine import GameView, Kingdom, Rules
from kdtourney.engine import kernels as K
from kdtourney.engine.game import CLAIM_BASE, DISCARD, encode_placement
from kdtourney.engine.kingdom import Placement

RULES = Rules(players=2, harmony=True, middle_kingdom=True)  # 2 kings each, rows of 4, 6 rounds
MINE = Kingdom.from_text("C W1 F")  # seat 0: #19 W1|F0 right of its castle
ALONE = Kingdom.from_text("C")  # seat 1: its castle alone


def view(current, new_row, rnd, kingdoms=(MINE, ALONE), discards=(0, 0)):
    """Seat 0's place decision of the first domino of `current` (dominoes of seats 0, 1, 0, 1)."""
    rows = [d for d in current + new_row]
    drawn = rows + [d for d in range(1, 49)
                    if d not in rows][:4 * (rnd + bool(new_row)) - len(rows)]
    return GameView.from_public(
        RULES, 0, phase="place", round=rnd, kingdoms=list(kingdoms),
        current_row=list(zip(current, (0, 1, 0, 1))), placed=[False] * 4,
        new_row=[(d, -1) for d in new_row], first_order=[0, 1, 0, 1], drawn=drawn,
        discards=list(discards))


def features(v):
    """{(place action, claim action): {weight name: feature}} of every whole-turn move."""
    bits, bbox, st = v.arrays
    rows = 4 * K.MAX_ACTIONS
    places, claims = np.empty(rows, dtype=np.int64), np.empty(rows, dtype=np.int64)
    feats = np.empty((rows, HK.N_WEIGHTS))
    n = HK.heuristic_combos(bits, bbox, st, places, claims, feats, *BK.work_buffers())
    return {(int(places[i]), int(claims[i])): dict(zip(HK.WEIGHTS, feats[i].tolist()))
            for i in range(n)}


def test_features_of_a_placement_and_its_claims():
    # place #24 F1|W0: F1 on (1, 2) under the F, W0 on (1, 1) under the W1
    move = encode_placement(Placement((1, 2), (1, 1)))
    got = features(view([24, 25, 26, 27], [10, 23, 36, 48], 1))
    f = got[(move, CLAIM_BASE + 48)]
    # territories: W 1x1 -> 2x1, F 1x0 -> 2x1: 1 -> 4 points; both bonuses kept
    assert f["place_gain"] == 3
    assert f["place_holes"] == 0 and f["middle_lost"] == 0 and f["harmony_lost"] == 0
    # empty squares of the centred 5x5 next to the kingdom: (-1, 0), (0, -1), (1, 0), (-1, 1),
    # (-1, 2), (2, 1), (2, 2)
    assert f["frontier"] == 7
    # next to the crowned W and F territories: (-1, 1), (1, 0), (2, 1), (-1, 2), (2, 2)
    assert f["crowned_edges"] == 5
    # #48 W0|M3 at its best spot: M3 on its own (3) and W0 onto the W territory (2x1 -> 3x1)
    assert f["claim_gain"] == 4 and f["claim_bad_spot"] == 0
    assert f["claim_crowns"] == 3 and f["claim_order"] == 1.0
    # in seat 1's castle-alone kingdom #48 scores 3 (M3 by the castle)
    assert f["claim_denial"] == 3
    g = got[(move, CLAIM_BASE + 10)]  # #10 G0|G0: no crowns, first pick next round, scores 0
    assert (g["claim_gain"], g["claim_crowns"], g["claim_order"],
            g["claim_denial"]) == (0, 0, 0.0, 0)
    assert all(g[w] == f[w] for w in HK.WEIGHTS[:HK.F_PLACE])  # the placement's are the same


def test_a_hole_and_leaving_the_centre():
    # #1 W0|W0 on (-2, 1) and (-1, 1), onto the W1: 1x1 -> 3x1
    up = encode_placement(Placement((-2, 1), (-1, 1)))
    f = features(view([1, 2, 3, 4], [10, 11, 12, 13], 1))[(up, CLAIM_BASE + 10)]
    assert (f["place_gain"], f["place_holes"], f["middle_lost"]) == (2, 0, 0)
    # with an F on (-1, 2) too, the same placement leaves (-2, 2) without an empty neighbour in
    # the centred 5x5: a one-square hole
    walled = Kingdom.from_text(". . F\nC W1 F")
    f = features(view([1, 2, 3, 4], [10, 11, 12, 13], 1, kingdoms=(walled, ALONE)))
    assert f[(up, CLAIM_BASE + 10)]["place_holes"] == 1
    # #3 F0|F0 on (0, 3) and (0, 4): column 4 is off the centred 5x5; 0 points, Middle Kingdom lost
    right = encode_placement(Placement((0, 3), (0, 4)))
    f = features(view([3, 4, 5, 6], [10, 11, 12, 13], 1))[(right, CLAIM_BASE + 10)]
    assert (f["place_gain"], f["middle_lost"]) == (-10, 1)
    # off the square: not counted
    assert f["place_holes"] == f["frontier"] == f["crowned_edges"] == 0


def test_the_last_round_counts_the_points_alone():
    got = features(view([24, 25, 26, 27], [], 6))
    assert all(claim == -1 for _, claim in got)
    for f in got.values():
        assert all(v == 0 for w, v in f.items() if w != "place_gain")


def test_a_discard_loses_harmony():
    # a full kingdom but for two squares next to W alone: #3 F0|F0 has no placement
    full = Kingdom.from_text("W W W W W\nW W W W W\nW W C W W\nW W W W W\nW W W . .")
    got = features(view([3, 4, 5, 6], [1, 2, 10, 11], 1, kingdoms=(full, ALONE)))
    assert {place for place, _ in got} == {DISCARD}
    for f in got.values():
        assert f["harmony_lost"] == 1 and f["place_gain"] == -5  # the Harmony bonus gone


def tune(seed):
    """The lines of a tiny playout tune (its wall times dropped)."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "tune_heuristic.py"), "--target", "playout",
         "--iterations", "8", "--generations", "2", "--popsize", "4", "--deals", "1", "--verify",
         "1", "--workers", "1", "--start", "standalone", "--seed", str(seed)],
        env=env, capture_output=True, text=True, check=True).stdout
    return [re.sub(r" \(\d+ s\)$", "", line) for line in out.splitlines()
            if not line.startswith("wall:")]


@pytest.mark.slow
@pytest.mark.process
def test_the_playout_tune_is_reproducible_from_its_seed():
    pytest.importorskip("cma")
    first = tune(3)
    assert first[-1].startswith("tuned weights: ") and len(first) == 4
    assert tune(3) == first
    assert tune(4)[-1] != first[-1]
