"""Bots: the `Bot` contract (base; clock: the game clocks a bot plays under, part of what it is
told), the built-in players (random_bot, greedy, mce, mcts, expectimax, heuristic, value_greedy,
endgame) and their Numba kernels (kernels, evaluation, search_kernels, expectimax_kernels,
heuristic_kernels, net_kernels; valuenet and weights/: the shipped value networks).

    from kdtourney.bots import Bot

Finding bots (built-ins, folders, entry points) is kdtourney.registry's.
"""

from kdtourney.bots.base import Bot

__all__ = ["Bot"]
