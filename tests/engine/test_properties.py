"""Properties of whole games over hypothesis-chosen rules, seeds and moves."""

import naive
from hypothesis import given, settings
from hypothesis import strategies as st

from kdtourney.engine import DISCARD, Game, Kingdom, Rules

RULES = [Rules(2), Rules(3), Rules(3, three_player="bga"),
         Rules(4, harmony=True, middle_kingdom=True),
         Rules(2, variant="duel", middle_kingdom=True),
         Rules(2, first_picks="abba", tiebreak="territory")]


@st.composite
def games(draw):
    """A game after a hypothesis-chosen number of moves, each a hypothesis-chosen legal action."""
    rules = draw(st.sampled_from(RULES))
    game = Game(rules, draw(st.integers(0, 2**64 - 1)))
    for _ in range(draw(st.integers(0, 120))):
        if game.is_over:
            break
        actions = game.legal_actions()
        game.apply(actions[draw(st.integers(0, len(actions) - 1))])
    return game


@settings(max_examples=60, deadline=None)
@given(games())
def test_replay_text_and_scores_agree(game):
    again = Game.replay(game.rules, game.seed, game.history)
    assert again.history == game.history and again.scores() == game.scores()
    size = game.rules.size
    for p in range(game.n_players):
        kingdom = game.kingdom(p)
        assert Kingdom.from_text(kingdom.to_text(), size) == kingdom
        expected = naive.score(naive.parse_text(kingdom.to_text()), size=size,
                               middle_kingdom=game.rules.middle_kingdom)
        score = game.score(p)
        assert score.territories == expected["territories"]
        assert score.largest_territory == expected["largest_territory"]
        assert score.crowns == expected["crowns"]


@settings(max_examples=60, deadline=None)
@given(games(), st.integers(0, 1000))
def test_a_determinization_is_the_same_public_game(game, seed):
    if game.is_over:
        return
    view = game.view(game.current_player)
    sample = view.determinize(seed)
    assert sample.legal_actions() == game.legal_actions()
    assert sample.drawn() == game.drawn() and sample.scores() == game.scores()
    assert sorted(sample.unseen()) == sorted(game.unseen())
    while not sample.is_over:  # any determinization plays on to a complete, legal game
        actions = sample.legal_actions()
        assert actions and (actions == [DISCARD] or DISCARD not in actions)
        sample.apply(actions[-1])
    assert len(sample.drawn()) == game.rules.dominoes_in_play
