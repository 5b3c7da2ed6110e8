"""Kingdomino as an OpenSpiel Python game, `python_kingdomino` (needs the `rl` extra: open_spiel).

Importing this module registers the game: `pyspiel.load_game("python_kingdomino(players=3)")`.
Parameters as `Rules` (players, variant, three_player, harmony, middle_kingdom, tiebreak,
first_picks). Sequential, perfect information with explicit chance nodes (the first kings' order,
each revealed domino); actions are kdtourney's numbers; the return is the "rank" reward. The
chance model and the rest: docs/internals.md.
"""

import numpy as np
import pyspiel
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from kdtourney.engine import Game, Rules
from kdtourney.engine import kernels as K
from kdtourney.engine.tiles import TILES
from kdtourney.env.encoding import N_ACTIONS, observation_size, observe_arrays
from kdtourney.env.render import render_text

GAME_NAME = "python_kingdomino"
_DEFAULTS = Rules().to_dict()

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Kingdomino (kdtourney)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULTS)


def rules_of(params: dict) -> Rules:
    """The Rules of the game's parameters (defaults: `Rules()`)."""
    return Rules(**{k: params.get(k, v) for k, v in _DEFAULTS.items()})


class KingdominoGame(pyspiel.Game):
    """The game `python_kingdomino`; `rules` holds its `Rules`."""

    def __init__(self, params=None):
        params = dict(params or {})
        self.rules = rules_of(params)
        r = self.rules
        kings = r.players * r.kings_per_player
        decisions = r.row_length + r.rounds * r.row_length * 2
        info = pyspiel.GameInfo(num_distinct_actions=N_ACTIONS, max_chance_outcomes=48,
                                num_players=r.players, min_utility=-1.0, max_utility=1.0,
                                utility_sum=0.0,
                                max_game_length=decisions + kings + r.dominoes_in_play)
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self):
        return KingdominoState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return KingdominoObserver(self.rules, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class KingdominoState(pyspiel.State):
    """A kdtourney `Game` (`self.game`) whose deck and first king order chance fills in as they
    are revealed: until then the state holds no trace of them."""

    def __init__(self, game):
        super().__init__(game)
        self.rules = game.rules
        self.game = Game(self.rules, 0)
        st = self.game.arrays[2]
        kings = int(st[K.ST_KINGS])
        random_order = self.rules.first_picks == "random"
        self._kings_left = ([kings // self.rules.players] * self.rules.players if random_order
                            else None)
        self._kings_ordered = 0
        if random_order:
            st[K.ST_FIRST_ORDER:K.ST_FIRST_ORDER + kings] = -1
        self._hide_new_row()

    # -- chance ------------------------------------------------------------------------------

    def _hide_new_row(self):
        """Forget the row the engine just drew from its own deck: chance draws it instead."""
        st = self.game.arrays[2]
        pos = int(st[K.ST_DECK_POS])
        self._to_draw = int(st[K.ST_ROW_LEN])
        st[K.ST_DECK + pos - self._to_draw:K.ST_DECK + 48] = 0
        st[K.ST_NEW_ROW:K.ST_NEW_ROW + 4] = 0

    def _in_king_order(self):
        return (self._kings_left is not None
                and self._kings_ordered < int(self.game.arrays[2][K.ST_KINGS]))

    def chance_outcomes(self):
        assert self.is_chance_node()
        if self._in_king_order():
            left = sum(self._kings_left)
            return [(seat, n / left) for seat, n in enumerate(self._kings_left) if n]
        unseen = self.game.unseen()
        return [(d - 1, 1.0 / len(unseen)) for d in unseen]

    def _apply_chance(self, outcome):
        if outcome not in dict(self.chance_outcomes()):  # OpenSpiel's apply_action checks nothing
            raise ValueError(f"chance outcome {outcome} is not one of this node's: "
                             f"{self._action_to_string(pyspiel.PlayerId.CHANCE, outcome)}")
        st = self.game.arrays[2]
        if self._in_king_order():
            self._kings_left[outcome] -= 1
            st[K.ST_FIRST_ORDER + self._kings_ordered] = outcome
            self._kings_ordered += 1
            st[K.ST_PLAYER] = st[K.ST_FIRST_ORDER]
            return
        pos = int(st[K.ST_DECK_POS])
        st[K.ST_DECK + pos - self._to_draw] = outcome + 1
        self._to_draw -= 1
        if self._to_draw == 0:  # the whole row is revealed: into the engine's new row, ascending
            n = int(st[K.ST_ROW_LEN])
            st[K.ST_NEW_ROW:K.ST_NEW_ROW + n] = np.sort(st[K.ST_DECK + pos - n:K.ST_DECK + pos])

    # -- OpenSpiel's State API ---------------------------------------------------------------

    def current_player(self):
        if self.game.is_over:
            return pyspiel.PlayerId.TERMINAL
        if self._to_draw or self._in_king_order():
            return pyspiel.PlayerId.CHANCE
        return self.game.current_player

    def _legal_actions(self, player):
        return self.game.legal_actions()

    def _apply_action(self, action):
        if self.is_chance_node():
            self._apply_chance(int(action))
            return
        st = self.game.arrays[2]
        pos = int(st[K.ST_DECK_POS])
        self.game.apply(int(action))
        if st[K.ST_DECK_POS] != pos:
            self._hide_new_row()

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            if self._in_king_order():
                return f"first king: seat {action}"
            return (f"draw {TILES[action + 1]}" if 0 <= action < 48
                    else f"draw #{action + 1} (no such domino)")
        return self.game.describe(action)

    def is_terminal(self):
        return self.game.is_over

    def returns(self):
        if not self.game.is_over:
            return [0.0] * self.rules.players
        return observe_arrays(*self.game.arrays, 0, "rank")[2].astype(float).tolist()

    def __str__(self):
        text = render_text(self.game)
        if not self.is_chance_node():
            return text
        what = ("the order of the first kings" if self._in_king_order()
                else "the dominoes of the new row")
        return text.rsplit("\n", 1)[0] + f"\nto act: chance, drawing {what}"


def state_of_view(game: KingdominoGame, view) -> KingdominoState:
    """The state of `game` at a player's decision, from that player's `GameView`: the same
    kingdoms and rows, the undrawn dominoes left to chance (its history holds no actions)."""
    state = KingdominoState(game)
    engine_game = view.determinize(0)
    st = engine_game.arrays[2]
    st[K.ST_DECK + int(st[K.ST_DECK_POS]):K.ST_LEN] = 0  # the deck determinize dealt: not drawn yet
    state.game, state._kings_left, state._to_draw = engine_game, None, 0
    return state


class KingdominoObserver:
    """OpenSpiel's PyObserver: the kdtourney observation of the observing player."""

    def __init__(self, rules, params):
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        self.tensor = np.zeros(observation_size(rules), np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state, player):
        self.tensor[:] = observe_arrays(*state.game.arrays, player)[0]

    def string_from(self, state, player):
        return f"player_{player} observes\n{render_text(state.game)}"


pyspiel.register_game(_GAME_TYPE, KingdominoGame)
