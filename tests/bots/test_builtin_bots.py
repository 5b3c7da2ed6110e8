"""The built-in search bots and the greedy: legal complete games in every setup, determinism under
a seed, parameter checks, and the greedy's evaluation against the engine's own scoring."""

import numpy as np
import pytest

from kdtourney.bots import _kernels as BK
from kdtourney.bots.base import Bot
from kdtourney.bots.expectimax import ExpectimaxBot
from kdtourney.bots.greedy import GreedyBot, candidates
from kdtourney.bots.mce import MCEBot
from kdtourney.bots.mcts import MCTSBot
from kdtourney.engine import Game, Kingdom, Rules, TILES
from kdtourney.engine import _kernels as K

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
    "mce-random-wdl": (MCEBot, {"iterations": 24, "policy": "random", "measure": "wdl", "candidates": 6}),
    "mcts": (MCTSBot, {"iterations": 24}),
    "mcts-greedy-score": (MCTSBot, {"iterations": 24, "policy": "greedy", "measure": "score"}),
    "expectimax": (ExpectimaxBot, {"iterations": 6}),
    "expectimax-depth1": (ExpectimaxBot, {"iterations": 6, "depth": 1}),
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


@pytest.mark.parametrize("bot", ["greedy", "mce", "mcts", "expectimax"])
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
    (MCTSBot, {"bias": "big"}), (ExpectimaxBot, {"depth": 0}), (ExpectimaxBot, {"depth": 9}),
    (ExpectimaxBot, {"iterations": 0}),
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
    planned = {int(c) for a, c, k in zip(cand.places, cand.claims, cand.keys) if a == place and k == best}
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
