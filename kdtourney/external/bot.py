"""`ExternalBot`: the `Bot` adapter of a bot process, for one game."""

from __future__ import annotations

import time
from typing import Protocol

from kdtourney.bots.base import Bot
from kdtourney.external import kdtp
from kdtourney.external.declaration import Program
from kdtourney.external.process import (
    WRITE_TIMEOUT,
    BotFailure,
    BotProcess,
    BotProtocolError,
    IllegalAnswer,
    ProcessSettings,
    show,
)


class Lender(Protocol):
    """What a bot needs of the pool that made it (`pool.ProcessPool`, which imports this module):
    its processes, lent for a game and given back, and the game they play."""

    settings: ProcessSettings
    game: int
    deals: tuple

    def lend(self, program: Program, entrant: str) -> BotProcess: ...

    def give_back(self, program: Program, entrant: str, process: BotProcess) -> None: ...

    def started(self, process: BotProcess) -> None: ...

    def close(self) -> None: ...


class ExternalBot(Bot):
    """A bot in another process, for one game (a dynasty's three deals): `setup` sends `game`
    (starting the process if needed), `act` sends `act` and waits for the action until what the
    decision may take (`view.time_left`, set by the arena's clock) plus the margin, `finish`
    sends `result`, `close` gives the process back.

    Sandboxed, `act` thaws the bot's processes before it writes `act` and freezes them once the
    answer is read: `decision_s`, the decision's time for its clock, is from writing `act` to
    reading the answer, neither of those included."""

    out_of_process = True

    def __init__(self, pool: Lender, program: Program, entrant: str, options: dict,
                 owns_pool: bool = False):
        self.pool, self.program, self.entrant, self.options = pool, program, entrant, dict(options)
        self.name = program.name
        self.owns_pool = owns_pool  # close() closes the pool too
        self._process: BotProcess | None = None
        self.decision_s: float | None = None  # the last act's time (None: it wrote no act)

    @property
    def process(self) -> BotProcess | None:
        """The process lent for this game (None before `setup` and after `close`)."""
        return self._process

    def setup(self, seat, rules, seed):
        if self._process is None:
            self._process = self.pool.lend(self.program, self.entrant)
        process = self._process
        if not process.alive():
            if process.proc is not None:  # died since its last game: a fresh one
                self.pool.give_back(self.program, self.entrant, process)
                process = self._process = self.pool.lend(self.program, self.entrant)
            process.game = self.pool.game  # what it writes while starting is logged in this game
            try:
                process.start()
            finally:
                self.pool.started(process)
        process.new_game(self.pool.game, self.pool.deals)
        kdtp.warm_up()
        message = kdtp.game_message(self.pool.game, seat, rules, int(seed), self.options,
                                    self.pool.settings.clock)
        process.send(kdtp.encode(message), time.monotonic() + WRITE_TIMEOUT, "game")

    def act(self, view):
        self.decision_s = None
        self.decision_note = None  # its answer's optional KDTP `note`, read by the match
        limit = view.time_left
        legal = view.legal_actions()
        line = kdtp.act_line(view, legal, limit)
        process = self._process
        process.allowed = limit
        process.expect_silence("act")
        process.thaw()
        started = time.monotonic()
        deadline = None if limit is None else started + limit + self.pool.settings.margin
        try:
            process.send(line, deadline, "act")
            # an answer written compactly, as most bots write it, is known without parsing it
            message = process.receive(deadline, "act", kdtp.answer_lines())
        finally:
            self.decision_s = time.monotonic() - started
        process.freeze()
        if isinstance(message, int):  # an action, by its compact line
            if message in legal:
                return message
            answer = kdtp.action_text(message)
        else:
            if message["type"] != "action" or "action" not in message:
                process.fail(BotProtocolError, f"answered act with {show(message)}, not "
                                               '{"type": "action", "action": ...}')
            answer = kdtp.canonical(message["action"])
            self.decision_note = kdtp.note_of(message)
        texts = {kdtp.action_text(a): a for a in legal}
        if answer not in texts:
            raise IllegalAnswer(f"answered {answer[:100]}, not one of the {len(legal)} legal "
                                f"actions of its {view.phase} decision in round {view.round}",
                                process.stderr_tail())
        return texts[answer]

    def finish(self, scores, ranks):
        process = self._process
        if process is not None and process.alive():
            try:
                process.send(kdtp.encode(kdtp.result_message(scores, ranks)),
                             time.monotonic() + WRITE_TIMEOUT, "result")
            except BotFailure:
                pass  # broken now: restarted before the next game

    def close(self):
        if self._process is not None:
            self.pool.give_back(self.program, self.entrant, self._process)
            self._process = None
        if self.owns_pool:
            self.pool.close()
