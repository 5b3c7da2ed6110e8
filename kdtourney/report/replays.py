"""Every stored game, move by move, for the pages' game viewer (report.js): the engine replays
each game (`Game.apply` checks every stored move) and writes down what it reached at each step,
small enough that a report of 10,000 games stays one self-contained page. The page computes
nothing the rules decide, it only adds up what the engine reported (tests/report/test_watch.py
holds it against the engine, step by step).

    trace(row, rules, finals=False) -> Trace   a stored game as the viewer's strings, one a deal
    constants()                                what the viewer needs besides the games
"""

from __future__ import annotations

import dataclasses

import numpy as np

from kdtourney.engine import DISCARD, Game, Rules, decode_placement
from kdtourney.engine import kernels as K
from kdtourney.engine.tiles import TERRAIN_LETTERS, TERRAIN_NAMES, TILES
from kdtourney.report import svg
from kdtourney.store.deals import stored_deals

DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
PLACE, DISCARDED, CLAIM, ROW = range(4)  # record kinds


@dataclasses.dataclass
class Trace:
    """A game as the viewer replays it: `deals`, one string per deal (`trace`);
    `origins`: per deal, per seat, (top row, left column) of the kingdom's frame at the end; the
    end of each deal when asked (`finals`: per deal, per seat, {(row, col): (terrain, crowns)};
    `scores`: per deal, every seat's score)."""

    deals: list
    origins: list
    finals: list | None = None
    scores: list | None = None


def trace(row, rules: Rules, finals: bool = False) -> Trace:
    """The viewer's trace of the stored game `row` (`stored_deals`) under `rules`; with `finals`,
    the end of each deal too. ValueError for a move the engine refuses.

    A deal is one string of `DIGITS` (base 64; a number takes one digit, or two where it may
    reach 64): a header, then one record per action. The header: every seat's score at the
    start (two digits each: the bonuses count from the start), the number of kings and the seats
    in the order their kings claim the first row, the number of dominoes in the first row and
    their numbers, lowest first. A record opens with one digit, 4 x kind + the seat that acted:
    PLACE: the domino, the place action (two digits: `constants()["places"]` gives its squares),
    the seat's score after it (two); DISCARDED: the domino, the score after it (two); CLAIM: the
    domino claimed in the new row; ROW (seat 0): a new round started with that action, the
    previous new row now being placed: the number of dominoes of the new row and their numbers
    (none in the last round)."""
    out = Trace([], [], [] if finals else None, [] if finals else None)
    n, size = rules.players, rules.size
    res = np.zeros((n, K.RES_COLS), dtype=np.int64)
    for seed, actions in stored_deals(row):
        game = Game(rules, seed)
        bits, bbox, st = game.arrays
        K.score_totals(bits, bbox, st, res)
        digits = [_two(int(s)) for s in res[:, K.RES_TOTAL]]
        order = game.first_order
        digits += [DIGITS[len(order)], *(DIGITS[s] for s in order), _row(game)]
        for action in actions:
            seat, domino, round_ = int(st[K.ST_PLAYER]), game.domino_to_place, game.round
            game.apply(action)
            if domino is None:
                digits.append(DIGITS[4 * CLAIM + seat] + DIGITS[action - K.CLAIM_BASE])
            else:
                K.score_totals(bits, bbox, st, res)
                score = _two(int(res[seat, K.RES_TOTAL]))
                if action == DISCARD:
                    digits.append(DIGITS[4 * DISCARDED + seat] + DIGITS[domino] + score)
                else:
                    digits.append(DIGITS[4 * PLACE + seat] + DIGITS[domino] + _two(action) + score)
            if game.round != round_:
                digits.append(DIGITS[4 * ROW] + _row(game))
        out.deals.append("".join(digits))
        out.origins.append([_origin(game, p, size) for p in range(n)])
        if out.finals is not None and out.scores is not None:  # lists when `finals`
            out.finals.append([game.kingdom(p).squares() for p in range(n)])
            out.scores.append(game.scores())
    return out


def _two(number: int) -> str:
    if not 0 <= number < 64 * 64:
        raise ValueError(f"{number} does not fit the viewer's two digits")
    return DIGITS[number >> 6] + DIGITS[number & 63]


def _row(game) -> str:
    row = [d for d, _ in game.new_row]
    return DIGITS[len(row)] + "".join(DIGITS[d] for d in row)


def _origin(game, p: int, size: int) -> list:
    """The frame of kingdom p at the end of a deal (`svg.frame_origin`), every step's frame."""
    top, bottom, left, right = game.kingdom(p).bounds()
    return list(svg.frame_origin([(top, left), (bottom, right)], size))


def constants() -> dict:
    """What the viewer needs besides the games: the digits, the squares of every place action
    (ra, ca, rb, cb: half a, then half b), the dominoes' halves (terrain, crowns, terrain,
    crowns) and the terrains' letters and names."""
    places = []
    for action in range(K.N_PLACE_ACTIONS):
        a, b = decode_placement(action)
        places += [*a, *b]
    return {"digits": DIGITS, "places": places,
            "tiles": {n: [d.a.terrain, d.a.crowns, d.b.terrain, d.b.crowns]
                      for n, d in TILES.items()},
            "letters": {str(k): v for k, v in TERRAIN_LETTERS.items()},
            "terrains": {str(k): v for k, v in TERRAIN_NAMES.items()}}


__all__ = ["Trace", "trace", "constants", "DIGITS"]
