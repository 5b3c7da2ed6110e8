"""Where each local worker is, for the parent's watchdog: a shared array of SLOT floats per worker.

    Heartbeat      the worker's writer: warming(), game(index), (seat, call, limit) before each
                   bot call (play_match's monitor), idle(); each step published whole
    Step           one step: game, seat, call, deadline (monotonic), the limit it came from
    read_step(status, slot, whole=True) -> Step | None     None while a step is being written
    overdue(status, slot, now) -> Step | None             the step whose deadline passed
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kdtourney.service.backend import DEFAULT_HANG_TIMEOUT
from kdtourney.service.forfeit import hang_limit

SLOT = 6       # floats per worker: game, seat, call, deadline, limit, version
_VERSION = 5   # odd while a step is being written


@dataclass(frozen=True)
class Step:
    """A step a worker published whole: the game (-1 none, -2 warming up), the seat and bot call
    it is in (-1: none, the harness's work), the monotonic time by which it must make its next
    step and the limit that deadline came from."""

    game: int
    seat: int
    call: int
    deadline: float
    limit: float


class Heartbeat:
    """A worker's writer of its part of the status array (`slot`). The parent decides that a
    worker hung, and charges the hang, from one step read whole, never from parts of two."""

    def __init__(self, status, slot: int, hang_timeout: float, clock=time.monotonic):
        self.status, self.base = status, slot * SLOT
        self.hang_timeout, self.clock = hang_timeout, clock
        version = int(status[self.base + _VERSION])
        self.version = version + version % 2  # a writer killed mid-step left it odd
        self.current = -1                     # the game it is in

    def _publish(self, game: int, seat: int, call: int, limit: float) -> None:
        status, base = self.status, self.base
        self.version += 1
        status[base + _VERSION] = self.version
        status[base], status[base + 1], status[base + 2] = game, seat, call
        status[base + 4] = limit
        status[base + 3] = self.clock() + limit
        self.version += 1
        status[base + _VERSION] = self.version

    def warming(self) -> None:
        """Warming up, which may compile bot kernels (tens of seconds on a fresh install)."""
        self._publish(-2, -1, -1, max(self.hang_timeout, DEFAULT_HANG_TIMEOUT))

    def game(self, game: int) -> None:
        """Starting `game` (the harness, before any bot call)."""
        self.current = game
        self._publish(game, -1, -1, self.hang_timeout)

    def __call__(self, seat: int, call: int, limit: float | None = None) -> None:
        """play_match's monitor: a call into the bot of `seat` (which may take `limit`), or
        (-1, -1) the game's end (its harness's work until the next game)."""
        self._publish(self.current, seat, call, hang_limit(self.hang_timeout, limit))

    def idle(self) -> None:
        """Waiting for games: never hung."""
        self.current = -1
        self._publish(-1, -1, -1, float("inf"))


def read_step(status, slot: int, whole: bool = True) -> Step | None:
    """The step the worker of `slot` last published; None while it publishes one (it is making
    progress). whole False: what the array holds, for a dead worker (killed between two writes,
    it left parts of a step)."""
    base = slot * SLOT
    version = status[base + _VERSION]
    game, seat, call, deadline, limit = status[base:base + 5]
    if whole and (version % 2 or status[base + _VERSION] != version):
        return None
    return Step(int(game), int(seat), int(call), deadline, limit)


def overdue(status, slot: int, now: float) -> Step | None:
    """The step of the worker of `slot` if it made no step by that step's deadline, else None."""
    step = read_step(status, slot)
    return step if step is not None and now > step.deadline else None


__all__ = ["Heartbeat", "Step", "read_step", "overdue", "SLOT"]
