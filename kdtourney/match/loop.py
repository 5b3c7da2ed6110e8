"""The game loop: bots play one game (or one dynasty of three deals), with the fairness rules.

    play_match(rules, deal_seeds, bot_seeds, factories, clock=, margin=, forced=, monitor=,
               watch=) -> MatchResult      one game: a fresh bot per seat, every call timed and
                                           checked, a bot's failure its forfeit, never the game's
    MatchResult, SeatResult, Fault        what a game gives: moves, per-seat results, forfeits
    rank_among(keys, faulted)             ranks with the faulted players last
    exception_message(exc)                a bot's exception as one line
    FAULT_KINDS: EXCEPTION, ILLEGAL, TIMEOUT, TIME, CRASH, PROTOCOL, MEMORY, OUTPUT

Short and separate from scheduling (as OpenSpiel's `evaluate_bots`). The contract with the bots,
the faults and what a forfeit does, and dynasties: docs/clocks.md.
"""

from __future__ import annotations

import copy
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kdtourney import interrupts
from kdtourney.bots.clock import TIME, TIMEOUT, SeatClock, TimeControl
from kdtourney.engine import Game, Rules, Score, rank_scores
from kdtourney.external import (
    BotExited,
    BotFailure,
    BotOutOfMemory,
    BotOutputFlood,
    BotProtocolError,
    BotTimeout,
    ExternalBot,
    IllegalAnswer,
)
from kdtourney.external.kdtp import NOTE_LIMIT

EXCEPTION, ILLEGAL, CRASH, PROTOCOL = "exception", "illegal", "crash", "protocol"
MEMORY, OUTPUT = "memory", "output"  # a sandbox's limits (kdtourney.external.sandbox)
FAULT_KINDS = (EXCEPTION, ILLEGAL, TIMEOUT, TIME, CRASH, PROTOCOL, MEMORY, OUTPUT)
_KIND_OF = {BotTimeout: TIMEOUT, BotExited: CRASH, BotProtocolError: PROTOCOL,
            IllegalAnswer: ILLEGAL, BotOutOfMemory: MEMORY, BotOutputFlood: OUTPUT}
_MESSAGE_LIMIT = 500
_STDERR_LIMIT = 2000


@dataclass
class SeatResult:
    """One player's result in one game (the store's `results` row, without game and entrant)."""

    seat: int
    score: int = 0
    rank: int = 0
    win_share: float = 0.0
    margin: int = 0
    largest_territory: int = 0
    crowns: int = 0
    discards: int = 0
    fault: bool = False
    time_total: float = 0.0
    time_max: float = 0.0
    decisions: int = 0


@dataclass
class Fault:
    """A forfeit: seat, kind (one of FAULT_KINDS), one-line message, the index of the bot call
    at fault (0 = construction, then setup and act calls in order), and for a bot in its own
    process its last stderr lines."""

    seat: int
    kind: str
    message: str
    call: int
    stderr: str | None = None


@dataclass
class MatchResult:
    """moves: the actions of the game (for a dynasty, a list of three such lists); duration in
    seconds; seats: SeatResult per seat; faults: at most one per seat; notes: [deal, move, seat,
    text] of the decisions a bot attached a note to (`decision_note`; KDTP's `note`)."""

    moves: list
    duration: float
    seats: list
    faults: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def status(self) -> str:
        return "fault" if self.faults else "ok"

    @property
    def error(self) -> str | None:
        """A one-line summary of the faults, None without."""
        if not self.faults:
            return None
        return "; ".join(f"seat {f.seat + 1} {f.kind}: {f.message}"  # seats from 1, as users read
                         for f in self.faults)[:_MESSAGE_LIMIT]


def exception_message(exc: BaseException) -> str:
    """'ValueError: bad thing (bots/mybot.py:12)': type, message and the innermost frame, one line.
    Whatever the exception holds: a message that cannot be made, or that is not Unicode text (a
    lone surrogate, which the store could not write), is shown as best it can be."""
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - a bot's __str__ may raise anything
        message = "(its message could not be made)"
    text = " ".join(f"{type(exc).__name__}: {message}".split())
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        text += f" ({frames[-1].filename}:{frames[-1].lineno})"
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text[:_MESSAGE_LIMIT]


def _is_int(value) -> bool:
    return (isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
            and -2**62 < int(value) < 2**62)


def rank_among(keys: list, faulted: list[bool]) -> list[int]:
    """Ranks (1 = best) from sortable keys (higher is better): the players without a fault are
    ranked among themselves, equal keys sharing a rank; faulted players get the last rank (n)."""
    n = len(keys)
    ranks = []
    for i in range(n):
        if faulted[i]:
            ranks.append(n)
        else:
            ranks.append(1 + sum(1 for j in range(n) if not faulted[j] and keys[j] > keys[i]))
    return ranks


class _Match:
    """One game's seats: their bots, how many calls each was asked (construction, setup and act
    count; finish and close do not), their faults (the first stands) and results, and the faults
    still to force (`forced`: {seat: (call, kind, message)})."""

    def __init__(self, n: int, forced: dict | None, monitor: Callable | None):
        self.n, self.monitor = n, monitor
        self.forced = dict(forced or {})
        self.forced_seats: set = set()  # their forced fault stands for a call that killed or
        self.bots: list = [None] * n    # hung the worker
        self.calls = [0] * n
        self.faults: dict[int, Fault] = {}
        self.seats = [SeatResult(seat=s) for s in range(n)]
        self.notes: list = []  # [deal, move, seat, text]

    def take_note(self, seat: int, deal: int, move: int) -> None:
        """Keep the note the bot of `seat` attached to its decision (its attribute `decision_note`,
        set in act; an ExternalBot's: KDTP's), and clear it: the next decision has its own."""
        bot = self.bots[seat]
        try:
            note = getattr(bot, "decision_note", None)
            if note is not None:
                bot.decision_note = None
        except Exception:  # noqa: BLE001 - a bot's broken attribute is no note, never a fault
            return
        if isinstance(note, str) and note.strip():
            self.notes.append([deal, move, seat, " ".join(note.split())[:NOTE_LIMIT]])

    def fault(self, seat, kind, message, at, stderr=None) -> None:
        if seat in self.faults:  # the first fault stands (close() still runs after one)
            return
        self.faults[seat] = Fault(seat, kind, message[:_MESSAGE_LIMIT], at,
                                  stderr[-_STDERR_LIMIT:] if stderr else None)

    def call(self, seat, fn, *args, counted=True, timeout_kind=TIMEOUT, limit=None) -> tuple:
        """Call into the bot of `seat`: ("ok", value), ("raised", None) or ("forced", None).
        `finish` and `close` are not counted: call indexes stay those of construction, setup and
        act. timeout_kind: the fault of a bot in its own process cut at its deadline; limit: for
        the monitor."""
        index = self.calls[seat]
        if seat in self.forced and self.forced[seat][0] == index:
            _, kind, message = self.forced.pop(seat)
            self.fault(seat, kind, message, index)
            self.forced_seats.add(seat)
            return "forced", None
        self.calls[seat] += counted
        if self.monitor is not None:
            self.monitor(seat, index, limit)
        try:
            return "ok", fn(*args)
        except BotFailure as exc:  # a bot in its own process, which says how it failed
            kind = _KIND_OF[type(exc)]
            self.fault(seat, timeout_kind if kind == TIMEOUT else kind, str(exc), index,
                       exc.stderr)
            return "raised", None
        except KeyboardInterrupt as exc:
            if interrupts.from_ctrl_c():
                raise
            self.fault(seat, EXCEPTION, exception_message(exc), index)
            return "raised", None
        except (Exception, SystemExit) as exc:  # a bot's failure is its forfeit, not ours
            self.fault(seat, EXCEPTION, exception_message(exc), index)
            return "raised", None

    def decide(self, game: Game, player: int, seat_clock: SeatClock, margin: float) -> bool:
        """One decision of `player`'s bot, timed and checked against its clock; True when its
        action was applied (else the caller plays the first legal action for it)."""
        bot = self.bots[player]
        view = game.view(player)
        view.time_left, timeout_kind = seat_clock.allowed()
        # a bot in its own process is cut at its deadline: only one here can hang
        limit = None if getattr(bot, "out_of_process", False) else seat_clock.deadline()
        t0 = time.perf_counter()
        status, choice = self.call(player, bot.act, view, timeout_kind=timeout_kind, limit=limit)
        elapsed = time.perf_counter() - t0
        if isinstance(bot, ExternalBot) and bot.decision_s is not None:
            elapsed = bot.decision_s  # its exchange alone: no freeze, no thaw
        if status != "forced":
            result = self.seats[player]
            result.decisions += 1
            result.time_total += elapsed
            result.time_max = max(result.time_max, elapsed)
        if status != "ok":
            return False
        over, left = seat_clock.over(elapsed), seat_clock.margin
        seat_clock.charge(elapsed)
        if over is not None:
            what = "what was left of its bank" if over == TIME else "the limit"
            self.fault(player, over, f"a decision took {elapsed:.3f} s; {what}: "
                                     f"{view.time_left:.3f} s + {left:.3f} s left of its "
                                     f"{margin:g} s margin", self.calls[player] - 1)
            return False
        if _is_int(choice):
            try:
                game.apply(int(choice))  # checks legality, changes nothing if not
            except ValueError:
                pass
            else:
                return True
        self.fault(player, ILLEGAL, f"returned {choice!r:.80}, not a legal action in the "
                                    f"{game.phase} phase of round {game.round}",
                   self.calls[player] - 1)
        return False

    def close(self) -> None:
        """close() every bot, through call(), not counted: the watchdog then knows whose close
        kills or hangs the worker, and the replay forces the fault at its finish (the same index)
        or here. A seat forced to forfeit is not closed again unless its close is the harness's
        own (which gives its process back to the pool): its code killed or hung the worker once
        already."""
        for seat, bot in enumerate(self.bots):
            if bot is None or (seat in self.forced_seats
                               and type(bot).close is not ExternalBot.close):
                continue
            faulted_before = seat in self.faults  # then its first fault stands
            if self.call(seat, bot.close, counted=False)[0] == "raised" and not faulted_before:
                del self.faults[seat]  # the game is decided: a close that fails changes nothing


def play_match(rules: Rules, deal_seeds: Sequence[int], bot_seeds: Sequence[Sequence[int]],
               factories: Sequence[Callable], *, clock: TimeControl | None = None,
               margin: float = 0.0, forced: dict | None = None,
               monitor: Callable | None = None, watch: Callable | None = None) -> MatchResult:
    """Play one game (one deal seed) or a dynasty (three) and return its result.

    factories: per seat, a callable returning a new Bot. bot_seeds[seat][deal]: setup seeds.
    clock: the time control (None: no limit); margin: every seat's margin per game, seconds its
    decisions may take beyond what they are allowed (kdtourney.bots.clock).
    forced: {seat: (call, kind, message)}: instead of making call number `call` of that seat, record
    that fault (used by the runner after a bot killed or hung its worker). monitor(seat, call,
    limit): told before every call into a bot, and monitor(-1, -1, None) at the end (the runner's
    watchdog); limit: for a decision of an in-process bot under a clock, the seconds it may take
    before it forfeits whatever it returns (what the clock allows plus what is left of the
    margin), else None. watch(game, deal): told the position at the start of each deal and
    after each move (the play page's view; it must not change the game).
    """
    n = rules.players
    started = time.perf_counter()
    match = _Match(n, forced, monitor)
    for seat in range(n):
        status, bot = match.call(seat, factories[seat])
        match.bots[seat] = bot if status == "ok" else None
    all_moves = []
    totals = [[0, 0, 0, 0] for _ in range(n)]  # score, largest territory, crowns, discards
    for deal, seed in enumerate(deal_seeds):
        game = _play_deal(match, rules, deal, seed, bot_seeds, clock, margin, watch)
        all_moves.append(list(game.history))
        for seat in range(n):
            score = game.score(seat)
            t = totals[seat]
            t[0] += score.total
            t[1] += score.largest_territory
            t[2] += score.crowns
            t[3] += game.discards(seat)
        last_game = game
    match.close()
    if len(deal_seeds) == 1:
        base = last_game.ranking()  # the engine's ranking, ties and tie-breaks included
    else:  # a dynasty: the engine's tie-breaks on the totals of the three deals
        base = rank_scores([Score(total=t[0], territories=0, bonus=0, largest_territory=t[1],
                                  crowns=t[2]) for t in totals], rules.tiebreak)
    _fill_results(match, base, totals)
    if monitor is not None:
        monitor(-1, -1, None)
    moves = all_moves[0] if len(deal_seeds) == 1 else all_moves
    return MatchResult(moves=moves, duration=time.perf_counter() - started, seats=match.seats,
                       faults=[match.faults[s] for s in sorted(match.faults)], notes=match.notes)


def _play_deal(match: _Match, rules: Rules, deal: int, seed: int, bot_seeds, clock, margin,
               watch) -> Game:
    """One deal: setup for every seat without a fault, the decisions, finish; the game played."""
    n = match.n
    game = Game(rules, seed)
    clocks = [SeatClock(clock, margin) for _ in range(n)]  # each deal is a game for the clock
    for seat in range(n):
        if seat not in match.faults:
            match.call(seat, match.bots[seat].setup, seat, copy.copy(rules),
                       int(bot_seeds[seat][deal]))
    if watch is not None:
        watch(game, deal)
    while not game.is_over:
        player = game.current_player
        assert player is not None  # the game is not over
        if player in match.faults or not match.decide(game, player, clocks[player], margin):
            game.apply(game.legal_actions()[0])  # a forfeited seat plays the first legal action
        else:
            match.take_note(player, deal, len(game.history) - 1)
        if watch is not None:
            watch(game, deal)
    scores = game.scores()
    ranks = rank_among([-r for r in game.ranking()], [s in match.faults for s in range(n)])
    for seat in range(n):
        if seat not in match.faults:
            match.call(seat, match.bots[seat].finish, scores, ranks, counted=False)
    return game


def _fill_results(match: _Match, base: list, totals: list) -> None:
    """Each seat's result: its totals, its rank among the players without a fault (`base`: the
    engine's ranking, lower is better), its win share and margin."""
    n = match.n
    faulted = [s in match.faults for s in range(n)]
    ranks = rank_among([-r for r in base], faulted)
    winners = [s for s in range(n) if ranks[s] == 1 and not faulted[s]]
    for seat, result in enumerate(match.seats):
        t = totals[seat]
        result.score, result.largest_territory, result.crowns, result.discards = t
        result.rank = ranks[seat]
        result.win_share = 1.0 / len(winners) if seat in winners else 0.0
        result.margin = t[0] - max(totals[o][0] for o in range(n) if o != seat)
        result.fault = faulted[seat]


__all__ = ["play_match", "MatchResult", "SeatResult", "Fault", "rank_among", "exception_message",
           "FAULT_KINDS", "EXCEPTION", "ILLEGAL", "TIMEOUT", "TIME", "CRASH", "PROTOCOL",
           "MEMORY", "OUTPUT"]
