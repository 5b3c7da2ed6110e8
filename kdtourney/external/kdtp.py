"""KDTP/1, the line protocol between kdtourney and a bot in its own process (docs/protocol.md).

One JSON object per line, each with a "type". This module owns the encoding and is used by both
sides: the harness (`kdtourney.external`) writes `hello`, `game`, `act`, `result` and `quit`
and reads the bot's answers; the bot side (`kdtourney.registry.serve`) rebuilds, from an `act`, the
GameView the bot would get in-process (`view_of`), and writes its answers.

Squares are [row, col] from the castle, rows downwards; terrains W F L G S M, C the castle; a
domino is 1..48. Actions: {"place": [[r1, c1], [r2, c2]]}, {"discard": true}, {"claim": n}.

Beyond KDTP/1, an `act`'s state carries "first_order" (the seats in their kings' order in round
0: the bot side rebuilds that order from it, else assumes seat order), and an `action` may carry
a "note" (the bot's evaluation, its line; `note_of`): both optional for a bot.
"""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np

from kdtourney.bots.clock import TimeControl
from kdtourney.engine import CLAIM_BASE, DISCARD, TILES, GameView, Kingdom, Rules, decode_placement
from kdtourney.engine import kernels as K
from kdtourney.engine.kernel_base import kernel
from kdtourney.engine.kernels import list_squares
from kdtourney.engine.tiles import CASTLE, TERRAIN_LETTERS
from kdtourney.errors import BotFailure

PROTOCOL = "kdtp"
VERSION = 1
RULE_KEYS = ("variant", "three_player", "harmony", "middle_kingdom", "tiebreak", "first_picks")
LETTERS = {**TERRAIN_LETTERS, CASTLE: "C"}
TERRAIN_OF = {letter: terrain for terrain, letter in LETTERS.items()}
MAX_LINE = 1 << 20  # bytes: a longer line is a protocol error (nothing a bot says needs more)
NOTE_LIMIT = 200  # characters of a decision's note kept with its move
_COMPACT = (",", ":")


class ProtocolError(BotFailure, ValueError):
    """A line or message that breaks KDTP/1 (a ValueError too); the message is one line, meant
    for the bot's author."""


# --- lines -------------------------------------------------------------------------------------

def encode(message: dict) -> bytes:
    """One message as a line: compact JSON, UTF-8, '\\n'-terminated."""
    return json.dumps(message, separators=_COMPACT).encode() + b"\n"


def decode(line: bytes | str) -> dict:
    """The message of one line (without or with its '\\n'); ProtocolError when it is not a JSON
    object with a string "type"."""
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    try:
        message = json.loads(text, parse_constant=_not_json)
    except ValueError:
        raise ProtocolError(f"not JSON: {_clip(text)}") from None
    except RecursionError:  # nesting deeper than Python's parser goes ("[[[[...")
        raise ProtocolError(f"JSON nested too deeply: {_clip(text)}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError(f"not a KDTP message (a JSON object with a \"type\"): {_clip(text)}")
    if "\\u" in text:  # an escape may write half a UTF-16 pair, which no store or page can hold
        try:
            json.dumps(message, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ProtocolError(f"a string that is not Unicode text (a lone surrogate "
                                f"escape): {_clip(text)}") from None
    return message


def _not_json(constant: str):
    """NaN and Infinity, which Python's parser takes and JSON has not."""
    raise ValueError(constant)


def _clip(text: str, width: int = 80) -> str:
    text = text.strip()
    return repr(text if len(text) <= width else text[:width] + "...")


# --- the harness's messages --------------------------------------------------------------------

def hello() -> dict:
    return {"type": "hello", "protocol": PROTOCOL, "version": VERSION}


@lru_cache(maxsize=1)
def dominoes() -> list:
    """The 48 dominoes as [number, terrain a, crowns a, terrain b, crowns b]."""
    return [[n, LETTERS[d.a.terrain], d.a.crowns, LETTERS[d.b.terrain], d.b.crowns]
            for n, d in TILES.items()]


def game_message(game: int, seat: int, rules: Rules, seed: int, options: dict,
                 time_control: TimeControl | None) -> dict:
    """The `game` message before each game (each deal of a dynasty); `time`: the time control,
    every field, null where it does not apply (kdtourney.bots.clock)."""
    return {"type": "game", "game": game, "seat": seat, "players": rules.players,
            "kings": rules.kings_per_player, "size": rules.size,
            "rules": {k: getattr(rules, k) for k in RULE_KEYS}, "dominoes": dominoes(),
            "seed": seed, "options": dict(options),
            "time": (time_control or TimeControl()).wire()}


def result_message(scores, ranks) -> dict:
    return {"type": "result", "scores": [int(s) for s in scores], "ranks": [int(r) for r in ranks]}


def quit_message() -> dict:
    return {"type": "quit"}


def act_line(view: GameView, legal: list[int], time_left_s: float | None) -> bytes:
    """The `act` line of the view's decision (`legal`: the view's legal actions): the state holds
    what the acting player may know. Built for every decision of every bot in its own process, so
    it reads the view's raw state (`GameView.arrays`) once, has a kernel write the kingdoms, and
    takes the text of the unseen dominoes and of the actions from caches.
    """
    rules = view.rules
    bits, bbox, st = view.arrays
    s = st.tolist()
    pos, round_, phase = s[K.ST_DECK_POS], s[K.ST_ROUND], s[K.ST_PHASE]
    kingdoms = _kingdoms_text(bits, bbox, s[K.ST_SIZE])
    # the row's dominoes come first (0: none); zip ends with the last one's `placed` flag
    current = ",".join([f'{{"domino":{d},"seat":{_SEAT[o]},"placed":{_BOOL[done]}}}'
                        for d, o, done in zip(s[K.ST_CUR_ROW:K.ST_CUR_ROW + 4],
                                              s[K.ST_CUR_OWNER:K.ST_CUR_OWNER + 4], view.placed)])
    new = ",".join([f'{{"domino":{d},"seat":{_SEAT[o]}}}' for d, o
                    in zip(s[K.ST_NEW_ROW:K.ST_NEW_ROW + 4], s[K.ST_NEW_OWNER:K.ST_NEW_OWNER + 4])
                    if d])
    to_place = view.domino_to_place
    kings = rules.players * rules.kings_per_player
    state = (f'{{"kingdoms":[{kingdoms}],"scores":[{_ints(view.scores())}],'
             f'"current_row":[{current}],"next_row":[{new}],'
             f'"to_place":{"null" if to_place is None else to_place},'
             f'"deck_left":{rules.dominoes_in_play - pos},'
             f'"unseen":[{_unseen_text(tuple(s[K.ST_DECK:K.ST_DECK + pos]))}],'
             f'"first_order":[{_ints(s[K.ST_FIRST_ORDER:K.ST_FIRST_ORDER + kings])}]}}')
    return (f'{{"type":"act","seat":{view.player},"phase":"{_PHASES[phase]}","round":{round_},'
            f'"state":{state},"legal":[{",".join(map(action_text, legal))}],'
            f'"time_left_s":{"null" if time_left_s is None else json.dumps(time_left_s)}}}\n'
            ).encode()


_BOOL = {False: "false", True: "true"}
_SEAT = {-1: "null", 0: "0", 1: "1", 2: "2", 3: "3"}  # an owner in the state: -1 is nobody
_PHASES = {K.PHASE_PLACE: "place", K.PHASE_CLAIM: "claim"}
def _kingdoms_text(bits, bbox, size) -> str:
    """'[[r,c,"T",k],...],...' of every player's kingdom (their part of `GameView.arrays`; size:
    the kingdoms' width, 5 or 7)."""
    out = np.empty(len(bits) * _KINGDOM_BYTES, dtype=np.uint8)
    return out[:_write_kingdoms(bits, bbox, size, _LETTER_CODES, np.empty((49, 4), np.int64),
                                out)].tobytes().decode("ascii")


def warm_up() -> None:
    """Load (the first time: compile) the kernel of `act_line` and build `answer_lines` now, not
    in a bot's timed decision."""
    _kingdoms_text(np.zeros((1, K.kingdom_width(5)), np.int64), np.zeros((1, 4), np.int64), 5)
    answer_lines()


_KINGDOM_BYTES = 2 + 49 * len('[-6,-6,"C",3],')  # at most: a 7x7 kingdom and the comma after it
_LETTER_CODES = np.zeros(max(LETTERS) + 1, dtype=np.uint8)  # terrain -> the code of its letter
_LETTER_CODES[list(LETTERS)] = [ord(letter) for letter in LETTERS.values()]


@kernel(nrt=True)
def _write_kingdoms(bits, bbox, size, letters, squares, out):
    """Write the kingdoms' text (see _kingdoms_text) to `out` (uint8) and return its length. The
    kernel writes text: as Python, this took most of an act line's time."""
    n = 0
    for p in range(bits.shape[0]):
        if p > 0:
            out[n] = 44  # ,
            n += 1
        out[n] = 91  # [
        n += 1
        for i in range(list_squares(bits, bbox, p, size, squares)):
            if i > 0:
                out[n] = 44
                n += 1
            out[n] = 91
            n = _write_int(out, n + 1, squares[i, 0])
            out[n] = 44
            n = _write_int(out, n + 1, squares[i, 1])
            out[n], out[n + 1], out[n + 2], out[n + 3] = 44, 34, letters[squares[i, 2]], 34  # ,"T"
            out[n + 4] = 44
            n = _write_int(out, n + 5, squares[i, 3])
            out[n] = 93  # ]
            n += 1
        out[n] = 93
        n += 1
    return n


@kernel(nrt=True)
def _write_int(out, n, value):
    """Write `value` (-99..99) in decimal at out[n]; return the position after it."""
    if value < 0:
        out[n] = 45  # -
        n += 1
        value = -value
    if value >= 10:
        out[n] = 48 + value // 10
        n += 1
    out[n] = 48 + value % 10
    return n + 1


@lru_cache(maxsize=4096)  # the drawn dominoes change once a round
def _unseen_text(drawn: tuple) -> str:
    """The dominoes not in `drawn`, ascending, as JSON numbers without the brackets."""
    seen = set(drawn)
    return _ints(d for d in TILES if d not in seen)


def _ints(values) -> str:
    return ",".join(map(str, values))


# --- actions -----------------------------------------------------------------------------------

def action_to_wire(action: int):
    """The KDTP form of an engine action; ValueError for an int that is no action."""
    action = int(action)
    if action == DISCARD:
        return {"discard": True}
    if CLAIM_BASE < action <= CLAIM_BASE + 48:
        return {"claim": action - CLAIM_BASE}
    a, b = decode_placement(action)
    return {"place": [list(a), list(b)]}


def canonical(obj) -> str:
    """The text an action is compared by: compact JSON with sorted keys, so that spacing and key
    order do not matter but values must be exactly those of `legal` (1 is not true, 5.0 is not
    5)."""
    return json.dumps(obj, separators=_COMPACT, sort_keys=True)


_TEXTS: dict[int, str] = {}


def action_text(action: int) -> str:
    """The canonical KDTP text of an engine action (cached: `act` lines list many)."""
    text = _TEXTS.get(action)
    if text is None:
        text = _TEXTS[action] = canonical(action_to_wire(action))
    return text


@lru_cache(maxsize=1)
def answer_lines() -> dict:
    """{the line (without its '\\n') of an answer written compactly, as `kdtourney serve` writes
    it: its action} for every engine action: the harness takes such a line without parsing it."""
    actions = [*range(K.N_PLACE_ACTIONS), DISCARD, *range(CLAIM_BASE + 1, CLAIM_BASE + 49)]
    return {encode(action_message(a))[:-1]: a for a in actions}


# --- the bot side ------------------------------------------------------------------------------

def rules_of(game: dict) -> Rules:
    """The Rules of a `game` message; ProtocolError when they are not rules kdtourney knows or the
    dominoes are not its dominoes."""
    try:
        given = game["rules"]
        rules = Rules(players=game["players"], **{k: given[k] for k in RULE_KEYS if k in given})
    except (KeyError, TypeError, ValueError) as exc:
        raise ProtocolError(f"a game message with rules kdtourney cannot play: {exc}") from None
    if game.get("kings", rules.kings_per_player) != rules.kings_per_player \
            or game.get("size", rules.size) != rules.size:
        raise ProtocolError(f"kings {game.get('kings')} and size {game.get('size')} do not fit "
                            f"the rules {rules}")
    if "dominoes" in game and game["dominoes"] != dominoes():
        raise ProtocolError("the game's dominoes are not the 48 dominoes of kdtourney's tile list")
    return rules


def view_of(act: dict, rules: Rules) -> GameView:
    """The GameView of an `act` message under `rules`: equal to the view an in-process bot gets
    (see `GameView.from_public`), `time_left` from the act's `time_left_s`; ProtocolError for a
    state that does not fit the rules."""
    try:
        state = act["state"]
        seat, phase, round_ = act["seat"], act["phase"], act["round"]
        n, per_player = rules.players, rules.kings_per_player
        kingdoms = [_kingdom_of(p, squares, rules.size)
                    for p, squares in enumerate(state["kingdoms"])]
        sizes = [len(squares) for squares in state["kingdoms"]]
        current = [(d["domino"], _owner(d["seat"])) for d in state["current_row"]]
        placed = [bool(d["placed"]) for d in state["current_row"]]
        new = [(d["domino"], _owner(d["seat"])) for d in state["next_row"]]
        # every king has placed (or discarded) one domino per earlier round: the rest went away
        handled = [per_player * max(0, round_ - 1) + sum(1 for (_, o), done in zip(current, placed)
                                                         if done and o == p) for p in range(n)]
        discards = [handled[p] - (sizes[p] - 1) // 2 for p in range(n)]
        unseen = set(state["unseen"])
        first_order = state.get("first_order") or _first_order_guess(new, seat, round_, rules)
        view = GameView.from_public(
            rules, seat, phase=phase, round=round_, kingdoms=kingdoms, current_row=current,
            placed=placed, new_row=new, first_order=first_order,
            drawn=[d for d in TILES if d not in unseen], discards=discards)
        left = act.get("time_left_s")
        view.time_left = None if left is None else float(left)
        return view
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ProtocolError(f"an act whose state kdtourney cannot read: {type(exc).__name__}: "
                            f"{exc}") from None


_LAST: dict = {}  # seat -> (squares, Kingdom): most kingdoms do not change between decisions


def _kingdom_of(seat: int, squares: list, size: int) -> Kingdom:
    """The Kingdom of a seat's squares in an act (the same object as last time if they are the
    same: GameView.from_public copies, never changes it)."""
    last = _LAST.get(seat)
    if last is not None and last[0] == squares and last[1].size == size:
        return last[1]
    kingdom = Kingdom.from_squares([(r, c, TERRAIN_OF[letter], k) for r, c, letter, k in squares],
                                   size)
    _LAST[seat] = (squares, kingdom)
    return kingdom


def _owner(seat) -> int:
    return -1 if seat is None else seat


def _first_order_guess(new_row, seat, round_, rules) -> list[int]:
    """Without "first_order": the kings that claimed, the acting one, then the others by seat."""
    kings = [p for p in range(rules.players) for _ in range(rules.kings_per_player)]
    order = [o for _, o in new_row if o >= 0] if round_ == 0 else []
    order += [seat] if round_ == 0 else []
    for p in order:
        kings.remove(p)
    return order + kings


def note_of(message: dict) -> str | None:
    """The optional note of a bot's `action` message, cut to NOTE_LIMIT characters, on one line;
    None if it sent none, or something other than text (a note never makes a fault)."""
    note = message.get("note")
    if not isinstance(note, str) or not note.strip():
        return None
    return " ".join(note.split())[:NOTE_LIMIT]


def action_message(action, note: str | None = None) -> dict:
    """The bot's answer: an engine action in KDTP form, with its `note` if it has one. Anything
    else (a bool, a float, an int that is no action, ...) is passed on as it is, for the harness
    to call it what it is: not one of the legal actions."""
    wire = action if isinstance(action, (int, float, str, bool, type(None))) else repr(action)
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        try:
            wire = action_to_wire(int(action))
        except ValueError:
            wire = int(action)
    return {"type": "action", "action": wire, **({"note": note} if note else {})}


__all__ = ["PROTOCOL", "VERSION", "MAX_LINE", "ProtocolError", "encode", "decode", "hello",
           "dominoes", "game_message", "result_message", "quit_message", "act_line", "warm_up",
           "action_to_wire", "action_text", "answer_lines", "canonical", "rules_of", "view_of",
           "action_message", "note_of", "NOTE_LIMIT"]
