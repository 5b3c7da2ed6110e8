"""Game flow: every Rules option does what docs/rules.md says; seeds fix games; views hide the
deck."""

import random

import numpy as np
import pytest

from kdtourney.engine import (
    DISCARD,
    Game,
    GameView,
    Kingdom,
    Rules,
    Score,
    claim_action,
    decode_placement,
    rank_scores,
)

ALL_RULES = [Rules(2), Rules(3), Rules(3, three_player="bga"), Rules(4), Rules(2, variant="duel")]


def play_random(rules, seed, policy_seed=0, on_decision=None):
    """Play a whole game with uniformly random actions, calling on_decision(game) before each."""
    game = Game(rules, seed)
    rnd = random.Random(policy_seed)
    while not game.is_over:
        if on_decision:
            on_decision(game)
        game.apply(rnd.choice(game.legal_actions()))
    return game


@pytest.mark.parametrize("kwargs, message", [
    (dict(players=4, variant="duel"), "duel"),
    (dict(players=5), "players must be 2, 3 or 4"),
    (dict(players=1), "players must be 2, 3 or 4"),
    (dict(players=3, first_picks="abba"), "abba"),
    (dict(tiebreak="coin"), "tiebreak"),
    (dict(three_player="house"), "three_player"),
    (dict(variant="giant"), "variant"),
    (dict(harmony="yes"), "harmony"),
])
def test_impossible_rules_are_refused_with_a_clear_message(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Rules(**kwargs)


@pytest.mark.parametrize("rules, row_len, rows, in_play, places_each, size", [
    (Rules(2), 4, 6, 24, 12, 5),
    (Rules(3), 3, 12, 36, 12, 5),
    (Rules(3, three_player="bga"), 4, 12, 48, 12, 5),
    (Rules(4), 4, 12, 48, 12, 5),
    (Rules(2, variant="duel"), 4, 12, 48, 24, 7),
])
def test_setup_rows_rounds_and_dominoes_follow_the_player_count(rules, row_len, rows, in_play,
                                                                places_each, size):
    row_lengths, places, claims = [], [0] * rules.players, [0] * rules.players

    def record(game):
        if game.phase == "place":
            places[game.current_player] += 1
        else:
            claims[game.current_player] += 1
            if not any(owner >= 0 for _, owner in game.new_row):
                row_lengths.append(len(game.new_row))

    game = play_random(rules, seed=7, on_decision=record)
    assert row_lengths == [row_len] * (rows - 1) + [row_len] or row_lengths == [row_len] * rows
    assert len(row_lengths) == rows  # a row is claimed in every round but the last
    assert places == [places_each] * rules.players
    assert claims == [places_each] * rules.players  # every placed domino was claimed once
    drawn = game.drawn()
    assert len(drawn) == in_play and len(set(drawn)) == in_play
    assert game.kingdom(0).size == size
    assert game.round == rows


def test_two_player_games_use_a_random_half_of_the_box():
    decks = {tuple(sorted(play_random(Rules(2), seed).drawn())) for seed in range(5)}
    assert len(decks) == 5


def test_in_the_bga_three_player_setup_the_unclaimed_domino_is_discarded():
    unclaimed = []

    def record(game):
        if game.phase == "place":
            row = game.current_row
            assert len(row) == 4
            assert game.domino_to_place in [d for d, owner in row if owner >= 0]
            unclaimed.extend(d for d, owner in row if owner < 0)

    game = play_random(Rules(3, three_player="bga"), seed=3, on_decision=record)
    assert len(set(unclaimed)) == 12  # one per row
    placed = sum(len(game.kingdom(p).squares()) - 1 for p in range(3)) // 2
    assert placed + sum(game.discards(p) for p in range(3)) == 36


def test_kings_place_in_ascending_domino_order_and_claims_set_the_next_order():
    done = set()  # the dominoes placed (or discarded) so far

    def record(game):
        if game.phase == "place":
            row = game.current_row
            assert [d for d, _ in row] == sorted(d for d, _ in row)
            slot = [d for d, _ in row].index(game.domino_to_place)
            assert game.current_player == row[slot][1]
            # the kings of the lower dominoes of the row have moved, none of the higher ones
            assert [d in done for d, _ in row] == [j < slot for j in range(len(row))]
            done.add(game.domino_to_place)

    order = []
    game = Game(Rules(4), 11)
    rnd = random.Random(1)
    while not game.is_over:
        if game.phase == "place" and game.round == 1:
            order.append((game.domino_to_place, game.current_player))
        record(game)
        game.apply(rnd.choice(game.legal_actions()))
    assert [d for d, _ in order] == sorted(d for d, _ in order)
    assert len(order) == 4


def test_first_picks_random_draws_the_kings_and_abba_is_fixed():
    orders = {tuple(Game(Rules(2), seed).first_order) for seed in range(40)}
    assert all(sorted(o) == [0, 0, 1, 1] for o in orders)
    assert len(orders) > 3  # several of the 6 possible orders occur
    assert {Game(Rules(4), seed).first_order[0] for seed in range(40)} == {0, 1, 2, 3}
    for seed in range(5):
        game = Game(Rules(2, first_picks="abba"), seed)
        assert game.first_order == [0, 1, 1, 0]
        seats = []
        while game.round == 0:
            seats.append(game.current_player)
            game.apply(game.legal_actions()[0])
        assert seats == [0, 1, 1, 0]


def test_the_last_round_only_places():
    game = Game(Rules(4), 5)
    rnd = random.Random(0)
    while not game.is_over:
        if game.round == 12:
            assert game.phase == "place" and game.new_row == []
        game.apply(rnd.choice(game.legal_actions()))


def find_forced_discard(rules):
    """(game, player) at the first place decision with no legal placement, over seeded random
    games."""
    for seed in range(200):
        game = Game(rules, seed)
        rnd = random.Random(seed)
        while not game.is_over:
            if game.phase == "place" and not game.kingdom(game.current_player).legal_placements(
                    game.domino_to_place):
                return game
            game.apply(rnd.choice(game.legal_actions()))
    raise AssertionError("no forced discard in 200 random games")


def test_discard_is_the_only_action_without_a_placement_and_costs_harmony():
    rules = Rules(4, harmony=True)
    game = find_forced_discard(rules)
    player = game.current_player
    assert game.legal_actions() == [DISCARD]
    with pytest.raises(ValueError, match="illegal"):
        game.apply(0)
    before = game.discards(player)
    game.apply(DISCARD)
    assert game.discards(player) == before + 1
    assert game.score(player).bonus == 0


def test_placing_is_forced_when_a_placement_exists():
    game = Game(Rules(2), 1)
    while game.phase != "place":
        game.apply(game.legal_actions()[0])
    assert DISCARD not in game.legal_actions()
    assert not game.is_legal(DISCARD)


def test_harmony_and_middle_kingdom_bonuses_in_games():
    for seed in range(30):
        game = play_random(Rules(4, harmony=True, middle_kingdom=True), seed)
        for p in range(4):
            k = game.kingdom(p)
            top, bottom, left, right = k.bounds()
            centred = -2 <= top and bottom <= 2 and -2 <= left and right <= 2
            expected = 5 * (game.discards(p) == 0) + 10 * centred
            assert game.score(p).bonus == expected
            plain = play_random(Rules(4), seed).score(p)
            assert plain.bonus == 0 and plain.territories == game.score(p).territories


def test_tiebreak_crowns_then_shared_and_territory_then_shared():
    a = Score(total=20, territories=20, bonus=0, largest_territory=6, crowns=4)
    more_land = a._replace(largest_territory=7)
    more_crowns = a._replace(crowns=5)
    assert rank_scores([a, more_land]) == [2, 1]
    assert rank_scores([a, more_crowns], "crowns") == [2, 1]
    assert rank_scores([a, more_crowns], "territory") == [1, 1]  # shared victory
    assert rank_scores([a, a], "crowns") == [1, 1]
    assert rank_scores([a._replace(total=25), a, a, a._replace(total=3)]) == [1, 2, 2, 4]


def test_identical_kingdoms_share_the_victory_in_a_game():
    game = play_random(Rules(2), 4)
    bits, bbox, st = game.arrays
    bits[1] = bits[0]
    bbox[1] = bbox[0]
    st[32:34] = 0  # no discards for either
    assert game.ranking() == [1, 1]


def test_same_seed_same_game_and_replay_reproduces_it():
    for rules in ALL_RULES:
        a = play_random(rules, seed=123, policy_seed=9)
        b = play_random(rules, seed=123, policy_seed=9)
        assert a.history == b.history and a.drawn() == b.drawn() and a.scores() == b.scores()
        c = Game.replay(rules, 123, a.history)
        assert c.is_over and c.scores() == a.scores() and c.ranking() == a.ranking()
        assert all(c.kingdom(p) == a.kingdom(p) for p in range(rules.players))
        assert Game(rules, 124).drawn() != Game(rules, 123).drawn()


def test_replay_refuses_an_illegal_action():
    with pytest.raises(ValueError, match="illegal action"):
        Game.replay(Rules(2), 0, [claim_action(48)
                                  if claim_action(48) not in Game(Rules(2), 0).legal_actions()
                                  else DISCARD])


def public(view):
    return (view.phase, view.current_player, view.round, view.current_row, view.new_row,
            view.drawn(), view.unseen(), view.history,
            [view.kingdom(p) for p in range(view.n_players)], view.scores())


def test_view_does_not_reveal_the_deck_order():
    game = Game(Rules(4), 77)
    rnd = random.Random(0)
    for _ in range(30):
        game.apply(rnd.choice(game.legal_actions()))
    view = game.view(game.current_player)
    assert not hasattr(view, "seed")
    hidden = view.arrays[2][36 + len(game.drawn()):]
    assert not hidden.any()
    # Another game with the same public past and another hidden deck gives the same view.
    other = view.determinize(np.random.default_rng(5))
    assert other.drawn() == game.drawn()
    assert public(other.view(view.player)) == public(view)
    assert np.array_equal(other.view(view.player).arrays[2], view.arrays[2])


def test_determinize_samples_only_unseen_dominoes():
    game = Game(Rules(2), 3)
    for _ in range(10):
        game.apply(game.legal_actions()[-1])
    view = game.view(0)
    seen = set(view.drawn())
    futures = set()
    for seed in range(20):
        sample = view.determinize(seed)
        while not sample.is_over:
            sample.apply(sample.legal_actions()[0])
        future = sample.drawn()[len(seen):]
        assert not seen & set(future) and len(set(future)) == len(future)
        futures.add(tuple(future))
    assert len(futures) == 20
    assert view.determinize(1).drawn() == view.determinize(1).drawn()


def test_bot_copies_cannot_change_the_game():
    game = Game(Rules(2), 8)
    before = game.copy()
    view = game.view(0)
    sample = view.determinize(0)
    sample.apply(sample.legal_actions()[0])
    copy = game.copy()
    copy.apply(copy.legal_actions()[0])
    k = game.kingdom(0)
    k.place(20, k.legal_placements(20)[0])
    assert game.history == before.history == []
    assert (np.array_equal(game.arrays[0], before.arrays[0])
            and np.array_equal(game.arrays[2], before.arrays[2]))


def test_a_view_cannot_change_how_the_game_is_ranked():
    # equal totals and largest territories; the second kingdom has more crowns
    game = play_random(Rules(2), 4)
    bits, bbox, st = game.arrays
    for seat, text in enumerate(["C W1 W0 W0 W0", "C  W0 W0 W0 W0\nF2 F0 .  .  ."]):
        kingdom = Kingdom.from_text(text)
        bits[seat], bbox[seat] = kingdom._bits, kingdom._bbox
    st[32:34] = 0
    assert game.ranking() == [2, 1]  # crowns decide
    assert rank_scores([game.score(0), game.score(1)], "territory") == [1, 1]
    view = game.view(0)
    object.__setattr__(view.rules, "tiebreak", "territory")
    object.__setattr__(view.rules, "players", 3)
    assert game.rules == Rules(2) and game.ranking() == [2, 1] and len(game.scores()) == 2
    assert view.ranking() == [2, 1]  # the view's own state, not its rules, ranks too


def test_actions_decode_to_the_squares_of_the_kingdom():
    game = Game(Rules(2), 2)
    while game.phase != "place":
        game.apply(game.legal_actions()[0])
    player, domino = game.current_player, game.domino_to_place
    placements = game.kingdom(player).legal_placements(domino)
    assert [decode_placement(a) for a in game.legal_actions()] == placements
    action = game.legal_actions()[0]
    game.apply(action)
    expected = Kingdom(5)
    expected.place(domino, decode_placement(action))
    assert game.kingdom(player) == expected


def rebuilt(view):
    """The view rebuilt from its public facts, as another process would (GameView.from_public)."""
    n = view.n_players
    return GameView.from_public(
        view.rules, view.current_player, phase=view.phase, round=view.round,
        kingdoms=[Kingdom.from_squares(view.kingdom(p).squares(), view.rules.size)
                  for p in range(n)],
        current_row=view.current_row, placed=view.placed, new_row=view.new_row,
        first_order=view.first_order, drawn=reversed(view.drawn()),
        discards=[view.discards(p) for p in range(n)])


@pytest.mark.parametrize("rules", ALL_RULES + [Rules(2, first_picks="abba", harmony=True)], ids=str)
def test_a_view_rebuilt_from_public_facts_plays_like_the_view(rules):
    def check(game):
        view = game.view(game.current_player)
        other = rebuilt(view)
        without_order = [0, 1, 2, 3, 4, 6, 8, 9]  # neither drawn()'s order nor the history
        assert [public(other)[i] for i in without_order] == [public(view)[i] for i in without_order]
        assert sorted(other.drawn()) == sorted(view.drawn()) and other.history == []
        assert other.placed == view.placed and other.first_order == view.first_order
        assert other.legal_actions() == view.legal_actions()
        assert [other.discards(p) for p in range(rules.players)] == \
            [view.discards(p) for p in range(rules.players)]
        # the same randomness gives the same future: search bots decide alike
        a, b = view.determinize(11), other.determinize(11)
        while not a.is_over:
            a.apply(a.legal_actions()[0])
            b.apply(b.legal_actions()[0])
        assert a.history[len(view.history):] == b.history and a.scores() == b.scores()

    for seed in range(2):
        play_random(rules, seed, policy_seed=seed, on_decision=check)


def test_placed_follows_the_turn():
    game = Game(Rules(2), 4)
    while game.round == 0:
        assert game.placed == []
        game.apply(game.legal_actions()[0])
    seen = []
    while game.round == 1:
        seen.append(game.placed)
        game.apply(game.legal_actions()[0])
    assert seen == [[False] * 4, [True, False, False, False], [True, False, False, False],
                    [True, True, False, False], [True, True, False, False],
                    [True, True, True, False], [True, True, True, False], [True] * 4]


def test_facts_that_do_not_fit_together_are_refused():
    game = play_random(Rules(3), 1)
    view = Game(Rules(3), 1).view(0)
    facts = dict(phase="claim", round=0, kingdoms=[Kingdom(5)] * 3, current_row=[],
                 placed=[], new_row=view.new_row, first_order=view.first_order,
                 drawn=view.drawn(), discards=[0, 0, 0])
    acting = view.current_player
    assert GameView.from_public(Rules(3), acting, **facts).legal_actions() == view.legal_actions()
    with pytest.raises(ValueError, match=f"seat {acting} is to act"):
        GameView.from_public(Rules(3), (acting + 1) % 3, **facts)
    with pytest.raises(ValueError, match="4 dominoes drawn, but round 0 has drawn 1 rows of 3"):
        GameView.from_public(Rules(3), acting,
                             **dict(facts, drawn=view.drawn() + view.unseen()[:1]))
    with pytest.raises(ValueError, match="lowest first"):
        GameView.from_public(Rules(3), acting, **dict(facts, new_row=view.new_row[::-1]))
    with pytest.raises(ValueError, match="3 kingdoms"):
        GameView.from_public(Rules(3), acting, **dict(facts, kingdoms=[Kingdom(7)] * 3))
    assert game.is_over


def test_kingdoms_from_squares_and_back():
    game = play_random(Rules(2, variant="duel"), 5)
    for p in range(2):
        kingdom = game.kingdom(p)
        squares = kingdom.squares()
        assert squares[(0, 0)] == (7, 0) and list(squares) == sorted(squares)
        assert Kingdom.from_squares(squares, 7) == kingdom
        assert Kingdom.from_squares([(r, c, t, k)
                                     for (r, c), (t, k) in squares.items()], 7) == kingdom
    with pytest.raises(ValueError, match="span 6x1, more than a 5x5"):
        Kingdom.from_squares({(r, 0): (1, 0) for r in range(1, 6)})
    with pytest.raises(ValueError, match=r"\(9, 0\)"):
        Kingdom.from_squares({(1, 0): (1, 0), (0, 1): (9, 0)})
