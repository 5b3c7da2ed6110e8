"""The PettingZoo environment: PettingZoo's own checks, and the same games as BatchEnv."""

import numpy as np
import pytest

pytest.importorskip("pettingzoo",
                    reason="the rl extra is not installed (pip install 'kdtourney[rl]')")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from kdtourney.engine import Game, Rules  # noqa: E402
from kdtourney.env import BatchEnv, pettingzoo_env  # noqa: E402
from kdtourney.env.aec import KingdominoEnv  # noqa: E402


@pytest.mark.parametrize("options", [dict(players=2),
                                     dict(players=4, harmony=True, middle_kingdom=True),
                                     dict(players=3, three_player="bga"),
                                     dict(players=2, variant="duel")],
                         ids=str)
def test_pettingzoos_api_test_passes(options):
    api_test(pettingzoo_env(**options), num_cycles=200)


def test_pettingzoos_seed_test_passes():
    seed_test(lambda: pettingzoo_env(players=3), num_cycles=200)


@pytest.mark.parametrize("rules", [Rules(2), Rules(4, harmony=True), Rules(3, three_player="bga")],
                         ids=str)
@pytest.mark.parametrize("reward", ["rank", "margin", "score"])
def test_the_pettingzoo_env_plays_batchenvs_games_step_by_step(rules, reward):
    n = 2
    batch = BatchEnv(n, rules, seed=40, reward=reward)
    envs = [pettingzoo_env(rules.players, reward=reward, **{k: v for k, v in rules.to_dict().items()
                                                             if k != "players"}) for _ in range(n)]
    for i, env in enumerate(envs):
        env.reset(seed=40 + i)
    rng = np.random.default_rng(3)
    ended = [False] * n
    while not all(ended):
        for i, env in enumerate(envs):
            if ended[i]:
                continue
            agent = env.agent_selection
            assert agent == f"player_{batch.player[i]}"
            obs, _, _, _, _ = env.last()
            np.testing.assert_array_equal(obs["observation"], batch.obs[i])
            np.testing.assert_array_equal(obs["action_mask"], batch.mask[i])
        actions = batch.random_actions(rng)
        batch.step(actions)
        for i, env in enumerate(envs):
            if ended[i]:
                continue
            env.step(int(actions[i]))
            if batch.dones[i]:
                assert all(env.terminations.values())
                rewards = [env.rewards[f"player_{p}"] for p in range(rules.players)]
                np.testing.assert_array_equal(np.float32(rewards), batch.rewards[i])
                ended[i] = True


def test_rewards_reach_every_agent_once_at_the_end_and_render_shows_the_kingdoms():
    env = pettingzoo_env(2, render_mode="ansi")
    env.reset(seed=9)
    game = Game(Rules(2), 9)
    total = {agent: 0.0 for agent in env.possible_agents}
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        total[agent] += reward
        if termination:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        game.apply(action)
        env.step(action)
    ranks = game.ranking()
    assert total == {f"player_{p}": float((ranks[1 - p] > ranks[p]) - (ranks[1 - p] < ranks[p]))
                     for p in range(2)}
    text = env.render()
    assert game.kingdom(0).to_text() in text.replace("\n  ", "\n")
    assert "game over" in text and f"player_0: {game.scores()[0]} points" in text


def test_reset_without_a_seed_plays_the_next_seed_and_bad_options_are_refused():
    env = KingdominoEnv(2)
    env.reset(seed=5)
    env.reset()
    assert env.game.seed == 6
    with pytest.raises(ValueError, match="players must be 2, 3 or 4"):
        KingdominoEnv(5)
    with pytest.raises(ValueError, match="reward must be one of"):
        KingdominoEnv(2, reward="elo")
