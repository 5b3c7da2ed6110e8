"""BatchEnv and the observation: the engine's games, what a seat may know, rewards, auto-reset."""

import numpy as np
import pytest

from kdtourney.engine import DISCARD, Game, Rules
from kdtourney.engine.tiles import CASTLE
from kdtourney.env import BatchEnv, observation_size, observe_view
from kdtourney.env.encoding import N_ACTIONS, TABLE, observe_arrays, split

RULES = [Rules(2), Rules(3), Rules(3, three_player="bga"),
         Rules(4, harmony=True, middle_kingdom=True),
         Rules(2, variant="duel", tiebreak="territory"), Rules(2, first_picks="abba")]


def legal_mask(game):
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    mask[game.legal_actions()] = 1
    return mask


def expected_rank_rewards(ranks):
    n = len(ranks)
    return [sum((r > ranks[p]) - (r < ranks[p]) for q, r in enumerate(ranks) if q != p) / (n - 1)
            for p in range(n)]


@pytest.mark.parametrize("rules", RULES, ids=str)
def test_every_batch_game_is_the_engine_game_of_its_seed_with_auto_reset(rules):
    n = 3
    env = BatchEnv(n, rules, seed=100)
    games = [Game(rules, 100 + i) for i in range(n)]
    rng = np.random.default_rng(1)
    finished = 0
    while finished < 2 * n:  # every slot plays its first game to the end, and more
        for i, game in enumerate(games):
            assert env.player[i] == game.current_player
            np.testing.assert_array_equal(env.mask[i], legal_mask(game))
            obs, _, _ = observe_arrays(*game.arrays, game.current_player)
            np.testing.assert_array_equal(env.obs[i], obs)
        actions = env.random_actions(rng)
        env.step(actions)
        for i, game in enumerate(games):
            game.apply(int(actions[i]))
            if game.is_over:
                assert env.dones[i]
                np.testing.assert_allclose(env.rewards[i], expected_rank_rewards(game.ranking()),
                                           rtol=1e-6)
                finished += 1
                games[i] = Game(rules, game.seed + n)  # the slot's next game
                assert env.seeds[i] == game.seed + n
            else:
                assert not env.dones[i] and not env.rewards[i].any()


def test_margin_and_score_rewards_come_from_the_final_scores():
    rules = Rules(3)
    for reward in ("margin", "score"):
        env = BatchEnv(2, rules, seed=7, reward=reward)
        games = [Game(rules, 7), Game(rules, 8)]
        rng = np.random.default_rng(0)
        while not env.dones.all():
            actions = env.random_actions(rng)
            env.step(actions)
            for game, a in zip(games, actions):
                game.apply(int(a))
        for i, game in enumerate(games):
            scores = game.scores()
            want = scores if reward == "score" else \
                [s - max(scores[:p] + scores[p + 1:]) for p, s in enumerate(scores)]
            assert env.rewards[i].tolist() == want


def test_an_illegal_action_is_refused_and_plays_nothing():
    env = BatchEnv(2, players=2, seed=3)
    before = env.obs.copy()
    legal = env.random_actions(np.random.default_rng(0))
    for bad in (DISCARD, -1, N_ACTIONS):
        with pytest.raises(ValueError, match="illegal action .* in game 1"):
            env.step(np.array([legal[0], bad]))
    np.testing.assert_array_equal(env.obs, before)
    with pytest.raises(ValueError, match="shape"):
        env.step(legal[:1])
    with pytest.raises(ValueError, match="reward must be one of rank, margin, score"):
        BatchEnv(1, reward="win")


def test_writing_into_the_returned_arrays_changes_no_game():
    """The mask handed out is the caller's: step checks actions against its own copy."""
    env = BatchEnv(2, players=2, seed=3)
    illegal = int(np.flatnonzero(env.mask[1] == 0)[0])
    legal = env.random_actions(0)
    env.mask[1, illegal] = 1
    with pytest.raises(ValueError, match=f"illegal action {illegal} in game 1"):
        env.step(np.array([legal[0], illegal]))
    with pytest.raises(ValueError, match="read-only"):
        env.seeds[0] = 99
    env.mask[:] = 0
    obs, mask, *_ = env.step(legal)
    game = Game.replay(Rules(2), 4, [legal[1]])
    np.testing.assert_array_equal(mask[1], legal_mask(game))


def test_any_integer_seed_plays_the_engine_game_and_other_input_is_refused():
    big = 2**63  # past int64: taken modulo 2**64, as Game takes it
    env = BatchEnv(np.int64(2), players=2, seed=big)
    for i in range(2):
        np.testing.assert_array_equal(env.game_arrays(i)[2], Game(Rules(2), big + i).arrays[2])
    for make, message in ((lambda: BatchEnv(2, players=2, seed=1.5), "seed must be an integer"),
                          (lambda: BatchEnv(2, {"players": 2}), "rules must be a Rules, not dict"),
                          (lambda: env.step(np.array([3.7, 2.0])), "actions must be integers"),
                          (lambda: Game(Rules(2), 1.5), "seed must be an integer")):
        with pytest.raises(ValueError, match=message):
            make()


def test_reset_starts_the_same_games_again():
    env = BatchEnv(4, players=4, seed=5)
    first = env.obs.copy()
    rng = np.random.default_rng(2)
    for _ in range(30):
        env.step(env.random_actions(rng))
    env.reset(5)
    np.testing.assert_array_equal(env.obs, first)
    np.testing.assert_array_equal(env.seeds, [5, 6, 7, 8])


@pytest.mark.parametrize("rules", RULES[:3], ids=str)
def test_the_observation_holds_nothing_of_the_deck_order(rules):
    """The same position with any order of the undrawn dominoes gives the same observation."""
    rng = np.random.default_rng(4)
    game = Game(rules, 11)
    differed = 0
    while not game.is_over:
        obs, mask = observe_view(game.view(game.current_player))
        for _ in range(3):
            other = game.view(game.current_player).determinize(int(rng.integers(1 << 40)))
            differed += other.arrays[2].tolist() != game.arrays[2].tolist()
            o2, m2, _ = observe_arrays(*other.arrays, game.current_player)
            np.testing.assert_array_equal(o2, obs)
            np.testing.assert_array_equal(m2, mask)
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])
    assert differed > len(game.history)  # the decks really differed, mostly


def test_the_layout_plane_by_plane():
    rules = Rules(3)
    assert observation_size(rules) == 3 * 8 * 9 * 9 + TABLE == 3 * 8 * 81 + 227
    game = Game(rules, 2)
    rng = np.random.default_rng(0)
    for _ in range(40):
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])
    viewer = game.current_player
    obs, mask, _ = observe_arrays(*game.arrays, viewer)
    kingdoms, table = split(obs, rules)
    assert kingdoms.shape == (3, 8, 9, 9) and table.shape == (TABLE,)
    for k in range(3):
        seat = (viewer + k) % 3
        squares = game.kingdom(seat).squares()
        planes = np.zeros((8, 9, 9))
        for (r, c), (terrain, crowns) in squares.items():
            planes[0, r + 4, c + 4] = 1
            if terrain != CASTLE:
                planes[terrain, r + 4, c + 4] = 1
                planes[7, r + 4, c + 4] = crowns
        np.testing.assert_array_equal(kingdoms[k], planes)
        assert table[171 + k] == game.discards(seat)
        assert table[175 + k] == game.scores()[seat]
    assert table[0:2].tolist() == ([1, 0] if game.phase == "place" else [0, 1])
    assert table[2] == game.round / rules.rounds
    for j, (domino, owner) in enumerate(game.current_row):
        slot = table[3 + 22 * j: 3 + 22 * (j + 1)]
        assert slot[0] == 1 and slot[1] == domino / 48
        assert slot[16:20].tolist() == [float(owner >= 0 and (owner - viewer) % 3 == s)
                                        for s in range(4)]
        assert slot[20] == game.placed[j]
        assert slot[21] == (game.domino_to_place == domino)
    for j, (domino, _owner) in enumerate(game.new_row):
        slot = table[91 + 20 * j: 91 + 20 * (j + 1)]
        assert slot[1] == domino / 48
    unseen = [n for n in range(1, 49) if table[178 + n] == 1]
    assert set(unseen) == set(range(1, 49)) - set(game.drawn())
    np.testing.assert_array_equal(mask, legal_mask(game))
    other, other_mask, _ = observe_arrays(*game.arrays, (viewer + 1) % 3)
    assert not other_mask.any()
    np.testing.assert_array_equal(split(other, rules)[0][2], kingdoms[0])
