"""A person plays against bots (`kdtourney play`): the harness plays the games as a tournament's
worker does, with the person's seat as one more bot.

- The bots are the registry's, each in its own process (as `--isolate`; `--sandbox`: in a
  sandbox), on the tournament's clock with its margin, forfeiting as in any game
  (kdtourney.match.loop). The person's seat is `HumanSeat`: its decisions come from outside (the
  play page, kdtourney.commands.play_page), and the engine checks each before it counts
  (`Board.answer`); on a clock the person's seat is timed like every other.
- The games are those of a lineup tournament, the person's seat `HUMAN` and the bots, stored as
  a run stores its games (its store, blocks, seats rotating from game to game, seeds), so the
  report, `replay` and `export` read them; the same command on the same folder plays the games
  it lacks.
- What the person sees is the public position only (`Board.show`: a `GameView`'s facts, never the
  undrawn deck).
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from kdtourney.bots.base import Bot
from kdtourney.commands.driver import rows_of, schedule_blocks
from kdtourney.commands.run import open_run
from kdtourney.commands.setup import Options, setup
from kdtourney.engine import (
    DISCARD,
    claim_action,
    decode_placement,
    describe_action,
    encode_placement,
)
from kdtourney.engine.kingdom import Placement
from kdtourney.engine.tiles import TILES
from kdtourney.external import DEFAULT_STARTUP_TIMEOUT, ProcessPool
from kdtourney.match.loop import play_match
from kdtourney.match.settings import PlaySettings
from kdtourney.registry import EntrantError
from kdtourney.service.worker import warm_up
from kdtourney.tournament import definition as tour
from kdtourney.tournament.blocks import of_plan
from kdtourney.tournament.definition import ArenaError, Tournament

HUMAN = "human"  # the entrant label (and spec) of the person's seat
HUMAN_IDENTITY = {"kind": HUMAN, "digest": HUMAN}


class PersonLeft(BaseException):
    """The person closed the page in a game: it stops, not stored (as at Ctrl-C). Not an
    Exception: the harness would take it for the seat's fault."""


class Board:
    """What the person's page and the game share, between threads: the position as it is now
    (`show`, from the game loop), the question to the person (`ask`, from the person's seat) and
    the answer (`answer`, from the page's server). Every change bumps `version`; `state(since)`
    waits for one."""

    def __init__(self, idle: float = 60.0):
        self._lock = threading.Condition()
        self.idle = idle      # seconds without a word from the page after which it is gone
        # when the page last asked for something (None: not opened yet)
        self._seen: float | None = None
        self.version = 0
        self._state: dict = {"phase": "starting", "version": 0}
        # (view, version asked at) while the person is to decide
        self._question: tuple | None = None
        self._answer: int | None = None
        self._log: list[str] = []
        self._shown = -1      # the newest version the page was given
        self.closed = False  # the page asked to stop
        self._next = False   # the page asked for the next game

    def _publish(self, **changes):
        with self._lock:
            self.version += 1
            self._state = dict(self._state, **changes, version=self.version)
            self._lock.notify_all()

    def state(self, since: int = -1, timeout: float = 20.0) -> dict:
        """The state once its version is past `since` (at once if it is), or as it is after
        `timeout` seconds."""
        self.touch()
        with self._lock:
            self._lock.wait_for(lambda: self.version > since or self.closed, timeout)
            state = dict(self._state, log=list(self._log[-12:]))
            self._shown = max(self._shown, state["version"])
            self._lock.notify_all()
        self.touch()
        return state

    def touch(self) -> None:
        """The page said something: it is still open."""
        with self._lock:
            self._seen = time.monotonic()

    def gone(self) -> bool:
        """Whether the page was closed (asked to, or silent for `idle` seconds once opened)."""
        with self._lock:
            if self._seen is not None and time.monotonic() - self._seen > self.idle:
                self.closed = True
            return self.closed

    # --- the game's side ------------------------------------------------------------------------

    def begin(self, game: int, seats: list[str], human: int, rules, deals: int) -> None:
        """A new game: who sits where (`human`: the person's seat)."""
        with self._lock:
            self._log = []
        self._publish(phase="playing", game=game, seats=seats, human=human, size=rules.size,
                      deals=deals, ask=None, result=None, more=None)

    def show(self, game, deal: int) -> None:
        """The position of `game` now (the watch of kdtourney.match.loop.play_match)."""
        if game.history:
            with self._lock:
                seat = self._state.get("turn")
                assert seat is not None  # the position shown before this move: its seat moved
                self._log.append(f"{self._state['seats'][seat]} (seat {seat + 1}): "
                                 f"{describe_action(game.history[-1], self._state.get('domino'))}")
        view = game.view(0)  # public facts only: no undrawn domino
        self._publish(deal=deal, **_position(view))

    def ask(self, view, timeout: float | None) -> int | None:
        """The person's decision in `view` (an action the engine accepts), or None once `timeout`
        seconds passed (on a clock: past what the person may take)."""
        question = _question(view)
        with self._lock:
            self._answer = None
            self._question = (view, self.version + 1)  # the version published next
        self._publish(ask=question)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                left = None if deadline is None else deadline - time.monotonic()
                if self._answer is not None or (left is not None and left <= 0):
                    break
                self._lock.wait(0.5 if left is None else min(left, 0.5))  # Ctrl-C gets through
            if self.gone():
                break
        with self._lock:
            self._question, answer = None, self._answer
        self._publish(ask=None)
        if answer is None and self.closed:
            raise PersonLeft()
        return answer

    def end(self, result: dict, more: bool) -> None:
        """The game is over and stored: its result; `more`: whether a next game is there to play."""
        self._publish(phase="over", ask=None, result=result, more=more)

    def wait_next(self) -> bool:
        """Whether the person asked for the next game (False: they closed the page)."""
        with self._lock:
            self._next = False
        while not self.gone():
            with self._lock:
                if self._next:
                    return True
                self._lock.wait(0.5)
        return False

    def finish(self, text: str) -> None:
        """No more games: what the page says last."""
        self._publish(phase="done", ask=None, more=False, done=text)

    def wait_shown(self, timeout: float) -> bool:
        """Whether the page was given the newest state within `timeout` seconds (or is gone)."""
        with self._lock:
            return self._lock.wait_for(lambda: self._shown >= self.version or self.closed,
                                       timeout)

    # --- the page's side ------------------------------------------------------------------------

    def answer(self, move: dict, version: int) -> str | None:
        """The person's move, {"place": [ra, ca, rb, cb]}, {"claim": domino} or {"discard":
        true}, given at state `version`; None once the engine accepted it, else why not."""
        with self._lock:
            if self._question is None or self._answer is not None:
                return "it is not your turn"
            view, asked_at = self._question
            if version < asked_at:
                return "the position changed: look again"
            try:
                action = _action(move, view)
            except (TypeError, ValueError, KeyError, IndexError) as exc:
                return f"not a move: {exc}"
            if not view.is_legal(action):
                return f"{describe_action(action, view.domino_to_place)} is not legal now"
            self._answer = action
            self._lock.notify_all()
            return None

    def next_game(self) -> None:
        with self._lock:
            self._next = True
            self._lock.notify_all()

    def close(self) -> None:
        with self._lock:
            self.closed = True
            self._lock.notify_all()


def _position(view) -> dict:
    """The public facts of a position, as the page draws them."""
    n = view.n_players
    return {"kingdoms": [view.kingdom(p).square_array().tolist() for p in range(n)],
            "scores": view.scores(),
            "current": [[d, o, int(placed)]
                        for (d, o), placed in zip(view.current_row, view.placed)],
            "next": [[d, o, 0] for d, o in view.new_row],
            "turn": view.current_player, "round": view.round, "over": bool(view.is_over),
            "domino": view.domino_to_place}


def _question(view) -> dict:
    """What the person may do: the squares of every legal placement (a domino whose halves are
    alike, both ways round), the dominoes free to claim, or only a discard."""
    places, claims, discard = [], [], False
    domino = view.domino_to_place
    for action in view.legal_actions():
        if action == DISCARD:
            discard = True
        elif action > DISCARD:
            claims.append(action - claim_action(0))
        else:
            a, b = decode_placement(action)
            places.append([*a, *b])
            if TILES[domino].symmetric:
                places.append([*b, *a])
    return {"places": places, "claims": claims, "discard": discard, "domino": domino}


def _action(move: dict, view) -> int:
    if "place" in move:
        ra, ca, rb, cb = (int(v) for v in move["place"])
        return encode_placement(Placement((ra, ca), (rb, cb)), view.domino_to_place)
    if "claim" in move:
        return claim_action(int(move["claim"]))
    if move.get("discard") is True:
        return DISCARD
    raise ValueError("give place, claim or discard")


class HumanSeat(Bot):
    """The person's seat: each decision is asked on the `board` and comes back checked by the
    engine (kdtourney.match.loop then applies it as any bot's)."""

    name = HUMAN

    def __init__(self, board: Board, margin: float = 0.0):
        self.board, self.margin = board, margin

    def act(self, view):
        timeout = None if view.time_left is None else view.time_left + self.margin
        return self.board.ask(view, timeout)


def lineup(registry, against: list[str], **options) -> Tournament:
    """The lineup tournament of the person, seat 0 of the first game, against `against` (specs
    checked against `registry`), with `options` as `tournament.prepare` takes them (games, seed,
    rules, clock); ArenaError for bad input."""
    if not 1 <= len(against) <= 3:
        raise ArenaError(f"--against: one to three bots (a table of two to four), not "
                         f"{len(against)}")
    for spec in against:
        try:
            if registry.resolve(spec).name == HUMAN:
                raise ArenaError(f"{spec}: '{HUMAN}' is the name of your own seat; rename that bot")
        except EntrantError as exc:
            raise ArenaError(str(exc)) from None
    # the table checked as a lineup of bots, the first bot sitting in for the person
    table = tour.prepare(registry, lineup=[against[0], *against], **options)
    assert table.lineup is not None  # prepared as a lineup
    seats = (0, *(i + 1 for i in table.lineup[1:]))
    return replace(table, entrants=(HUMAN, *table.entrants), specs=(HUMAN, *table.specs),
                   lineup=seats)


def play_games(tournament: Tournament, folder, registry, board: Board, *, play: PlaySettings,
               meta: dict, startup_timeout: float | None = None,
               require_limits: bool = False) -> int:
    """Play the next `tournament.games` games of `tournament` (`lineup`) that `folder`'s store
    lacks, in order, storing each as it ends, until none is left or the person does not ask for
    the next (`board`); returns how many were stored. Every bot plays in its own process
    (`play`: in a sandbox or not, its margin). ArenaError for a store that is not this
    tournament's or a bot that does not start; KeyboardInterrupt (Ctrl-C) or PersonLeft stops the
    game being played, which is not stored."""
    play = replace(play, isolate=True)
    bots = replace(tournament, entrants=tournament.entrants[1:], specs=tournament.specs[1:],
                   lineup=None)
    options = Options(play=play, startup_timeout=startup_timeout or DEFAULT_STARTUP_TIMEOUT,
                      require_limits=require_limits)

    def open_folder(identities):
        return open_run(tournament, folder, meta, {HUMAN: HUMAN_IDENTITY, **identities}, play)

    with setup(bots, folder, registry, open_folder, options) as s:
        # the kernels loaded (or compiled) before the first game: not on a bot's clock
        warm_up(bots, registry, builtin_only=s.settings.sandbox is not None, isolate=True)
        s.stack.callback(lambda: s.st.update_meta(games_stored=s.st.count_games()))
        pool = ProcessPool(s.settings)
        s.stack.callback(pool.close)
        return play_in_order(tournament, s.st, registry, board, pool, s.settings, play.margin)


def play_in_order(tournament: Tournament, st, registry, board: Board, pool, settings,
                  margin: float) -> int:
    """`play_games`' games, over its open store `st` and its bots' ProcessPool `pool`."""
    plan = tournament.plan()
    blocks = of_plan(tournament.entrants, tournament.specs, plan.games)
    done = st.done_games()
    secret = st.seed_secret(create=settings.sandbox is not None and not done)
    table, specs = schedule_blocks(st, tournament, blocks, secret, plan.games)
    me = table.entrants.index(HUMAN)
    factories = [(lambda: HumanSeat(board, margin)) if label == HUMAN
                 else registry.factory(spec, pool, True, label)
                 for label, spec in zip(table.entrants, table.specs)]
    # this session's games: the next ones the store lacks (a block is every seat's turn)
    left = [g for g in sorted(specs) if g not in done][:tournament.games]
    stored = 0
    for k, index in enumerate(left):
        spec = specs[index]
        rules = table.rules_for(spec.n_players)
        board.begin(index, [table.entrants[e] for e in spec.seats], spec.seats.index(me),
                    rules, len(spec.deal_seeds))
        pool.new_game(index, spec.deal_seeds)
        result = play_match(rules, spec.deal_seeds, spec.bot_seeds,
                            [factories[e] for e in spec.seats], clock=table.time_control,
                            margin=margin, watch=board.show)
        game, results, faults = rows_of(table.entrants, spec, result)
        st.add_game(game, results, faults)
        stored += 1
        board.end({"game": index, "scores": [r["score"] for r in results],
                   "ranks": [r["rank"] for r in results],
                   "faults": [f"{f['entrant']} (seat {f['seat'] + 1}): {f['kind']}: "
                              f"{f['message']}" for f in faults]},
                  more=k + 1 < len(left))
        if k + 1 < len(left) and not board.wait_next():
            break
    return stored


__all__ = ["HUMAN", "Board", "HumanSeat", "PersonLeft", "lineup", "play_games"]
