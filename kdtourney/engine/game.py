"""`Game`: a whole game of Kingdomino; `GameView`: what one player may know of it.

Turns. In the first round each king, in the drawn king order, claims a domino of the first row.
In every later round, for each domino of the previous row from lowest number to highest, its owner
first places it (a place decision) and then, unless it is the last round, claims a domino of the
new row (a claim decision). So a turn has two decisions, and `current_player` and `phase` say
whose decision it is and which kind.

Actions are ints (see `kdtourney.engine.kernels`):
- place: `encode_placement(Placement(a, b))`, 0..675; `decode_placement(action)` gives the squares
  back. A domino with two identical halves is only listed pointing right or down.
- `DISCARD` (676): legal only, and then the only legal action, when the domino has no placement.
- claim: `CLAIM_BASE + n` (1001..1048) claims domino number n of the new row.
"""

import copy
import numbers

import numpy as np

from kdtourney.engine import kernels as K
from kdtourney.engine.kingdom import (
    Kingdom,
    Score,
    decode_placement,
    encode_placement,
    flags_of,
    square_array,
)
from kdtourney.engine.rules import Rules
from kdtourney.engine.tiles import TILES

DISCARD = K.DISCARD
CLAIM_BASE = K.CLAIM_BASE
_PHASES = {K.PHASE_PLACE: "place", K.PHASE_CLAIM: "claim", K.PHASE_OVER: "over"}


def claim_action(domino: int) -> int:
    """The action that claims domino number `domino`."""
    return CLAIM_BASE + domino


def as_seed(seed) -> int:
    """`seed` as an int: any integer, Python's or numpy's; ValueError for anything else (a float
    would be cut to an int silently, and 1.5 play the game of 1)."""
    if isinstance(seed, numbers.Integral):
        return int(seed)
    raise ValueError(f"a seed must be an integer, not {seed!r}")


def rng_state(seed) -> np.ndarray:
    """A kernel random state (uint64[1]) from an int seed or a numpy Generator."""
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(0, 2**63))
    return np.array([int(seed) % 2**64], dtype=np.uint64)


def describe_action(action: int, domino: int | None = None) -> str:
    """Human-readable action, e.g. 'place #23 W1|M0 at (0, 1)-(0, 2)', 'discard', 'claim #31'."""
    if action == DISCARD:
        return "discard" if domino is None else f"discard #{domino}"
    if CLAIM_BASE < action <= CLAIM_BASE + 48:
        return f"claim {TILES[action - CLAIM_BASE]}"
    placement = decode_placement(action)
    what = "" if domino is None else f"{TILES[domino]} "
    return f"place {what}at {placement.a}-{placement.b}"


class _Table:
    """What every player sees: kingdoms, rows, scores, whose turn. Shared by Game and GameView.

    Everything here reads the table's own state arrays (their header holds the rules), never
    `rules`: a view's copy of the rules, even changed with object.__setattr__, cannot change how
    the real game is scored or ranked.
    """

    rules: Rules
    _bits: np.ndarray  # int64[players, kingdom_width(size)]
    _bbox: np.ndarray  # int64[players, 4]
    _st: np.ndarray    # int64[ST_LEN]
    history: list[int]

    def _scratch(self):
        return np.zeros((1, K.SCRATCH), dtype=np.int64)

    @property
    def n_players(self) -> int:
        return int(self._st[K.ST_PLAYERS])

    @property
    def phase(self) -> str:
        """'place', 'claim' or 'over'."""
        return _PHASES[int(self._st[K.ST_PHASE])]

    @property
    def is_over(self) -> bool:
        return self._st[K.ST_PHASE] == K.PHASE_OVER

    @property
    def current_player(self) -> int | None:
        """The seat to decide now, None when the game is over."""
        return None if self.is_over else int(self._st[K.ST_PLAYER])

    @property
    def round(self) -> int:
        """0 while the first row is claimed; k while the k-th row is placed."""
        return int(self._st[K.ST_ROUND])

    @property
    def domino_to_place(self) -> int | None:
        """The domino the current player must place now, None outside a place decision."""
        return int(K.domino_to_place(self._st)) or None

    def _row(self, row, owner):
        dominoes, owners = self._st[row:row + 4].tolist(), self._st[owner:owner + 4].tolist()
        return [(d, o) for d, o in zip(dominoes, owners) if d != 0]

    @property
    def current_row(self) -> list[tuple[int, int]]:
        """The row being placed this round: (domino, owner seat or -1) lowest first."""
        return self._row(K.ST_CUR_ROW, K.ST_CUR_OWNER)

    @property
    def placed(self) -> list[bool]:
        """Per domino of `current_row`: whether its owner has placed (or discarded) it already; an
        unclaimed domino (3 players, "bga") is never placed."""
        slot, phase = int(self._st[K.ST_SLOT]), int(self._st[K.ST_PHASE])
        return [owner >= 0 and (phase == K.PHASE_OVER or j < slot
                                or (j == slot and phase == K.PHASE_CLAIM))
                for j, (_, owner) in enumerate(self.current_row)]

    @property
    def new_row(self) -> list[tuple[int, int]]:
        """The row being claimed: (domino, owner seat or -1 while free), lowest first; empty in
        the last round."""
        return self._row(K.ST_NEW_ROW, K.ST_NEW_OWNER)

    @property
    def first_order(self) -> list[int]:
        """The seats in the order their kings claimed the first row."""
        return self._st[K.ST_FIRST_ORDER:K.ST_FIRST_ORDER + self._st[K.ST_KINGS]].tolist()

    def drawn(self) -> list[int]:
        """Every domino drawn so far (the rows, placed and discarded ones), in drawing order."""
        return self._st[K.ST_DECK:K.ST_DECK + self._st[K.ST_DECK_POS]].tolist()

    def unseen(self) -> list[int]:
        """Dominoes not drawn yet, ascending: the rest of the deck and those out of the game."""
        drawn = set(self.drawn())
        return [d for d in TILES if d not in drawn]

    def discards(self, player: int) -> int:
        return int(self._st[K.ST_DISCARDS + player])

    def kingdom(self, player: int) -> Kingdom:
        """A copy of a player's kingdom."""
        return Kingdom._from_arrays(self._bits[player], self._bbox[player],
                                    int(self._st[K.ST_SIZE]))

    def square_array(self, player: int) -> np.ndarray:
        """`kingdom(player).square_array()` without copying the kingdom."""
        return square_array(self._bits, self._bbox, player, self.rules.size)

    def legal_actions(self) -> list[int]:
        """The legal actions of the current player (empty when the game is over)."""
        out = np.empty((1, K.MAX_ACTIONS), dtype=np.int64)
        n = K.legal_actions(self._bits, self._bbox, self._st, self._scratch(), out)
        return out[0, :n].tolist()

    def is_legal(self, action: int) -> bool:
        return bool(K.is_legal(self._bits, self._bbox, self._st, int(action), self._scratch()))

    def _results(self):
        res = np.zeros((self.n_players, K.RES_COLS), dtype=np.int64)
        K.score_game(self._bits, self._bbox, self._st, res)
        return res

    def score(self, player: int) -> Score:
        """A player's score now, bonuses by the rules (Harmony: nothing discarded so far)."""
        r = self._results()[player]
        return Score(*(int(r[c]) for c in (K.RES_TOTAL, K.RES_TERRITORIES, K.RES_BONUS,
                                          K.RES_LARGEST, K.RES_CROWNS)))

    def scores(self) -> list[int]:
        """Every player's total score now."""
        return self._results()[:, K.RES_TOTAL].tolist()

    def ranking(self) -> list[int]:
        """Every player's rank (1 = best) by score, then the rules' tie-breaks;
        equals share a rank."""
        by_territory = bool(self._st[K.ST_FLAGS] & K.FLAG_TIEBREAK_TERRITORY)
        return _ranks(self._results(), "territory" if by_territory else "crowns")

    def describe(self, action: int) -> str:
        """Human-readable `action` in the current position."""
        return describe_action(action, self.domino_to_place)

    @property
    def arrays(self):
        """(bits, bbox, st): the raw state for search bots that call the kernels; do not mutate."""
        return self._bits, self._bbox, self._st


class Game(_Table):
    """A whole game: `Game(rules, seed)`; the seed fixes the deck and the first king order.

    The same rules, seed and actions always give the identical game (`Game.replay`).
    """

    def __init__(self, rules: Rules | None = None, seed: int = 0):
        self.rules = rules if rules is not None else Rules()
        self.seed = as_seed(seed)
        self._bits, self._bbox, self._st = K.new_game_arrays(header_of(self.rules))
        K.init_game(self._bits, self._bbox, self._st, rng_state(self.seed))
        self.history = []

    @classmethod
    def replay(cls, rules: Rules, seed: int, actions) -> "Game":
        """The game reached by playing `actions` from the start; an illegal one raises
        ValueError."""
        game = cls(rules, seed)
        for action in actions:
            game.apply(action)
        return game

    def apply(self, action: int) -> None:
        """Play the current player's action; an illegal action raises ValueError."""
        action = int(action)
        if not self.is_legal(action):
            raise ValueError(f"illegal action {action} ({self._safe_describe(action)}) for seat "
                             f"{self.current_player} in the {self.phase} phase")
        K.apply_action(self._bits, self._bbox, self._st, action)
        self.history.append(action)

    def _safe_describe(self, action):
        try:
            return self.describe(action)
        except (ValueError, KeyError):
            return "not an action"

    def copy(self) -> "Game":
        game = Game.__new__(Game)
        game.rules = self.rules
        game.seed = self.seed
        game._bits = self._bits.copy()
        game._bbox = self._bbox.copy()
        game._st = self._st.copy()
        game.history = list(self.history)
        return game

    def view(self, player: int) -> "GameView":
        """What `player` may know: everything but the order of the undrawn deck."""
        return GameView(self, player)


class GameView(_Table):
    """One player's view of a game: public state only; the undrawn deck is not in it.

    `determinize(rng)` samples a full Game consistent with the view (the unseen dominoes shuffled)
    for search.
    """

    time_left: float | None = None  # seconds this decision may take, set by the harness
                                    # (None: no limit)

    def __init__(self, game: Game, player: int):
        self.rules = copy.copy(game.rules)  # the bot's own: the game's stays as it was
        self.player = player
        self._bits = game._bits.copy()
        self._bbox = game._bbox.copy()
        self._st = game._st.copy()
        pos = int(self._st[K.ST_DECK_POS])
        self._st[K.ST_DECK + pos:] = 0
        self.history = list(game.history)

    @classmethod
    def from_public(cls, rules: Rules, player: int, *, phase: str, round: int, kingdoms,
                    current_row, placed, new_row, first_order, drawn, discards) -> "GameView":
        """`player`'s view at one of its decisions, rebuilt from public facts, as another process
        receives them (kdtourney.external.kdtp): the view equals the one `Game.view(player)` gives,
        but for `history` (empty: moves are not public facts here) and the order of `drawn()`
        (the earlier dominoes ascending, then the current and the new row).

        phase "place" or "claim", round: as the properties of the same names; kingdoms: a Kingdom
        per seat; current_row, new_row: (domino, owner seat or -1), lowest first; placed: per
        domino of current_row, as the `placed` property; first_order: the seats in the order their
        kings claim the first row; drawn: every domino drawn so far, in any order; discards: per
        seat. Facts that do not fit together (a row out of order, the wrong player to act, ...)
        raise ValueError.
        """
        drawn = set(drawn)
        slot = _public_slot(rules, player, phase, round, kingdoms, current_row, placed, new_row,
                            first_order, drawn, discards)
        n, kings, pos = rules.players, rules.players * rules.kings_per_player, len(drawn)
        rows = [d for d, _ in current_row] + [d for d, _ in new_row]
        view = cls.__new__(cls)
        view.rules, view.player, view.history = rules, player, []
        view._bits = np.empty((n, K.kingdom_width(rules.size)), dtype=np.int64)
        view._bbox = np.empty((n, 4), dtype=np.int64)
        for p, kingdom in enumerate(kingdoms):
            view._bits[p], view._bbox[p] = kingdom._bits[0], kingdom._bbox[0]
        st = header_of(rules).tolist() + [0] * (K.ST_LEN - K.ST_CUR_ROW)  # a list: set item by item
        st[K.ST_DECK_POS], st[K.ST_ROUND], st[K.ST_SLOT], st[K.ST_PLAYER] = pos, round, slot, player
        st[K.ST_PHASE] = K.PHASE_PLACE if phase == "place" else K.PHASE_CLAIM
        for offset, owners, row in ((K.ST_CUR_ROW, K.ST_CUR_OWNER, current_row),
                                    (K.ST_NEW_ROW, K.ST_NEW_OWNER, new_row)):
            st[owners:owners + 4] = [-1] * 4
            for j, (domino, owner) in enumerate(row):
                st[offset + j], st[owners + j] = domino, owner
        st[K.ST_FIRST_ORDER:K.ST_FIRST_ORDER + 4] = list(first_order) + [-1] * (4 - kings)
        st[K.ST_DISCARDS:K.ST_DISCARDS + n] = discards
        st[K.ST_DECK:K.ST_DECK + pos] = sorted(drawn.difference(rows)) + rows
        view._st = np.array(st, dtype=np.int64)
        return view

    def determinize(self, rng) -> Game:
        """A Game with this view's public state and the unseen dominoes in random order.

        rng: an int seed or a numpy Generator. The Game's `seed` is -1: it is not a dealt game.
        """
        game = Game.__new__(Game)
        game.rules = self.rules
        game.seed = -1
        game._bits = self._bits.copy()
        game._bbox = self._bbox.copy()
        game._st = self._st.copy()
        K.resample_deck(game._st, rng_state(rng))
        game.history = list(self.history)
        return game


_ALL_DOMINOES = frozenset(TILES)


def rank_scores(scores: list[Score], tiebreak: str = "crowns") -> list[int]:
    """Ranks (1 = best) of players with these scores: total, then largest territory, then (with
    tiebreak "crowns") crowns; players still equal share a rank, so a victory can be shared."""
    res = np.zeros((len(scores), K.RES_COLS), dtype=np.int64)
    for p, s in enumerate(scores):
        res[p, K.RES_TOTAL], res[p, K.RES_LARGEST], res[p, K.RES_CROWNS] = \
            s.total, s.largest_territory, s.crowns
    return _ranks(res, tiebreak)


def _ranks(res, tiebreak):
    ranks = np.zeros(len(res), dtype=np.int64)
    K.rank_players(res, len(res), tiebreak == "territory", ranks)
    return ranks.tolist()


def header_of(rules: Rules) -> np.ndarray:
    """The kernels' state header (ST_PLAYERS .. ST_FLAGS) for `rules`."""
    header = np.zeros(K.ST_CUR_ROW, dtype=np.int64)
    header[K.ST_PLAYERS] = rules.players
    header[K.ST_SIZE] = rules.size
    header[K.ST_ROW_LEN] = rules.row_length
    header[K.ST_KINGS] = rules.players * rules.kings_per_player
    header[K.ST_DECK_LEN] = rules.dominoes_in_play
    header[K.ST_FLAGS] = flags_of(rules)
    return header



def _public_slot(rules, player, phase, round, kingdoms, current_row, placed, new_row, first_order,
                 drawn, discards):
    """The slot of the domino `player` acts on in these public facts; ValueError if they do not fit
    together (see GameView.from_public)."""
    def check(ok, message):
        if not ok:
            raise ValueError(message)

    n, kings = rules.players, rules.players * rules.kings_per_player
    check(0 <= player < n, f"seat {player} is not a seat of a {n}-player game")
    check(phase in ("place", "claim"), f"phase must be 'place' or 'claim', not {phase!r}")
    check(len(kingdoms) == n and all(k.size == rules.size for k in kingdoms),
          f"a {n}-player game needs {n} kingdoms of {rules.size}x{rules.size}")
    check(len(discards) == n and all(d >= 0 for d in discards), "one discard count per seat")
    check(sorted(first_order) == sorted(s // rules.kings_per_player for s in range(kings)),
          f"first_order {list(first_order)} is not an order of the {kings} kings")
    check(len(placed) == len(current_row), "one placed flag per domino of the current row")
    rows = [d for d, _ in current_row] + [d for d, _ in new_row]
    check(drawn <= _ALL_DOMINOES and drawn.issuperset(rows),
          "drawn must hold the dominoes of both rows, numbers 1..48")
    for row in (current_row, new_row):
        check(len(row) <= 4 and [d for d, _ in row] == sorted({d for d, _ in row})
              and all(-1 <= o < n for _, o in row), f"a row is up to 4 distinct dominoes, "
              f"lowest first, each with an owner seat or -1: {list(row)}")
    owned = [j for j, (_, o) in enumerate(current_row) if o >= 0]
    done = [j for j in owned if placed[j]]
    check(done == owned[:len(done)] and not any(placed[j] for j, (_, o) in enumerate(current_row)
                                                if o < 0),
          "only claimed dominoes are placed, lowest first")
    claims = sum(o >= 0 for _, o in new_row)
    if round == 0:
        check(phase == "claim" and not current_row and claims < kings,
              "round 0 has no current row and only claims")
        slot, acting = claims, first_order[claims]
    elif phase == "place":
        check(len(done) < len(owned) and claims == (len(done) if new_row else 0),
              "a place decision needs a domino left to place, every king before it having "
              "claimed")
        slot = owned[len(done)]
    else:
        check(bool(done) and bool(new_row) and claims == len(done) - 1,
              "a claim decision follows a placement and needs a new row")
        slot = done[-1]
    if round > 0:
        acting = current_row[slot][1]
    check(acting == player, f"seat {acting} is to act, not seat {player}")
    pos = len(drawn)
    rows_drawn = round + (1 if new_row else 0)
    check(1 <= rows_drawn <= rules.rounds and pos == rows_drawn * rules.row_length,
          f"{pos} dominoes drawn, but round {round} has drawn {rows_drawn} rows of "
          f"{rules.row_length}")
    return slot


__all__ = ["Game", "GameView", "DISCARD", "CLAIM_BASE",
           "claim_action", "describe_action", "rank_scores",
           "encode_placement", "decode_placement", "header_of", "rng_state"]
