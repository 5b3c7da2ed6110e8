"""The game loop: bots play one game (or one dynasty of three deals), with the fairness rules.

Short and separate from scheduling (as OpenSpiel's `evaluate_bots`): `play_match` gets the rules,
the deal seeds, the bots' setup seeds and one factory per seat, and returns a `MatchResult`.

Contract with the bots
----------------------
- A fresh bot instance per seat per game (made by the seat's factory), so no state leaks from one
  game to the next and a game's result does not depend on which worker played which games before.
  In a dynasty the instance lives through the three deals.
- `setup(seat, rules, seed)` before every deal, then `act(game.view(seat))` for *every* decision of
  the seat, including forced ones (a single legal action, e.g. a discard): the bot sees every
  position of its game, and the decision counts and times are comparable between bots.
- Every call of `act` is timed with `time.perf_counter` (wall time) and checked against the seat's
  clock (kdtourney.match.clock): the same rule for every seat, in this process or its own; the view
  says how long the decision may take (`view.time_left`, None: no limit), and the seat's one
  margin per game lends what its decisions take beyond that. A bot in its own process is timed
  from writing `act` to reading its answer (`ExternalBot.decision_s`): the harness's work around
  it, freezing and thawing a sandboxed bot included, is not the bot's time.
- After each deal, `finish(scores, ranks)` for every seat that has not forfeited; `close()` once
  at the end for every seat (its exceptions are ignored: the game is decided; but a bot that kills
  or hangs its worker in `close` is the one blamed, as in any other call).
- A bot in its own process (`out_of_process`, kdtourney.external) stops waiting at
  `view.time_left` plus the margin and raises: the other seats go on at once.

Fairness (wrappers around the bot, never the engine)
----------------------------------------------------
A bot whose construction, `setup`, `act` or `finish` raises (kind 'exception'), whose `act` returns
anything but one of the legal actions (kind 'illegal'), or whose decision takes longer than its
clock allows (kind 'timeout' past the move limit or the first-decision limit, 'time' past what is
left of its bank) forfeits the game. A bot in its own process also forfeits when it
exits or cannot be started (kind 'crash', with its last stderr lines) or breaks the protocol (kind
'protocol': an answer that is not JSON, not the message expected, or a line too long); a
sandboxed bot (--sandbox) also forfeits past its memory limit (kind 'memory') or its output limit
(kind 'output'):
- the fault is recorded (seat, kind, message, which call);
- from then on the bot is not asked again: its seat plays the first legal action, so the other
  players finish their game normally and the move list stays a complete, replayable game;
- the forfeiting player is ranked last (rank = number of players, win share 0), its final score is
  still recorded; the other players are ranked among themselves by the engine's ranking.
The runner can also force a fault at a given call of a seat (`forced`): that is how a bot that kills
or hangs its worker process is made to forfeit when its game is played again (kind 'crash' or
'timeout').

Dynasty: three deals in a row with the same seats; totals decide. Score, largest territory, crowns
and discards are summed over the deals; the ranking is by total score, then the summed largest
territory and (tiebreak "crowns") summed crowns, equal players sharing a rank.
"""

from __future__ import annotations

import copy
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from kdtourney import interrupts
from kdtourney.match.clock import TIME, TIMEOUT, SeatClock, TimeControl
from kdtourney.external import BotExited, BotFailure, BotOutOfMemory, BotOutputFlood, BotProtocolError, BotTimeout, ExternalBot, IllegalAnswer
from kdtourney.engine import Game, Rules, Score, rank_scores

EXCEPTION, ILLEGAL, CRASH, PROTOCOL = "exception", "illegal", "crash", "protocol"
MEMORY, OUTPUT = "memory", "output"  # a sandbox's limits (kdtourney.external.sandbox)
FAULT_KINDS = (EXCEPTION, ILLEGAL, TIMEOUT, TIME, CRASH, PROTOCOL, MEMORY, OUTPUT)
_KIND_OF = {BotTimeout: TIMEOUT, BotExited: CRASH, BotProtocolError: PROTOCOL, IllegalAnswer: ILLEGAL,
            BotOutOfMemory: MEMORY, BotOutputFlood: OUTPUT}
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
    """A forfeit: seat, kind (exception, illegal, timeout, time, crash, protocol), one-line message, the
    index of the bot call at fault (0 = construction, then setup and act calls in order), and for a
    bot in its own process its last stderr lines."""

    seat: int
    kind: str
    message: str
    call: int
    stderr: str | None = None


@dataclass
class MatchResult:
    """moves: the actions of the game (for a dynasty, a list of three such lists); duration in
    seconds; seats: SeatResult per seat; faults: at most one per seat."""

    moves: list
    duration: float
    seats: list
    faults: list = field(default_factory=list)

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
    """Ranks (1 = best) from sortable keys (higher is better): the players without a fault are ranked
    among themselves, equal keys sharing a rank; faulted players get the last rank (n)."""
    n = len(keys)
    ranks = []
    for i in range(n):
        if faulted[i]:
            ranks.append(n)
        else:
            ranks.append(1 + sum(1 for j in range(n) if not faulted[j] and keys[j] > keys[i]))
    return ranks


def play_match(rules: Rules, deal_seeds: Sequence[int], bot_seeds: Sequence[Sequence[int]],
               factories: Sequence[Callable], *, clock: TimeControl | None = None,
               margin: float = 0.0, forced: dict | None = None,
               monitor: Callable | None = None, watch: Callable | None = None) -> MatchResult:
    """Play one game (one deal seed) or a dynasty (three) and return its result.

    factories: per seat, a callable returning a new Bot. bot_seeds[seat][deal]: setup seeds.
    clock: the time control (None: no limit); margin: every seat's margin per game, seconds its
    decisions may take beyond what they are allowed (kdtourney.match.clock).
    forced: {seat: (call, kind, message)}: instead of making call number `call` of that seat, record
    that fault (used by the runner after a bot killed or hung its worker). monitor(seat, call,
    limit): told before every call into a bot, and monitor(-1, -1, None) at the end (the runner's
    watchdog); limit: for a decision of an in-process bot under a clock, the seconds it may take
    before it forfeits whatever it returns (what the clock allows plus what is left of the
    margin), else None. watch(game, deal): told the position at the start of each deal and
    after each move (the play page's view; it must not change the game).
    """
    n = rules.players
    forced = dict(forced or {})
    started = time.perf_counter()
    bots = [None] * n
    calls = [0] * n
    faults: dict[int, Fault] = {}
    forced_seats = set()  # their forced fault stands for the call that killed or hung the worker
    seats = [SeatResult(seat=s) for s in range(n)]

    def fault(seat, kind, message, at, stderr=None):
        if seat in faults:  # the first fault stands (close() still runs after one)
            return
        faults[seat] = Fault(seat, kind, message[:_MESSAGE_LIMIT], at,
                             stderr[-_STDERR_LIMIT:] if stderr else None)

    def call(seat, fn, *args, counted=True, timeout_kind=TIMEOUT, limit=None):
        """Call into the bot of `seat`: ("ok", value), ("raised", None) or ("forced", None).
        `finish` and `close` are not counted: call indexes stay those of construction, setup and
        act. timeout_kind: the fault of a bot in its own process cut at its deadline; limit: for
        the monitor."""
        index = calls[seat]
        if seat in forced and forced[seat][0] == index:
            _, kind, message = forced.pop(seat)
            fault(seat, kind, message, index)
            forced_seats.add(seat)
            return "forced", None
        calls[seat] += counted
        if monitor is not None:
            monitor(seat, index, limit)
        try:
            return "ok", fn(*args)
        except BotFailure as exc:  # a bot in its own process, which says how it failed
            kind = _KIND_OF[type(exc)]
            fault(seat, timeout_kind if kind == TIMEOUT else kind, str(exc), index, exc.stderr)
            return "raised", None
        except KeyboardInterrupt as exc:
            if interrupts.from_ctrl_c():
                raise
            fault(seat, EXCEPTION, exception_message(exc), index)
            return "raised", None
        except (Exception, SystemExit) as exc:  # a bot's failure is its forfeit, not ours
            fault(seat, EXCEPTION, exception_message(exc), index)
            return "raised", None

    for seat in range(n):
        status, bot = call(seat, factories[seat])
        bots[seat] = bot if status == "ok" else None

    all_moves = []
    totals = [[0, 0, 0, 0] for _ in range(n)]  # score, largest territory, crowns, discards
    for deal, seed in enumerate(deal_seeds):
        game = Game(rules, seed)
        clocks = [SeatClock(clock, margin) for _ in range(n)]  # each deal is a game for the clock
        for seat in range(n):
            if seat not in faults:
                call(seat, bots[seat].setup, seat, copy.copy(rules), int(bot_seeds[seat][deal]))
        if watch is not None:
            watch(game, deal)
        while not game.is_over:
            player = game.current_player
            if player not in faults:
                view = game.view(player)
                seat_clock = clocks[player]
                view.time_left, timeout_kind = seat_clock.allowed()
                # a bot in its own process is cut at its deadline: only one here can hang
                limit = None if getattr(bots[player], "out_of_process", False) \
                    else seat_clock.deadline()
                t0 = time.perf_counter()
                status, choice = call(player, bots[player].act, view, timeout_kind=timeout_kind,
                                      limit=limit)
                elapsed = time.perf_counter() - t0
                if isinstance(bots[player], ExternalBot) and bots[player].decision_s is not None:
                    elapsed = bots[player].decision_s  # its exchange alone: no freeze, no thaw
                if status != "forced":
                    result = seats[player]
                    result.decisions += 1
                    result.time_total += elapsed
                    result.time_max = max(result.time_max, elapsed)
                if status == "ok":
                    over, left = seat_clock.over(elapsed), seat_clock.margin
                    seat_clock.charge(elapsed)
                    if over is not None:
                        what = "what was left of its bank" if over == TIME else "the limit"
                        fault(player, over, f"a decision took {elapsed:.3f} s; {what}: "
                                            f"{view.time_left:.3f} s + {left:.3f} s left of its "
                                            f"{margin:g} s margin", calls[player] - 1)
                    else:
                        if _is_int(choice):
                            try:
                                game.apply(int(choice))  # checks legality, changes nothing if not
                            except ValueError:
                                pass
                            else:
                                if watch is not None:
                                    watch(game, deal)
                                continue
                        fault(player, ILLEGAL, f"returned {choice!r:.80}, not a legal action in the "
                                               f"{game.phase} phase of round {game.round}",
                              calls[player] - 1)
            game.apply(game.legal_actions()[0])  # a forfeited seat plays the first legal action
            if watch is not None:
                watch(game, deal)
        all_moves.append(list(game.history))
        scores = game.scores()
        ranks = rank_among([-r for r in game.ranking()], [s in faults for s in range(n)])
        for seat in range(n):
            if seat not in faults:
                call(seat, bots[seat].finish, scores, ranks, counted=False)
        for seat in range(n):
            score = game.score(seat)
            t = totals[seat]
            t[0] += score.total
            t[1] += score.largest_territory
            t[2] += score.crowns
            t[3] += game.discards(seat)
        last_game = game

    for seat, bot in enumerate(bots):
        # through call(), not counted: the watchdog then knows whose close kills or hangs the
        # worker, and the replay forces the fault at its finish (the same index) or here. A seat
        # forced to forfeit is not closed again unless its close is the harness's own (which gives
        # its process back to the pool): its code killed or hung the worker once already.
        if bot is None or (seat in forced_seats and type(bot).close is not ExternalBot.close):
            continue
        faulted_before = seat in faults  # then its first fault stands
        if call(seat, bot.close, counted=False)[0] == "raised" and not faulted_before:
            del faults[seat]  # the game is decided: a close that fails changes nothing
    faulted = [s in faults for s in range(n)]
    if len(deal_seeds) == 1:
        base = last_game.ranking()  # the engine's ranking, ties and tie-breaks included
    else:  # a dynasty: the engine's tie-breaks on the totals of the three deals
        base = rank_scores([Score(total=t[0], territories=0, bonus=0, largest_territory=t[1], crowns=t[2])
                            for t in totals], rules.tiebreak)
    ranks = rank_among([-r for r in base], faulted)
    winners = [s for s in range(n) if ranks[s] == 1 and not faulted[s]]
    for seat, result in enumerate(seats):
        t = totals[seat]
        result.score, result.largest_territory, result.crowns, result.discards = t
        result.rank = ranks[seat]
        result.win_share = 1.0 / len(winners) if seat in winners else 0.0
        result.margin = t[0] - max(totals[o][0] for o in range(n) if o != seat)
        result.fault = faulted[seat]
    if monitor is not None:
        monitor(-1, -1, None)
    moves = all_moves[0] if len(deal_seeds) == 1 else all_moves
    return MatchResult(moves=moves, duration=time.perf_counter() - started, seats=seats,
                       faults=[faults[s] for s in sorted(faults)])


__all__ = ["play_match", "MatchResult", "SeatResult", "Fault", "rank_among", "exception_message",
           "FAULT_KINDS", "EXCEPTION", "ILLEGAL", "TIMEOUT", "TIME", "CRASH", "PROTOCOL",
           "MEMORY", "OUTPUT"]
