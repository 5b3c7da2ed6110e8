"""The bot contract as the engine and the built-in `random` bot keep it: legal, complete games in
every setting; determinism by the setup seed; a bot's view is its own copy."""

from collections import Counter

import numpy as np
import pytest

from kdtourney.bots import Bot
from kdtourney.bots.random_bot import RandomBot
from kdtourney.engine import Game, Rules
from kdtourney.testing import SETTINGS


def play(rules: Rules, game_seed: int, bots, setup_seeds) -> Game:
    """Play a whole game, checking every action against the legal ones."""
    game = Game(rules, game_seed)
    for seat, bot in enumerate(bots):
        bot.setup(seat, rules, setup_seeds[seat])
    while not game.is_over:
        seat = game.current_player
        view = game.view(seat)
        action = bots[seat].act(view)
        assert action in view.legal_actions()
        game.apply(action)
    return game


def test_settings_cover_every_player_count_and_variant():
    rules = [r for _, r in SETTINGS]
    assert Rules(2) in rules and Rules(3, three_player="official") in rules
    assert Rules(3, three_player="bga") in rules and Rules(4) in rules
    assert Rules(2, variant="duel") in rules


@pytest.mark.parametrize("label, rules", SETTINGS, ids=[s[0] for s in SETTINGS])
def test_random_plays_legal_complete_games(label, rules):
    kings = rules.players * rules.kings_per_player
    for game_seed in range(5):
        game = play(rules, game_seed, [RandomBot() for _ in range(rules.players)],
                    [game_seed * 10 + seat for seat in range(rules.players)])
        assert game.is_over and game.legal_actions() == []
        # every king claims and places one domino per row
        assert len(game.history) == 2 * kings * rules.rounds
        assert Game.replay(rules, game_seed, game.history).scores() == game.scores()


def test_random_is_deterministic_by_its_setup_seed():
    rules = Rules(4)

    def history(seeds):
        return play(rules, 7, [RandomBot() for _ in range(4)], seeds).history

    assert history([1, 2, 3, 4]) == history([1, 2, 3, 4])
    assert history([1, 2, 3, 4]) != history([5, 6, 7, 8])


def test_random_is_uniform_over_the_legal_actions():
    game = Game(Rules(2), 3)
    while len(game.legal_actions()) < 5:  # a decision with several choices
        game.apply(game.legal_actions()[0])
    view = game.view(game.current_player)
    legal = view.legal_actions()
    bot = RandomBot()
    bot.setup(0, game.rules, 123)
    draws = 400 * len(legal)
    counts = Counter(bot.act(view) for _ in range(draws))
    assert set(counts) == set(legal)
    # chi-square against uniform, far below the 0.1% critical value for up to 60 degrees of freedom
    expected = draws / len(legal)
    chi2 = sum((counts[a] - expected) ** 2 / expected for a in legal)
    assert chi2 < 100


def test_a_bot_cannot_change_the_real_game_through_its_view():
    class Vandal(Bot):
        name = "vandal"

        def act(self, view):
            action = view.legal_actions()[0]
            for array in view.arrays:
                array[...] = 0
            view.history.clear()
            return action

    game = Game(Rules(2), 5)
    before = [a.copy() for a in game.arrays], list(game.history)
    view = game.view(game.current_player)
    first = view.legal_actions()[0]
    assert Vandal().act(view) == first
    assert all(np.array_equal(a, b) for a, b in zip(before[0], game.arrays))
    assert game.history == before[1]
    game.apply(first)  # the game goes on untouched


def test_determinize_keeps_the_public_state_and_hides_the_deck():
    game = Game(Rules(4), 11)
    for _ in range(10):
        game.apply(game.legal_actions()[0])
    view = game.view(game.current_player)
    a, b = view.determinize(1), view.determinize(1)
    assert a.legal_actions() == game.legal_actions() == b.legal_actions()
    assert a.scores() == game.scores()
    assert a.arrays[2].tolist() == b.arrays[2].tolist()  # same rng, same sample
