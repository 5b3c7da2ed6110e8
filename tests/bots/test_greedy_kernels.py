"""The greedy evaluation kernels give bit-identical results to a recorded reference.

tests/data/greedy_golden.json was written once by the original kernels (copy the kingdom, place,
score it in full); any optimisation of kdtourney/bots/kernels.py must reproduce it exactly: the
keys of best_spot, greedy_combos and claim_keys, the fast greedy's actions and its rng draws,
greedy playouts, and whole games of the greedy, mcts, mce and expectimax bots.

Regenerate (only when a change of behaviour is intended):
python tests/bots/test_greedy_kernels.py --write
"""

import hashlib
import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from play_support import play_against_greedy

from kdtourney.bots import bench_kernels
from kdtourney.bots import evaluation as E
from kdtourney.bots import kernels as BK
from kdtourney.bots.expectimax import ExpectimaxBot
from kdtourney.bots.greedy import GreedyBot
from kdtourney.bots.mce import MCEBot
from kdtourney.bots.mcts import MCTSBot
from kdtourney.engine import Game, Rules
from kdtourney.engine import kernels as K
from kdtourney.engine.game import rng_state

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "greedy_golden.json"

RULES = {
    "2p": Rules(2),
    "4p_hm": Rules(4, harmony=True, middle_kingdom=True),
    "duel_hm": Rules(2, variant="duel", harmony=True, middle_kingdom=True),
}
SEEDS = range(3)


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


def _free_dominoes(st):
    return [int(st[K.ST_NEW_ROW + j]) for j in range(4)
            if st[K.ST_NEW_ROW + j] != 0 and st[K.ST_NEW_OWNER + j] < 0]


def position_records(rules, seed):
    """Kernel outputs at every decision of a seeded random game."""
    work = BK.work_buffers()
    places = np.empty(4 * K.MAX_ACTIONS, dtype=np.int64)
    claims = np.empty(4 * K.MAX_ACTIONS, dtype=np.int64)
    keys = np.empty(4 * K.MAX_ACTIONS, dtype=np.int64)
    game = Game(rules, seed)
    rnd = random.Random(seed)
    out = []
    step = 0
    while not game.is_over:
        bits, bbox, st = game.arrays
        p = int(st[K.ST_PLAYER])
        size = int(st[K.ST_SIZE])
        flags = int(st[K.ST_FLAGS])
        rec = {"step": step, "holes": int(K.count_holes(bits, bbox, p, size))}
        spots = []
        dominoes = _free_dominoes(st)
        if game.phase == "place":
            dominoes = [int(st[K.ST_CUR_ROW + st[K.ST_SLOT]])] + dominoes
        for d in dominoes:
            for complete in (True, False):
                k, a = E.best_spot(bits, bbox, p, size, flags, complete, d, *work, 1)
                spots.append([int(k), int(a)])
        rec["best_spot"] = spots
        if game.phase == "place":
            n = BK.greedy_combos(bits, bbox, st, places, claims, keys, *work)
            rec["combos"] = [int(n), _digest(places[:n], claims[:n], keys[:n]), int(keys[:n].max())]
        elif st[K.ST_ROUND] > 0:
            c = np.empty(4, dtype=np.int64)
            k = np.empty(4, dtype=np.int64)
            n = BK.claim_keys(bits, bbox, st, c, k, *work)
            rec["claim_keys"] = [[int(c[j]), int(k[j])] for j in range(n)]
        rng = rng_state(1000 + step)
        a = BK.fast_greedy_action(bits, bbox, st, rng, *work)
        rec["fast_greedy"] = [int(a), str(int(rng[0]))]
        if step % 8 == 0:
            rng = rng_state(2000 + step)
            rec["playouts"] = [int(bench_kernels.playout_speed(bits, bbox, st, 2, policy, rng))
                               for policy in (BK.POLICY_GREEDY, BK.POLICY_PLAYER_GREEDY)]
            rec["playouts_rng"] = str(int(rng[0]))
        out.append(rec)
        game.apply(rnd.choice(game.legal_actions()))
        step += 1
    return out


GAMES = {
    "greedy_2p": (RULES["2p"], 11, GreedyBot),
    "greedy_4p_hm": (RULES["4p_hm"], 12, GreedyBot),
    "greedy_duel_hm": (RULES["duel_hm"], 13, GreedyBot),
    "mcts50_4p_hm": (RULES["4p_hm"], 14, lambda: MCTSBot(iterations=50)),
    "mcts50_duel_hm": (RULES["duel_hm"], 15, lambda: MCTSBot(iterations=50)),
    "mce100_4p_hm": (RULES["4p_hm"], 16, lambda: MCEBot(iterations=100)),
    "mce100_2p": (RULES["2p"], 17, lambda: MCEBot(iterations=100)),
    "expectimax120_4p_hm": (RULES["4p_hm"], 18, lambda: ExpectimaxBot(iterations=120)),
}


def compute():
    golden = {"positions": {}, "games": {}}
    for name, rules in RULES.items():
        for seed in SEEDS:
            golden["positions"][f"{name}/{seed}"] = position_records(rules, seed)
    for name, (rules, seed, make_bot) in GAMES.items():
        golden["games"][name] = play_against_greedy(rules, seed, make_bot)
    return golden


def test_greedy_kernels_match_the_recorded_reference():
    expected = json.loads(GOLDEN.read_text())
    got = compute()
    assert got["games"].keys() == expected["games"].keys()
    for name in expected["games"]:
        assert got["games"][name] == expected["games"][name], name
    assert got["positions"].keys() == expected["positions"].keys()
    for name, records in expected["positions"].items():
        assert len(got["positions"][name]) == len(records), name
        for g, e in zip(got["positions"][name], records):
            assert g == e, (name, e["step"])


@pytest.mark.parametrize("rules", [RULES["4p_hm"], RULES["2p"], RULES["duel_hm"]], ids=str)
def test_the_playouts_full_greedy_plays_as_the_greedy_bot(rules):
    """full_greedy_action with its own claim plan, as the playouts run it, makes GreedyBot's every
    choice from the same random stream (GreedyBot remembers its claim itself, in a TurnPlan): the
    playouts model the `greedy` opponents as they really play."""
    seed = 21
    expected = play_against_greedy(rules, seed, GreedyBot)
    game = Game(rules, seed)
    rngs = [rng_state(seed * 10 + q) for q in range(rules.players)]
    plans = [BK.plan_buffers() for _ in range(rules.players)]
    work = BK.work_buffers()
    while not game.is_over:
        q = game.current_player
        bits, bbox, st = game.view(q).arrays
        game.apply(int(BK.full_greedy_action(bits, bbox, st, rngs[q], plans[q], *work)))
    assert game.history == expected


def test_others_full_greedy_plays_the_others_as_greedy_and_the_searcher_fast():
    """POLICY_OTHERS_FULL_GREEDY: every other player's playout move is the full greedy's (its claim
    plan kept), the searching player's the fast greedy's, each from the same random stream."""
    rules = RULES["4p_hm"]
    work = BK.work_buffers()
    for me in range(rules.players):
        game = Game(rules, 30 + me)
        fb, plan = BK.plan_buffers(), BK.plan_buffers()
        while not game.is_over:
            bits, bbox, st = game.arrays
            q = game.current_player
            rng, twin = rng_state(game.round * 100 + q), rng_state(game.round * 100 + q)
            got = BK.playout_action(bits.copy(), bbox.copy(), st.copy(), rng,
                                    BK.POLICY_OTHERS_FULL_GREEDY, me, fb, *work)
            if q == me:
                want = BK.fast_greedy_action(bits.copy(), bbox.copy(), st.copy(), twin, *work)
            else:
                want = BK.full_greedy_action(bits.copy(), bbox.copy(), st.copy(), twin, plan, *work)
            assert got == want, (me, q, game.round, game.phase)
            game.apply(int(got))


@pytest.mark.parametrize("rules", [RULES["4p_hm"], RULES["2p"], RULES["duel_hm"]], ids=str)
def test_greedy_step_plays_as_the_fast_greedy(rules):
    """greedy_step (what it keeps kept across a whole game) makes fast_greedy_action's every
    choice from the same random stream: mcts may play its other players' moves by either."""
    for seed in range(3):
        game = Game(rules, 40 + seed)
        kept, work = BK.work_buffers(), BK.work_buffers()
        BK.forget_kept(kept[0])
        rng, twin = rng_state(seed), rng_state(seed)
        while not game.is_over:
            bits, bbox, st = game.arrays
            got = BK.greedy_step(bits.copy(), bbox.copy(), st.copy(), rng, *kept)
            want = BK.fast_greedy_action(bits.copy(), bbox.copy(), st.copy(), twin, *work)
            assert got == want, (seed, game.round, game.phase)
            game.apply(int(got))


def best_points_by_placement(n, places, keys):
    """{placement: its combinations' best key_points} of n combinations."""
    best = {}
    for a, k in zip(places[:n], keys[:n]):
        best[int(a)] = max(best.get(int(a), -10**9), int(BK.key_points(k)))
    return best


@pytest.mark.parametrize("rules", [RULES["4p_hm"], RULES["2p"], RULES["duel_hm"]], ids=str)
def test_prior_combos_keep_each_placements_best_key_points(rules):
    """prior_combos leaves out combinations, never a placement's best key_points (mcts's priors)."""
    work = BK.work_buffers()
    lists = [np.empty(4 * K.MAX_ACTIONS, dtype=np.int64) for _ in range(6)]
    left_out = 0
    for seed in range(4):
        game = Game(rules, 300 + seed)
        rnd = random.Random(seed)
        while not game.is_over:
            if game.phase == "place":
                bits, bbox, st = game.arrays
                n = BK.greedy_combos(bits, bbox, st, *lists[:3], *work)
                m = BK.prior_combos(bits, bbox, st, *lists[3:], *work)
                assert (best_points_by_placement(n, lists[0], lists[2])
                        == best_points_by_placement(m, lists[3], lists[5])), (seed, game.round)
                left_out += n - m
            game.apply(rnd.choice(game.legal_actions()))
    assert left_out > 0


def frame_summary(kb, row):
    """What a frame holds for the keys: planes, geometry, points, land, masks, and each terrain's
    territories as a set (their order in the frame does not matter)."""
    fixed = [int(v) for v in kb[row, :E.FR_COUNT]] + [int(kb[row, E.FR_POINTS])]
    territories = [sorted((int(kb[row, E.territory(t, i)]), int(kb[row, E.territory(t, i) + 1]))
                          for i in range(kb[row, E.FR_COUNT + t])) for t in range(1, 7)]
    return fixed, territories


def test_a_7x7_frame_updated_by_a_placement_equals_the_kingdom_framed_anew():
    """rows_frame_place leaves the frame prepare_frame makes of the kingdom after the placement,
    or declines (the frame's square moves): every placement of random Mighty Duel games."""
    kb, bb, sc, ac = BK.work_buffers()
    updated = declined = 0
    for seed in range(8):
        game = Game(Rules(2, variant="duel"), 200 + seed)
        rnd = random.Random(seed)
        while not game.is_over:
            action = rnd.choice(game.legal_actions())
            if game.phase == "place" and action != K.DISCARD:
                bits, bbox, st = game.arrays
                p, domino = game.current_player, game.domino_to_place
                E.prepare_frame(bits, bbox, p, 7, kb, 0)
                if E.rows_frame_place(bbox, p, 7, kb, 0, domino, action):
                    K.copy_kingdom(bits, bbox, p, kb, bb, 1)
                    K.place(kb, bb, 1, 7, domino, action)
                    E.prepare_frame(kb, bb, 1, 7, kb, 2)
                    assert frame_summary(kb, 0) == frame_summary(kb, 2), (seed, action)
                    updated += 1
                else:
                    declined += 1
            game.apply(action)
    assert updated > 300 and declined > 10


def copy_place_and_score_key(kb, bb, size, flags, complete, holes):
    """The key of the kingdom copied in kb[0] with a placement done, scored in full: ok when it is
    centred with no more one-square holes than the `holes` before, and its points."""
    ok = K.is_centered(bb, 0, size) and K.count_holes(kb, bb, 0, size) <= holes
    points = K.territory_points(kb, bb, 0, size) + K.bonus_points(bb, 0, size, flags, complete)
    return (int(ok) << E.S2_SHIFT) | int(points)


def test_a_placement_key_equals_copy_place_and_score():
    """The no-copy evaluation of one placement equals copying the kingdom, placing and scoring it
    (every flag combination, with and without Harmony, every legal placement, by action, by the
    greedy kernels' placement entries, which list the legal actions in order, and by scan_keys,
    which values all the entries at once); key_bound bounds them."""
    kb, bb, sc, ac = BK.work_buffers()
    checked = 0
    for rules in (Rules(2), Rules(4), Rules(2, variant="duel")):
        for seed in range(6):
            game = Game(rules, 100 + seed)
            rnd = random.Random(seed)
            while not game.is_over:
                bits, bbox, st = game.arrays
                if game.phase == "place" and game.legal_actions() != [K.DISCARD]:
                    p, size, domino = game.current_player, int(st[K.ST_SIZE]), game.domino_to_place
                    points = E.prepare_frame(bits, bbox, p, size, kb, 2)
                    assert points == K.score_territories(bits, bbox, p, size)[0]
                    holes = K.count_holes(bits, bbox, p, size)
                    n = E.frame_placements(bits, bbox, p, size, domino, sc, ac, 0)
                    entries = [int(e) for e in ac[0, :n]]
                    scanned = {}
                    for flags in range(4):
                        for complete in (True, False):
                            E.frame_placements(bits, bbox, p, size, domino, sc, ac, 1)
                            E.scan_keys(kb, 2, size, flags, complete, domino, points, ac, 1, n)
                            scanned[(flags, complete)] = [int(k) >> E.KEY_SHIFT
                                                          for k in ac[1, :n]]
                            bound = E.key_bound(kb, 2, flags, complete,
                                                K.is_centered(bbox, p, size), domino, points)
                            assert max(scanned[(flags, complete)]) <= bound, (rules, seed)
                    assert ([E.entry_action(bits, p, size, e) for e in entries]
                            == game.legal_actions())
                    for action, entry in zip(game.legal_actions(), entries):
                        K.copy_kingdom(bits, bbox, p, kb, bb, 0)
                        K.place(kb, bb, 0, size, domino, action)
                        for flags in range(4):
                            for complete in (True, False):
                                want = copy_place_and_score_key(kb, bb, size, flags, complete,
                                                                holes)
                                got = E.action_key(kb, 2, flags, complete, domino, action, points)
                                assert got == want, (rules, seed, action, flags, complete)
                                got = E.entry_key(kb, 2, size, flags, complete, domino, entry,
                                                  points)
                                assert got == want, (rules, seed, entry, flags, complete)
                                got = scanned[(flags, complete)][entries.index(entry)]
                                assert got == want, (rules, seed, entry, flags, complete)
                                checked += 1
                game.apply(rnd.choice(game.legal_actions()))
    assert checked > 20000


if __name__ == "__main__":
    if "--write" not in sys.argv:
        sys.exit("usage: python tests/bots/test_greedy_kernels.py --write  "
                 "(regenerates the reference)")
    GOLDEN.write_text(json.dumps(compute(), separators=(",", ":")) + "\n")
    print(f"wrote {GOLDEN} ({GOLDEN.stat().st_size:,} bytes)")
