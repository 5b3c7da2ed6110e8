"""`BatchEnv`: N games stepped at once in compiled code, numpy arrays in and out."""

import numbers

import numpy as np

from kdtourney.engine import Rules
from kdtourney.engine import kernels as K
from kdtourney.engine.game import as_seed, header_of
from kdtourney.env import kernels as EK
from kdtourney.env.encoding import N_ACTIONS, observation_size, reward_code


class BatchEnv:
    """`num_envs` games of Kingdomino played side by side, one decision each per `step`.

    Every game is the same as `Game(rules, seed)` for its seed, and the same as the PettingZoo
    environment reset with that seed: slot i starts with seed `seed + i`, and each time its game
    ends the next one takes seed + i + k * num_envs (k = 1, 2, ...). Auto-reset: the step that ends
    a game returns its `rewards` (every seat's, float32[num_envs, players]) and `dones[i]` True,
    and already the new game's first observation, mask and player.

    Arrays (views, overwritten by the next call; copy what you keep):
        obs      float32[num_envs, observation_size(rules)]  for the player to act
        mask     int8[num_envs, 1049]                         its legal actions (1 = legal)
        player   int64[num_envs]                              the seat to act
        rewards  float32[num_envs, players]                   non-zero only where a game ended
        dones    bool[num_envs]
        seeds    int64[num_envs]                              the seed of each game being played
    Writing into them changes nothing of the games: `step` checks actions against its own copy of
    the mask, and `seeds` is read-only. Seeds are any integers, taken modulo 2**64 as `Game` takes
    them (`seeds` shows them as int64).

    reward: "rank" (default: +1 per opponent ranked below, -1 per opponent above, divided by
    players - 1, so 2 players get +1/-1 and equal ranks 0), "margin" (own score minus the best
    other score) or "score" (own final score). `rules` or keyword rules options (players=2,
    harmony=True, ... as `Rules`).
    """

    def __init__(self, num_envs: int, rules: Rules | None = None, *, seed: int = 0,
                 reward: str = "rank", **rules_options):
        if not (isinstance(num_envs, numbers.Integral) and num_envs >= 1):
            raise ValueError(f"num_envs must be a positive int, not {num_envs!r}")
        num_envs = int(num_envs)
        if rules is not None and rules_options:
            raise ValueError("give either rules or rules options, not both")
        if rules is not None and not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules, not {type(rules).__name__} (or give rules "
                             "options: BatchEnv(n, players=2, harmony=True))")
        self.rules = rules if rules is not None else Rules(**rules_options)
        self.num_envs: int = num_envs
        self.reward = reward
        self._kind = reward_code(reward)
        self._header: np.ndarray = header_of(self.rules)
        n, players = num_envs, self.rules.players
        self._bits: np.ndarray = np.zeros((n, players, K.kingdom_width(self.rules.size)),
                                          dtype=np.int64)
        self._bbox: np.ndarray = np.zeros((n, players, 4), dtype=np.int64)
        self._st: np.ndarray = np.zeros((n, K.ST_LEN), dtype=np.int64)
        self.obs: np.ndarray = np.zeros((n, observation_size(self.rules)), dtype=np.float32)
        # what step checks actions against
        self._mask: np.ndarray = np.zeros((n, N_ACTIONS), dtype=np.int8)
        self.mask: np.ndarray = np.zeros_like(self._mask)
        self.player: np.ndarray = np.zeros(n, dtype=np.int64)
        self.rewards: np.ndarray = np.zeros((n, players), dtype=np.float32)
        self.dones: np.ndarray = np.zeros(n, dtype=np.bool_)
        self._seeds: np.ndarray = np.zeros(n, dtype=np.int64)
        self.seeds: np.ndarray = self._seeds.view()
        self.seeds.flags.writeable = False
        self.reset(seed)

    @property
    def observation_size(self) -> int:
        return self.obs.shape[1]

    def reset(self, seed: int = 0):
        """Start every game again, game i with seed `seed + i`. Returns (obs, mask, player)."""
        # uint64 arithmetic wraps modulo 2**64, as Game takes seeds
        first = np.uint64(as_seed(seed) % 2**64)
        self._seeds[:] = (first + np.arange(self.num_envs, dtype=np.uint64)).view(np.int64)
        self.rewards[:] = 0
        self.dones[:] = False
        EK.reset(self._bits, self._bbox, self._st, self._header, self._seeds, self.obs, self._mask,
                 self.player)
        self.mask[:] = self._mask
        return self.obs, self.mask, self.player

    def step(self, actions):
        """Play actions[i] (int[num_envs], each legal by `mask`) in game i. Returns (obs, mask,
        rewards, dones, player); an illegal action raises ValueError and plays nothing."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), not {actions.shape}")
        if actions.dtype.kind not in "iu":  # a float would be cut to an action silently
            raise ValueError(f"actions must be integers, not {actions.dtype}")
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        bad = EK.step(self._bits, self._bbox, self._st, self._header, actions, self._seeds,
                      self.num_envs, self._kind, self.obs, self._mask, self.rewards, self.dones,
                      self.player)
        if bad >= 0:
            raise ValueError(f"illegal action {int(actions[bad])} in game {bad} "
                             f"(seed {int(self.seeds[bad])}) for seat {int(self.player[bad])}")
        self.mask[:] = self._mask
        return self.obs, self.mask, self.rewards, self.dones, self.player

    def random_actions(self, rng) -> np.ndarray:
        """A uniformly random legal action for every game (numpy: for baselines and tests); rng: a
        numpy Generator or a seed for one."""
        rng = np.random.default_rng(rng)
        games, actions = np.nonzero(self._mask)  # every game has a legal action: games never stop
        counts = np.bincount(games, minlength=self.num_envs)
        first = np.cumsum(counts) - counts
        return actions[first + (rng.random(self.num_envs) * counts).astype(np.int64)]

    def game_arrays(self, i: int):
        """(bits, bbox, st) of game i: the engine's arrays, as `Game.arrays` (views: do not
        mutate)."""
        return self._bits[i], self._bbox[i], self._st[i]
