"""Game clocks: how long a bot may take for each decision, the same rule for every seat.

    TimeControl(move_s, bank_s, increment_s, first_move_s)   what a tournament sets (seconds;
        None where a part does not apply); ClockError for one that cannot be
    SeatClock(control, margin)     one seat's clock through one game (a dynasty's deal is a game):
        allowed() -> (seconds, fault kind past them), deadline(), over(elapsed), charge(elapsed)
    parse_time_control('10+0.1') -> (bank, increment); ClockError for anything else
    TIMEOUT, TIME      the fault kinds: past the move (or first-decision) limit, past the bank
    CLOCK_RULE         the rule below, recorded with a store's play settings (2)

The rule: a decision may take what `allowed()` says; what it takes beyond comes out of the seat's
one margin per game, and past what is left of it the bot forfeits; the bank is charged the
decision's time, credited the increment, and when it was the limit pays the margin back, at most
half of it per decision. Why, and what it gives on a loaded machine: docs/clocks.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from kdtourney.errors import UserError

TIMEOUT, TIME = "timeout", "time"   # fault kinds: over the move limit, over the bank
CLOCK_RULE = 2                       # the rule above, recorded with a store's play settings
_CONTROL = re.compile(r"\s*(\d*\.?\d+)\s*(?:\+\s*(\d*\.?\d+))?\s*\Z")


class ClockError(UserError):
    """A time control that cannot be (a negative limit, an increment without a bank, ...): one
    line, as the user gave it."""


@dataclass(frozen=True)
class TimeControl:
    """A tournament's time control, in seconds; None where a part does not apply."""

    move_s: float | None = None
    bank_s: float | None = None
    increment_s: float | None = None
    first_move_s: float | None = None

    def __post_init__(self):
        for key, value in asdict(self).items():
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0 \
                    or (value == 0 and key != "increment_s"):
                raise ClockError(f"{key} must be a positive number of seconds, not {value!r}")
            object.__setattr__(self, key, float(value))
        if self.increment_s is not None and self.bank_s is None:
            raise ClockError("an increment needs a bank")
        if self.first_move_s is not None and self.move_s is None and self.bank_s is None:
            raise ClockError("a first-decision limit needs a move limit or a bank")

    @property
    def limited(self) -> bool:
        return self.move_s is not None or self.bank_s is not None

    @property
    def longest_decision(self) -> float | None:
        """The longest a single decision may take, None when only a bank bounds it."""
        if self.move_s is None:
            return None
        return max(self.move_s, self.first_move_s or 0.0)

    def wire(self) -> dict:
        """The `time` object of a KDTP `game` message: every field, null where it does not apply."""
        return asdict(self)

    def describe(self) -> str:
        """'10+0.1 s a game, first decision 1 s, 0.5 s a decision', or 'no limit'."""
        parts = []
        if self.bank_s is not None:
            parts.append(f"{self.bank_s:g}+{self.increment_s or 0:g} s a game")
        if self.first_move_s is not None:
            parts.append(f"first decision {self.first_move_s:g} s")
        if self.move_s is not None:
            parts.append(f"{self.move_s:g} s a decision")
        return ", ".join(parts) or "no limit"


def parse_time_control(text: str) -> tuple[float, float]:
    """'10+0.1' -> (10.0, 0.1); '60' -> (60.0, 0.0): a bank in seconds and its increment.
    ClockError (one line) for anything else."""
    match = _CONTROL.match(text or "")
    try:
        if match is None:
            raise ValueError(text)
        bank = float(match.group(1))
        increment = float(match.group(2)) if match.group(2) is not None else 0.0
    except (AttributeError, ValueError):
        raise ClockError(f"--time-control expects BANK+INCREMENT in seconds, e.g. 10+0.1, not "
                         f"{text!r}") from None
    if not (math.isfinite(bank) and bank > 0 and math.isfinite(increment) and increment >= 0):
        raise ClockError(f"--time-control {text}: the bank must be positive and the increment not "
                         "negative")
    return bank, increment


class SeatClock:
    """One seat's clock through one game (see the module docstring). `margin`: what is left of
    the seat's margin in this game (`full` at the start)."""

    def __init__(self, control: TimeControl | None, margin: float = 0.0):
        self.control = control or TimeControl()
        self.margin = self.full = margin
        self.bank = self.control.bank_s
        self.first = True

    def allowed(self) -> tuple[float | None, str]:
        """(seconds the next decision may take, None: no limit; the fault kind past it)."""
        c = self.control
        if self.first and c.first_move_s is not None:
            return c.first_move_s, TIMEOUT
        if self.bank is not None and (c.move_s is None or self.bank <= c.move_s):
            return self.bank, TIME
        return c.move_s, TIMEOUT

    def deadline(self) -> float | None:
        """The longest the next decision may take without forfeiting: what it is allowed plus
        what is left of the margin (None: no limit)."""
        allowed, _ = self.allowed()
        return None if allowed is None else allowed + self.margin

    def over(self, elapsed: float) -> str | None:
        """The fault a decision of `elapsed` seconds earns (checked before `charge`), or None."""
        allowed, kind = self.allowed()
        if allowed is not None and elapsed > allowed + self.margin:
            return kind
        return None

    def charge(self, elapsed: float) -> None:
        """The decision took `elapsed` seconds: what it took beyond what it was allowed comes out
        of the margin, the rest out of the bank, which then pays the margin back if it was the
        limit."""
        allowed, kind = self.allowed()
        first, self.first = self.first and self.control.first_move_s is not None, False
        if allowed is not None:
            self.margin = max(0.0, self.margin - max(0.0, elapsed - allowed))
        if first or self.bank is None:
            return
        self.bank = max(0.0, self.bank - elapsed) + (self.control.increment_s or 0.0)
        if kind == TIME:
            back = min(self.full - self.margin, self.full / 2, self.bank)
            self.bank -= back
            self.margin += back


__all__ = ["TimeControl", "SeatClock", "parse_time_control", "ClockError", "TIME", "TIMEOUT",
           "CLOCK_RULE"]
