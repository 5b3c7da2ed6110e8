"""Kingdomino as a PettingZoo AEC environment (needs the `rl` extra: pettingzoo, gymnasium)."""

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from kdtourney.engine import Game, Rules
from kdtourney.env.encoding import N_ACTIONS, observation_size, observe_arrays, reward_code
from kdtourney.env.render import render_text


def pettingzoo_env(players: int = 4, *, reward: str = "rank", render_mode: str | None = None,
                   **rules_options):
    """The Kingdomino AEC environment wrapped as PettingZoo's classic games are (an illegal
    action ends the game with reward -1 for its player; order and bounds enforced).

    players and rules_options: as `Rules` (variant, three_player, harmony, middle_kingdom,
    tiebreak, first_picks). reward: "rank" (default), "margin" or "score" (see `KingdominoEnv`).
    """
    env = KingdominoEnv(players, reward=reward, render_mode=render_mode, **rules_options)
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


class KingdominoEnv(AECEnv, EzPickle):
    """Agents `player_0`..`player_{n-1}` (the seats), `Discrete(1049)` actions in kdtourney's
    numbering, observations `{"observation": float32[size], "action_mask": int8[1049]}` laid out
    as `kdtourney.env.encoding` documents, for the observing agent (its mask is all 0 when it is
    not to act).

    Rewards come once, when the game ends: "rank" (+1 per opponent ranked below, -1 per opponent
    above, divided by players - 1), "margin" (own score minus the best other score) or "score"
    (own final score). `reset(seed=s)` plays `Game(rules, s)`, which is also what `BatchEnv`
    plays for seed s; `reset()` without a seed plays the next seed (s + 1).
    """

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"], "name": "kingdomino_v0",
                                "is_parallelizable": False}

    def __init__(self, players: int = 4, *, reward: str = "rank", render_mode: str | None = None,
                 **rules_options):
        super().__init__()
        EzPickle.__init__(self, players, reward=reward, render_mode=render_mode, **rules_options)
        self.rules = Rules(players=players, **rules_options)
        reward_code(reward)
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError("render_mode must be one of "
                             f"{', '.join(self.metadata['render_modes'])} or None, "
                             f"not {render_mode!r}")
        self.reward = reward
        self.render_mode = render_mode
        self.possible_agents = [f"player_{p}" for p in range(players)]
        size = observation_size(self.rules)
        self._observation_space = spaces.Dict({
            "observation": spaces.Box(low=0.0, high=np.inf, shape=(size,), dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(N_ACTIONS,), dtype=np.int8),
        })
        self._action_space = spaces.Discrete(N_ACTIONS)
        self._next_seed = None
        self.game = None

    def observation_space(self, agent):
        return self._observation_space

    def action_space(self, agent):
        return self._action_space

    def reset(self, seed=None, options=None):
        if seed is None:
            seed = (self._next_seed if self._next_seed is not None
                    else int(np.random.SeedSequence().entropy % 2**63))
        self.game = Game(self.rules, seed)
        self._next_seed = self.game.seed + 1
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.agents[self.game.current_player]

    def observe(self, agent):
        obs, mask, _ = observe_arrays(*self.game.arrays, self.possible_agents.index(agent),
                                      self.reward)
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.game.apply(int(action))
        if self.game.is_over:
            _, _, rewards = observe_arrays(*self.game.arrays, 0, self.reward)
            for p, name in enumerate(self.agents):
                self.rewards[name] = float(rewards[p])
                self.terminations[name] = True
            self._accumulate_rewards()
            # every agent is now iterated over once more, to take its final reward
            self.agent_selection = self.agents[0]
        else:
            self.agent_selection = self.agents[self.game.current_player]
        if self.render_mode == "human":
            self.render()

    def render(self):
        """The kingdoms as text (`Kingdom.to_text`), the rows, and the scores so far."""
        if self.render_mode is None:
            return None
        text = render_text(self.game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass

