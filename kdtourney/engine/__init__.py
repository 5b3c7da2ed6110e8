"""The rules of Kingdomino: a Numba-compiled engine behind a small public API.

Public: TILES, Rules, Kingdom, Placement, Score, Game, GameView, the action helpers. The kernels in
`kernels` (a game's; one kingdom's in `kingdom_kernels`, named in `kernels` too) take and return
arrays; search bots may call them directly through `Game.arrays`.
`warm_up`, `compiled`, `kernel_parts`: compiling the kernels ahead of the games.
"""

import numpy as np

from kdtourney.engine import kernels as K
from kdtourney.engine.game import (
    CLAIM_BASE,
    DISCARD,
    Game,
    GameView,
    claim_action,
    describe_action,
    rank_scores,
)
from kdtourney.engine.kingdom import Kingdom, Placement, Score, decode_placement, encode_placement
from kdtourney.engine.rules import Rules
from kdtourney.engine.tiles import TILES, Domino, Half

__all__ = ["TILES", "Domino", "Half", "Rules", "Kingdom", "Placement", "Score", "Game", "GameView",
           "DISCARD", "CLAIM_BASE", "claim_action", "describe_action", "encode_placement",
           "decode_placement", "rank_scores", "warm_up", "compiled", "kernel_parts"]


def warm_up() -> None:
    """Compile (first run) or load from the cache (later runs) the kernels of the public API, by
    playing one game through it, so that no bot's first call waits for them."""
    game = Game(Rules(players=2), seed=0)
    while not game.is_over:
        actions = game.legal_actions()
        game.apply(actions[len(actions) // 2])
    game.ranking()
    game.view(0).determinize(0)
    Kingdom.from_text("C").score(Rules(players=2, harmony=True, middle_kingdom=True))


def compiled() -> bool:
    """Whether the engine's kernels are in the cache of compiled code: if not, the first games
    (or `warm_up`) compile them, about a minute of CPU on a fresh install."""
    from kdtourney.engine import kernels
    from kdtourney.engine.jit_cache import in_cache

    return in_cache(kernels.apply_action)


def kernel_parts() -> list:
    """[(kernel, example arguments)]: kernels every game calls through Game, as it calls them, that
    a warm-up may compile apart while other processes compile a bot's (jit.precompile)."""
    b, s = np.zeros((1, 1), dtype=np.int64), np.zeros(1, dtype=np.int64)
    return [(K.new_game_arrays, (s,)), (K.init_game, (b, b, s, np.zeros(1, dtype=np.uint64))),
            (K.legal_actions, (b, b, s, b, b)), (K.is_legal, (b, b, s, 0, b))]
