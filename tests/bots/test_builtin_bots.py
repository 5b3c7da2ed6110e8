"""The built-in search bots and the greedy: legal complete games in every setup, determinism under
a seed, parameter checks, and the greedy's evaluation against the engine's own scoring."""

import numpy as np
import pytest

from kdtourney.bots import kernels as BK
from kdtourney.bots import search_kernels as SK
from kdtourney.bots.base import Bot
from kdtourney.bots.expectimax import ExpectimaxBot
from kdtourney.bots.greedy import GreedyBot, candidates
from kdtourney.bots.heuristic import PLAYOUT, STANDALONE, HeuristicBot
from kdtourney.bots.mce import MCEBot
from kdtourney.bots.mcts import MCTSBot
from kdtourney.engine import TILES, Game, Kingdom, Rules
from kdtourney.engine import kernels as K
from kdtourney.registry import BotRegistry

MCTS_VISITS = SK.TI_VISITS

SETUPS = {
    "2p": Rules(players=2),
    "3p-official": Rules(players=3),
    "3p-bga": Rules(players=3, three_player="bga"),
    "4p": Rules(players=4),
    "4p-bonuses": Rules(players=4, harmony=True, middle_kingdom=True),
    "duel": Rules(players=2, variant="duel", harmony=True, middle_kingdom=True),
}
SMALL = {
    "greedy": (GreedyBot, {}),
    "mce": (MCEBot, {"iterations": 24}),
    "mce-random-wdl": (MCEBot, {"iterations": 24, "policy": "random", "measure": "wdl",
                                "candidates": 6}),
    "mcts": (MCTSBot, {"iterations": 24}),
    "mcts-greedy-score": (MCTSBot, {"iterations": 24, "policy": "greedy", "measure": "score"}),
    "mcts-no-reuse-no-widening": (MCTSBot, {"iterations": 24, "reuse": "none", "widen": 0}),
    "mcts-reuse-game-margin": (MCTSBot, {"iterations": 24, "reuse": "game", "measure": "margin"}),
    "mcts-full-greedy-playouts": (MCTSBot, {"iterations": 24, "policy": "full-greedy"}),
    "mcts-full-greedy-opponents": (MCTSBot, {"iterations": 24, "opponents": "full-greedy"}),
    "mce-full-greedy-playouts": (MCEBot, {"iterations": 24, "policy": "full-greedy"}),
    "expectimax": (ExpectimaxBot, {"iterations": 40}),
    "expectimax-depth1": (ExpectimaxBot, {"iterations": 6, "depth": 1}),
    "heuristic": (HeuristicBot, {}),
    "mcts-levers": (MCTSBot, {"iterations": 24, "policy": "heuristic", "root": "halving",
                              "root_k": 4, "endgame": "exact"}),
}


class FirstLegal(Bot):
    name = "first"

    def act(self, view):
        return view.legal_actions()[0]


def play(rules, bots, seed):
    """A whole game; Game.apply raises on any illegal action. Returns (game, actions per seat)."""
    game = Game(rules, seed)
    for seat, bot in enumerate(bots):
        bot.setup(seat, rules, seed * 7 + seat)
    actions = [[] for _ in bots]
    while not game.is_over:
        p = game.current_player
        view = game.view(p)
        action = bots[p].act(view)
        assert action in view.legal_actions()
        actions[p].append(action)
        game.apply(action)
    return game, actions


@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize("bot", SMALL)
def test_plays_legal_complete_games(bot, setup):
    rules = SETUPS[setup]
    cls, params = SMALL[bot]
    bots = [cls(**params)] + [FirstLegal() for _ in range(rules.players - 1)]
    game, actions = play(rules, bots, seed=3)
    assert game.is_over
    placed = sum(1 for a in actions[0] if a < K.CLAIM_BASE)
    assert placed == rules.rounds * rules.kings_per_player  # every own domino placed or discarded


@pytest.mark.parametrize("bot", ["greedy", "mce", "mcts", "expectimax", "heuristic", "mcts-levers"])
def test_same_seed_same_actions(bot):
    rules = SETUPS["4p-bonuses"]
    cls, params = SMALL[bot]
    first = play(rules, [cls(**params) for _ in range(4)], seed=11)[1]
    again = play(rules, [cls(**params) for _ in range(4)], seed=11)[1]
    assert first == again


@pytest.mark.parametrize("cls", [MCEBot, MCTSBot, ExpectimaxBot])
def test_does_not_touch_the_view_nor_see_the_deck(cls):
    """Two games that differ only in the hidden deck order give the same decision."""
    rules = SETUPS["4p"]
    game = Game(rules, 5)
    for _ in range(9):
        game.apply(game.legal_actions()[0])
    other = game.copy()
    _, _, st = other.arrays
    pos = int(st[K.ST_DECK_POS])
    st[K.ST_DECK + pos:] = st[K.ST_DECK + pos:][::-1].copy()
    p = game.current_player
    decisions = []
    for g in (game, other):
        bot = cls(iterations=16)
        bot.setup(p, rules, 1)
        view = g.view(p)
        before = [a.copy() for a in view.arrays]
        decisions.append(bot.act(view))
        assert all((a == b).all() for a, b in zip(before, view.arrays))
    assert decisions[0] == decisions[1]


@pytest.mark.parametrize("cls", [GreedyBot, MCEBot, MCTSBot, ExpectimaxBot])
def test_contract(cls):
    assert cls.name in ("greedy", "mce", "mcts", "expectimax")
    assert cls.description() and "\n" not in cls.description()
    params = cls.parameters()
    if cls is not GreedyBot:
        assert params["time"] is None and params["iterations"] >= 1
        cls(time=0.01)  # a time budget is accepted


@pytest.mark.parametrize("cls, params", [
    (MCEBot, {"iterations": 0}), (MCEBot, {"time": -1}), (MCEBot, {"policy": "smart"}),
    (MCEBot, {"measure": "elo"}), (MCEBot, {"candidates": -2}), (MCEBot, {"iterations": 2.5}),
    (MCTSBot, {"c": -1}), (MCTSBot, {"iterations": "many"}), (MCTSBot, {"policy": "x"}),
    (MCTSBot, {"bias": "big"}), (MCTSBot, {"widen": -1}), (MCTSBot, {"reuse": "always"}),
    (MCTSBot, {"playout_weights": "tuned"}),
    (MCTSBot, {"opponents": "greedy"}),
    (ExpectimaxBot, {"depth": 0}), (ExpectimaxBot, {"depth": 1.5}), (ExpectimaxBot, {"width": 0}),
    (ExpectimaxBot, {"samples": 0}), (ExpectimaxBot, {"iterations": 0}),
    (MCTSBot, {"iterations": 10**23}), (MCEBot, {"time": 1e300}),  # past int64; forever
])
def test_bad_parameters_are_clear_errors(cls, params):
    key = next(iter(params))
    with pytest.raises(ValueError, match=key):
        cls(**params)


def test_time_budget_plays():
    rules = SETUPS["2p"]
    for cls in (MCEBot, MCTSBot, ExpectimaxBot):
        game, _ = play(rules, [cls(time=0.002), FirstLegal()], seed=2)
        assert game.is_over


# -- the searches ------------------------------------------------------------------------------


def position(rules, rounds, phase="place", seed=6):
    """A position of a greedy game after `rounds` rounds, at the first `phase` decision."""
    game = Game(rules, seed)
    bots = [GreedyBot() for _ in range(rules.players)]
    for seat, bot in enumerate(bots):
        bot.setup(seat, rules, seat)
    while game.round < rounds or game.phase != phase:
        p = game.current_player
        game.apply(bots[p].act(game.view(p)))
    return game


def test_expectimax_searches_deeper_with_a_larger_budget():
    game = position(SETUPS["4p-bonuses"], 3)
    depths = []
    for iterations in (10, 100, 3000):
        bot = ExpectimaxBot(iterations=iterations)
        bot.setup(game.current_player, game.rules, 1)
        bot.decide(game.view(game.current_player))
        assert bot.last_iterations <= iterations + 1
        depths.append(bot.last_depth)
    assert depths == [1, 2, 3]


def test_expectimax_cut_off_plays_the_deepest_completed_answer():
    """A budget that ends where depth 3 begins gives the depth-2 search's move."""
    game = position(SETUPS["4p-bonuses"], 4)
    view = game.view(game.current_player)
    deep2 = ExpectimaxBot(iterations=10**6, depth=2)
    deep2.setup(game.current_player, game.rules, 1)
    want = deep2.decide(view)
    cut = ExpectimaxBot(iterations=deep2.last_iterations)
    cut.setup(game.current_player, game.rules, 1)
    assert cut.decide(view) == want
    assert cut.last_depth == deep2.last_depth == 2


def test_mcts_playout_weights_are_named_by_the_spec_and_change_play():
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    spec = "mcts:iterations=48:policy=own-heuristic"
    assert registry.create(spec).heuristic_weights == STANDALONE  # the default
    tuned = registry.create(spec + ":playout_weights=playout")
    assert tuned.heuristic_weights == PLAYOUT != STANDALONE
    rules = SETUPS["4p-bonuses"]
    games = [play(rules, [registry.create(s)] + [GreedyBot() for _ in range(3)], seed=5)[1][0]
             for s in (spec, spec + ":playout_weights=playout")]
    assert games[0] != games[1]


@pytest.mark.parametrize("reuse, kept", [("none", False), ("turn", True)])
def test_mcts_claim_decision_continues_the_place_decision_search(reuse, kept):
    game = position(SETUPS["4p-bonuses"], 3)
    p = game.current_player
    bot = MCTSBot(iterations=100, reuse=reuse)
    bot.setup(p, game.rules, 1)
    game.apply(bot.act(game.view(p)))
    inherited = bot._ti[bot._expect[2], MCTS_VISITS]
    assert game.current_player == p and game.phase == "claim" and inherited > 0
    bot.act(game.view(p))
    assert bot._ti[0, MCTS_VISITS] == 100 + (inherited if kept else 0)


def test_mcts_plays_only_a_legal_claim_from_a_kept_tree():
    # A kept claim node has children for the dominoes of every row its iterations dealt: the one
    # visited most may not be on the table now.
    game = position(SETUPS["4p-bonuses"], 3, phase="claim")
    view = game.view(game.current_player)
    assert len(view.legal_actions()) > 1
    bot = MCTSBot(iterations=1)
    bot.setup(game.current_player, game.rules, 1)
    SK.mcts_reset(bot._ti, bot._tf, bot._ncount)
    other = next(K.CLAIM_BASE + d for d in range(1, 49)
                 if K.CLAIM_BASE + d not in view.legal_actions())
    node = SK._new_node(bot._ti, bot._tf, bot._ncount, 0, other, 0.0)
    bot._ti[node, MCTS_VISITS] = bot._ti[node, SK.TI_AVAIL] = 10**6
    bot._tf[node, SK.TF_VALUE] = 10**6
    bot._root = lambda view: None  # this tree, as if kept from the place decision
    assert bot.act(view) in view.legal_actions()


def _subtree(ti, tf, node):
    """The subtree of node, depth first: (action, visits, value, children) per node."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        children = []
        ch = ti[n, SK.TI_FIRST]
        while ch >= 0:
            children.append(ch)
            ch = ti[ch, SK.TI_NEXT]
        out.append((ti[n, SK.TI_ACTION], ti[n, MCTS_VISITS], tf[n, SK.TF_VALUE], len(children)))
        stack += children[::-1]
    return out


def test_mcts_subtree_copy_keeps_the_subtree():
    game = position(SETUPS["4p"], 2)
    bits, bbox, st = game.arrays
    ti = np.zeros((1 << 14, SK.TI_COLS), dtype=np.int64)
    tf = np.zeros((1 << 14, SK.TF_COLS))
    ncount = np.zeros(1, dtype=np.int64)
    SK.mcts_reset(ti, tf, ncount)
    SK.mcts_run(bits, bbox, st, game.current_player, ti, tf, ncount, 300, 0.2, 5.0, 1.0,
                BK.POLICY_GREEDY, BK.POLICY_GREEDY, None, None, BK.MEASURE_RATIO, 3,
                None, SK.EVAL_PLAYOUT, 0.0, 0, -1)
    child = max(_children(ti, 0), key=lambda ch: ti[ch, MCTS_VISITS])
    want = _subtree(ti, tf, child)
    ti2, tf2, n2 = np.zeros_like(ti), np.zeros_like(tf), np.zeros(1, dtype=np.int64)
    assert SK.mcts_subtree(ti, tf, child, ti2, tf2, n2)
    assert _subtree(ti2, tf2, 0) == want and n2[0] == len(want) > 10
    assert not SK.mcts_subtree(ti, tf, child, ti2[:5], tf2[:5], n2)  # too small: refused


def test_mcts_logarithm_table_holds_the_logarithms_it_stands_for():
    """The choice of a child reads ln(availability) from a table up to 4,095 and computes it
    above: the same bits either way, so a long search chooses as a short one would."""
    from numba import njit

    @njit
    def logs(n):
        out = np.zeros(n)
        for a in range(1, n):
            out[a] = np.log(a)
        return out

    table = SK.LOG_TABLE
    assert len(table) == 4096 and np.array_equal(logs(len(table))[1:], table[1:])


def _children(ti, node):
    ch = ti[node, SK.TI_FIRST]
    while ch >= 0:
        yield ch
        ch = ti[ch, SK.TI_NEXT]


def _tree_after_act(view, seed, **params):
    bot = MCTSBot(iterations=200, **params)
    bot.setup(view.player, view.rules, seed)
    action = bot.act(view)
    return action, _subtree(bot._ti, bot._tf, 0)


def test_mcts_opponents_full_greedy_plays_the_others_in_the_tree_as_greedy_does():
    """At the last claim decision (the last row is on the table, the deck is empty) the three
    others place and claim after the bot inside the tree; what the playouts play after it is the
    last round's placements, which the fast and the full greedy play alike. So
    opponents=full-greedy with greedy playouts builds exactly the tree of full-greedy everywhere,
    and here claims another domino than the default (the others modelled by the fast greedy)."""
    rules = SETUPS["4p-bonuses"]
    game = position(rules, rules.rounds - 1, phase="claim", seed=15)
    _, _, st = game.arrays
    assert st[K.ST_DECK_POS] == st[K.ST_DECK_LEN]
    view = game.view(game.current_player)
    assert len(view.legal_actions()) == 4  # the first to claim: three others after it
    changed = 0
    for seed in (1, 2):
        modelled = _tree_after_act(view, seed, opponents="full-greedy")
        assert modelled == _tree_after_act(view, seed, policy="full-greedy")
        default = _tree_after_act(view, seed)
        assert _tree_after_act(view, seed, opponents="policy") == default
        changed += modelled[0] != default[0]
    assert changed
    # earlier in the game the playouts hold claims too, and they are not full-greedy's
    early = position(rules, 3)
    view = early.view(early.current_player)
    assert (_tree_after_act(view, 1, opponents="full-greedy")
            != _tree_after_act(view, 1, policy="full-greedy"))


# -- the greedy's evaluation -------------------------------------------------------------------


@pytest.mark.parametrize("text, holes", [
    ("C", 0),
    (". W0\nC .\n. W0", 0),          # (0, 1) has an empty neighbour to its right
    (". W0 .\nC . W0\n. W0 .", 1),     # (0, 1): castle left, land above, below and right
    ("W0 W0 W0 W0 W0\nW0 . W0 W0 W0\nW0 W0 C W0 W0\nW0 W0 W0 . .\nW0 W0 W0 W0 W0", 1),
    ("W0 W0 W0\nW0 . W0\nW0 C W0", 1),  # (-1, 0) shut in by land and the castle
    ("C W0 W0 W0 W0\n. W0 . W0 W0", 0),  # off-centre, both empty squares open below
    ("C W0 W0 W0 W0\n. W0 . W0 W0\nW0 W0 W0 W0 W0", 2),  # off-centre: no room left of the castle
])
def test_count_holes(text, holes):
    kingdom = Kingdom.from_text(text)
    bits, bbox = kingdom._bits, kingdom._bbox
    assert K.count_holes(bits, bbox, 0, 5) == holes


def test_greedy_keys_match_engine_scores():
    """s1 of every combination is the engine's score after that placement."""
    rules = SETUPS["4p-bonuses"]
    game = Game(rules, 4)
    rng = np.random.default_rng(0)
    checked = 0
    while not game.is_over:
        if game.phase == "place":
            cand = candidates(game.view(game.current_player), BK.work_buffers())
            for i in rng.choice(len(cand), size=min(5, len(cand)), replace=False):
                g = game.copy()
                g.apply(int(cand.places[i]))
                s1 = int(cand.keys[i]) & BK.S_MASK
                assert s1 == g.score(game.current_player).total
                checked += 1
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])
    assert checked > 40


def test_greedy_first_claim_and_plan():
    rules = SETUPS["4p"]
    game = Game(rules, 8)
    bot = GreedyBot()
    bot.setup(0, rules, 0)
    p = game.current_player
    claim = bot.act(game.view(p))
    crowns = {a: max(TILES[a - K.CLAIM_BASE].a.crowns, TILES[a - K.CLAIM_BASE].b.crowns)
              for a in game.legal_actions()}
    assert crowns[claim] == max(crowns.values())
    # later: the claim after the place is the one planned with it
    game = Game(rules, 8)
    bots = [GreedyBot() for _ in range(4)]
    for s, b in enumerate(bots):
        b.setup(s, rules, s)
    while game.round < 3:
        p = game.current_player
        game.apply(bots[p].act(game.view(p)))
    while game.phase != "place":
        p = game.current_player
        game.apply(bots[p].act(game.view(p)))
    p = game.current_player
    cand = candidates(game.view(p), BK.work_buffers())
    place = bots[p].act(game.view(p))
    best = cand.keys.max()
    planned = {int(c) for a, c, k in zip(cand.places, cand.claims, cand.keys)
               if a == place and k == best}
    game.apply(place)
    assert bots[p].act(game.view(p)) in planned


def test_greedy_avoids_holes_and_stays_centred():
    """Over whole greedy games with Middle Kingdom, greedy kingdoms stay centred nearly always."""
    rules = SETUPS["4p-bonuses"]
    centred = 0
    for seed in range(10):
        game, _ = play(rules, [GreedyBot() for _ in range(4)], seed)
        centred += sum(game.score(p).bonus >= 10 for p in range(4))
    assert centred >= 36
