"""The observation of a learning agent: what the seat it plays for may know, never the deck order.

One float32 vector of fixed length for a given `Rules`, seats relative to the viewer (seat 0 is
the viewer): the kingdoms [players, 8, W, W] then the table [227]. Actions are Discrete(1049)
(kdtourney's numbers) with an int8 action mask. Plane by plane: docs/observation.md and
docs/internals.md.
"""

import numpy as np

from kdtourney.engine import Rules
from kdtourney.engine import kernels as K
from kdtourney.env import kernels as EK

N_ACTIONS = EK.N_ACTIONS
KINGDOM_PLANES = EK.KINGDOM_PLANES
TABLE = EK.TABLE
REWARDS = {"rank": EK.REWARD_RANK, "margin": EK.REWARD_MARGIN, "score": EK.REWARD_SCORE}
PLANE_NAMES = ("occupied", "wheat", "forest", "lake", "grassland", "swamp", "mine", "crowns")


def window(rules: Rules) -> int:
    """W: the side of a kingdom's window in the observation."""
    return 2 * rules.size - 1


def observation_size(rules: Rules) -> int:
    """Length of the observation vector for these rules."""
    return _length(rules.players, rules.size)


def _length(players, size):
    return players * KINGDOM_PLANES * (2 * size - 1) ** 2 + TABLE


def split(observation: np.ndarray, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """(kingdoms [..., players, 8, W, W], table [..., TABLE]) views of observations [..., size]."""
    w = window(rules)
    cut = rules.players * KINGDOM_PLANES * w * w
    lead = observation.shape[:-1]
    return (observation[..., :cut].reshape(*lead, rules.players, KINGDOM_PLANES, w, w),
            observation[..., cut:])


def reward_code(reward: str) -> int:
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
    return REWARDS[reward]


def observe_arrays(bits, bbox, st, viewer: int, reward: str = "rank"):
    """(observation float32[size], action mask int8[N_ACTIONS], rewards float32[players]) of one
    game's engine arrays (`Game.arrays`, `GameView.arrays`) as seat `viewer` sees it. The mask is
    all 0 unless `viewer` is to act; rewards are zeros until the game is over."""
    players = bits.shape[0]
    obs = np.empty((1, _length(players, int(st[K.ST_SIZE]))), dtype=np.float32)
    mask = np.empty((1, N_ACTIONS), dtype=np.int8)
    rewards = np.empty((1, players), dtype=np.float32)
    EK.observe(bits[np.newaxis], bbox[np.newaxis], st[np.newaxis],
               np.array([viewer], dtype=np.int64), reward_code(reward), obs, mask, rewards)
    return obs[0], mask[0], rewards[0]


def observe_view(view):
    """(observation, action mask) of a GameView, for its player: the same arrays as the
    environments give at that decision."""
    obs, mask, _ = observe_arrays(*view.arrays, view.player)
    return obs, mask
