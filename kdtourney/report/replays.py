"""Every stored game, move by move, for the pages' game viewer (report.js): the engine replays
each game (`Game.apply` checks every stored move) and writes down what it reached at each step,
small enough that a report of 10,000 games stays one self-contained page. The page computes
nothing the rules decide, it only adds up what the engine reported (tests/report/test_watch.py
holds it against the engine, step by step).

    trace(row, rules, finals=False) -> Trace   a stored game as the viewer's strings, one a deal
    stored_deals(row)                          [(deal seed, actions)] of a stored game row
    fault_calls(row, rules, faults)            where each fault fell: the call, named as the bot
                                               counts it, and the first move played for it
    rules_for(rules, n_players)                the Rules of a stored tournament's table
    constants()                                what the viewer needs besides the games
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from kdtourney.engine import DISCARD, Game, Rules, decode_placement
from kdtourney.engine import kernels as K
from kdtourney.engine.tiles import TERRAIN_LETTERS, TERRAIN_NAMES, TILES
from kdtourney.report import svg

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


def rules_for(rules: dict, n_players: int) -> Rules:
    """The Rules of a stored tournament's `rules` dict for a table of `n_players`."""
    fields = {f.name for f in dataclasses.fields(Rules)}
    return Rules(**{k: v for k, v in dict(rules, players=int(n_players)).items() if k in fields})


def stored_deals(row) -> list:
    """[(deal seed, actions)] of a stored game row (a mapping with `moves`, `deal_seeds`, `seed`):
    one deal, or a dynasty's three. ValueError where they do not go together."""
    moves = json.loads(row["moves"]) if isinstance(row["moves"], str) else row["moves"]
    seeds = row["deal_seeds"] if "deal_seeds" in row else None
    seeds = json.loads(seeds) if isinstance(seeds, str) else seeds
    if not seeds:
        seeds = [int(row["seed"])]
    deals = moves if moves and isinstance(moves[0], list) else [moves]
    if len(seeds) > 1 and moves == []:  # a failed dynasty stored no deal at all
        deals = [[] for _ in seeds]
    if len(seeds) != len(deals):
        raise ValueError(f"{len(deals)} move lists for {len(seeds)} deal seeds")
    return [(int(s), [int(a) for a in d]) for s, d in zip(seeds, deals)]


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


def fault_calls(row, rules: Rules, faults) -> list:
    """Where each fault of the stored game `row` fell (`faults`: mappings with seat, call, kind,
    message). Per fault with a seat and a call: (seat, call named as the bot counts its calls:
    'construction', 'setup' ('setup of deal 2' in a dynasty) or 'act N', N from 1, (deal, move):
    the first move of the seat's that the harness played for it, the first legal one (None if
    it had no move left). Every later move of that seat is the harness's too."""
    deals = stored_deals(row)
    out = []
    for f in faults:
        seat, call = f.get("seat"), f.get("call")
        if seat is None or call is None or call != call or int(seat) < 0:  # NaN: unknown
            continue
        seat, call = int(seat), int(call)
        count, acts, first = 0, 0, None
        named = "construction" if call == 0 else None
        for d, (seed, actions) in enumerate(deals):
            if named is None:
                count += 1
                if count == call:
                    named = "setup" + (f" of deal {d + 1}" if len(deals) > 1 else "")
            game = Game(rules, seed)
            for i, action in enumerate(actions):
                if game.current_player == seat:
                    if named is None:
                        count, acts = count + 1, acts + 1
                        named = f"act {acts}" if count == call else None
                    if named is not None and first is None:
                        first = (d, i)
                game.apply(action)
        out.append((seat, named or f"call {call}", first))
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


__all__ = ["Trace", "trace", "stored_deals", "fault_calls", "rules_for", "constants", "DIGITS"]
