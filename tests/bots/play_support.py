"""A whole game of one bot against greedy ones, in this process, with no harness: what the golden
games of tests/bots (test_greedy_kernels, test_search_golden) record and replay."""

from kdtourney.bots.greedy import GreedyBot
from kdtourney.engine import Game


def play_against_greedy(rules, seed, make_bot) -> list[int]:
    """The actions of a whole game: make_bot() in seat 0, GreedyBot elsewhere, each set up with
    the seed seed * 10 + its seat."""
    bots = [make_bot()] + [GreedyBot() for _ in range(rules.players - 1)]
    game = Game(rules, seed)
    for seat, bot in enumerate(bots):
        bot.setup(seat, rules, seed * 10 + seat)
    while not game.is_over:
        seat = game.current_player
        game.apply(bots[seat].act(game.view(seat)))
    return [int(a) for a in game.history]
