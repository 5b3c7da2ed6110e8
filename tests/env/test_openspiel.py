"""The OpenSpiel game `python_kingdomino`: OpenSpiel's own checks, chance nodes, MCTSBot."""

import pickle

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel",
                              reason="the rl extra is not installed (pip install 'kdtourney[rl]')")

from open_spiel.python.algorithms import mcts  # noqa: E402

import kdtourney.env.openspiel  # noqa: E402, F401  (registers python_kingdomino)
from kdtourney.engine import Rules  # noqa: E402
from kdtourney.engine import kernels as K  # noqa: E402
from kdtourney.env.encoding import observation_size, observe_arrays  # noqa: E402


@pytest.mark.parametrize("name", ["python_kingdomino", "python_kingdomino(players=2)",
                                  "python_kingdomino(players=3,three_player=bga,harmony=True)",
                                  "python_kingdomino(players=2,variant=duel,middle_kingdom=True)",
                                  "python_kingdomino(players=2,first_picks=abba,tiebreak=territory)"])
def test_openspiels_random_simulation_checks_pass(name):
    game = pyspiel.load_game(name)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_parameters_are_the_rules_and_bad_ones_are_refused():
    game = pyspiel.load_game("python_kingdomino(players=3,harmony=True)")
    assert game.num_players() == 3 and game.rules == Rules(3, harmony=True)
    assert game.observation_tensor_shape() == [observation_size(Rules(3))]
    with pytest.raises(Exception, match="players must be 2, 3 or 4"):
        pyspiel.load_game("python_kingdomino(players=5)")


def play_out(state, rng):
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
    return state


def test_rows_are_drawn_by_chance_when_revealed_and_the_game_is_the_engines():
    game = pyspiel.load_game("python_kingdomino(players=2)")
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    # the king order (4 kings), then the first row of 4, all chance
    for _ in range(8):
        assert state.is_chance_node()
        outcomes, probs = zip(*state.chance_outcomes())
        assert abs(sum(probs) - 1) < 1e-9
        state.apply_action(int(rng.choice(outcomes, p=probs)))
    assert state.current_player() == state.game.first_order[0]
    play_out(state, rng)
    chance = [pa.action for pa in state.full_history() if pa.player == pyspiel.PlayerId.CHANCE]
    assert len(chance) == 4 + 24  # each of the 24 dominoes in play drawn once, by chance
    drawn = [a + 1 for a in chance[4:]]
    assert sorted(drawn) == sorted(set(drawn)) and drawn == state.game.drawn()
    returns = state.returns()
    ranks = state.game.ranking()
    assert returns == [float((ranks[1 - p] > ranks[p]) - (ranks[1 - p] < ranks[p]))
                       for p in range(2)]


def test_a_chance_outcome_not_offered_is_refused_and_changes_nothing():
    """OpenSpiel's apply_action checks no legality: a wrong outcome must not deal a domino twice."""
    state = pyspiel.load_game("python_kingdomino(players=2)").new_initial_state()
    state.apply_action(0)
    state.apply_action(0)  # seat 0's two kings ordered: only seat 1 is left
    with pytest.raises(ValueError, match="chance outcome 0 is not one of this node's"):
        state.apply_action(0)
    state.apply_action(1)
    state.apply_action(1)
    state.apply_action(5)  # domino 6 into the first row
    before = state.serialize()
    for outcome in (5, 48, -3):
        with pytest.raises(ValueError, match=f"chance outcome {outcome} is not one of"):
            state.apply_action(outcome)
    assert state.serialize() == before
    with pytest.raises(pyspiel.SpielError, match="no such domino"):
        state.apply_action_with_legality_check(100)


def test_no_decision_sees_a_row_before_chance_draws_it():
    game = pyspiel.load_game("python_kingdomino(players=3)")
    rng = np.random.default_rng(5)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
            continue
        st = state.game.arrays[2]
        pos = int(st[K.ST_DECK_POS])
        assert (st[K.ST_DECK:K.ST_DECK + pos] > 0).all() and not st[K.ST_DECK + pos:].any()
        obs = np.array(state.observation_tensor(state.current_player()), dtype=np.float32)
        np.testing.assert_array_equal(obs,
                                      observe_arrays(*state.game.arrays, state.current_player())[0])
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.integers(len(legal)))])


def test_clone_and_serialisation_keep_the_state():
    game = pyspiel.load_game("python_kingdomino(players=2,harmony=True)")
    rng = np.random.default_rng(1)
    state = game.new_initial_state()
    for _ in range(30):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(state.legal_actions()[0])
    clone = state.clone()
    text = pyspiel.serialize_game_and_state(game, state)
    _, restored = pyspiel.deserialize_game_and_state(text)
    for other in (clone, restored, pickle.loads(pickle.dumps(state))):
        assert str(other) == str(state) and other.history() == state.history()
        assert other.observation_tensor(0) == state.observation_tensor(0)
    play_out(clone, np.random.default_rng(2))
    assert not state.is_terminal()  # the clone played on alone


def test_openspiels_mcts_bot_plays_whole_games():
    game = pyspiel.load_game("python_kingdomino(players=2)")
    rng = np.random.RandomState(3)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    bots = [mcts.MCTSBot(game, uct_c=2.0, max_simulations=8, evaluator=evaluator, random_state=rng)
            for _ in range(2)]
    for _ in range(2):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            else:
                action = bots[state.current_player()].step(state)
                assert action in state.legal_actions()
                state.apply_action(action)
        assert sorted(state.returns()) in ([-1.0, 1.0], [0.0, 0.0])
        assert len(state.game.drawn()) == 24 and len(state.game.history) == 4 + 2 * 4 * 6 - 4
