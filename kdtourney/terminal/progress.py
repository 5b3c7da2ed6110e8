"""A run's progress in the terminal (rich), and what every live view of a command shares.

    TerminalView   quiet, a console, notes and a live display: the base of every view
    Reporter       a run's: games done of total, games per second, time left (from the rate of
                   whole blocks) and a one-line live standing; when stdout is not a terminal, a
                   plain line every EVERY_GAMES games or EVERY_SECONDS seconds, the leader
                   against the next with Elo and LOS (kdtourney.terminal.log_line)
    GameRate       games per second, counted from the first game's end (before it the workers
                   start, and load or compile the kernels: `starting_text` says which)
"""

from __future__ import annotations

import time
from collections import Counter

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.spinner import Spinner
from rich.text import Text

from kdtourney import engine
from kdtourney.terminal.eta import BlockEta, clock_text
from kdtourney.terminal.log_line import PairTally
from kdtourney.text import shown

EVERY_GAMES = 20     # without a terminal: a line every total/EVERY_GAMES games (at least 10) ...
EVERY_SECONDS = 60   # ... or once this long has passed since the last one


class GameRate:
    """Games per second, counted from the first game's end: before it the workers start and load
    the compiled kernels (a first run compiles them), which no later game waits for."""

    def __init__(self):
        self.t0 = None
        self.games = 0  # since the first

    def game(self) -> None:
        if self.t0 is None:
            self.t0 = time.perf_counter()
        else:
            self.games += 1

    @property
    def started(self) -> bool:
        return self.t0 is not None

    def per_second(self) -> float | None:
        """None until a second game has ended."""
        elapsed = time.perf_counter() - self.t0 if self.t0 is not None else 0.0
        return self.games / elapsed if self.games and elapsed > 0 else None


class TerminalView:
    """What every live view of a command shares: `quiet` (print nothing but errors), its console,
    its notes (`note`), and its live display (`live`, stopped by `end`)."""

    def __init__(self, quiet: bool = False, console: Console | None = None):
        self.quiet = quiet
        self.console = console or Console()
        self.live: Live | None = None

    def print(self, text: str, **how) -> None:
        """One line (or more, soft-wrapped), as the views print them: no highlighting."""
        self.console.print(text, highlight=False, soft_wrap=True, **how)

    def note(self, text) -> None:
        if not self.quiet:
            self.print(f"note: {shown(text)}", markup=False)

    def end(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


class Reporter(TerminalView):
    """What the runner tells (start, game, note, stop); this one prints to the terminal."""

    def __init__(self, quiet: bool = False, console: Console | None = None):
        super().__init__(quiet, console)
        self.totals: dict[str, list] = {}
        self.faults = 0
        self.failed = 0  # games that could not be finished
        self.pairs = PairTally()

    # the runner's calls

    def start(self, tournament, plan, store, workers):
        self.total = len(plan)
        self.done = store.count_games()
        self.rate = GameRate()
        for entrant, (n, wins, faults) in store.entrant_totals().items():
            self.totals[entrant] = [n, wins]
            self.faults += faults
        self.failed = store.count_games() - store.count_finished()
        specs = getattr(plan, "games", [])
        stored = store.done_games() if specs else set()
        self.eta = BlockEta(Counter(s.block for s in specs),
                            Counter(s.block for s in specs if s.game in stored))
        self.every = max(10, -(-self.total // EVERY_GAMES))
        self.last_line = (self.done, time.perf_counter())
        if self.quiet:
            return
        games = f"{self.total} games in {plan.blocks} blocks"
        if self.total != tournament.games:
            games += f" (--games {tournament.games} rounded up to whole blocks)"
        todo = self.total - self.done
        if self.done:
            games += f", {self.done} stored, {todo} to play"
        self.print(f"{tournament.describe()}: {games}, seed {tournament.seed}, "
                   f"{workers} worker{'s' * (workers != 1)}")
        if not plan.balanced:
            self.print(f"note: {plan.blocks} blocks are not a whole number of cycles of table "
                       f"compositions ({plan.cycle} blocks, {plan.cycle_games} games each): "
                       "the entrants meet unevenly")
        if not todo:
            return
        starting = starting_text()
        if self.console.is_terminal:
            self.progress = Progress(TextColumn("games"), BarColumn(), MofNCompleteColumn(),
                                     TextColumn("{task.fields[rate]}"), TextColumn("left"),
                                     TextColumn("{task.fields[left]}"), console=self.console)
            self.live = Live(Group(Spinner("dots", Text(starting))), console=self.console,
                             refresh_per_second=4, transient=True)
            self.live.start()
        elif starting == COMPILING:  # a log says why its first game came late
            self.print(f"note: {starting}")

    def game(self, spec, results, faults):
        self.done += 1
        if results:
            self.faults += len(faults)
        else:  # a failed game: its faults say who sat there, not who forfeited
            self.failed += 1
        for row in results:
            t = self.totals.setdefault(row["entrant"], [0, 0.0])
            t[0] += 1
            t[1] += row["win_share"]
        self.pairs.add(results)
        now = time.perf_counter()
        self.eta.game(getattr(spec, "block", None), now)
        if self.quiet:
            return
        first = not self.rate.started
        self.rate.game()
        if self.live is not None and first:  # the bar and its time left start with the first game
            self.task = self.progress.add_task("games", total=self.total, completed=self.done,
                                               rate="", left=clock_text(None))
            self.live.update(Group(self.progress, _Standing(self)))
        elif self.live is not None:
            self.progress.update(self.task, completed=self.done,
                                 rate=f"{self.rate.per_second() or 0.0:.1f} games/s",
                                 left=clock_text(self.time_left(now)))
        elif not self.console.is_terminal and self.done < self.total and (
                self.done - self.last_line[0] >= self.every
                or now - self.last_line[1] >= EVERY_SECONDS):
            self.last_line = (self.done, now)
            self.print(self.log_line(now), markup=False)

    def time_left(self, now: float) -> float | None:
        """Seconds left: from the recent rate of whole blocks, else (before a few blocks are
        complete) from the games per second."""
        left = self.eta.left(now)
        if left is None and (per_second := self.rate.per_second()):
            left = (self.total - self.done) / per_second
        return left

    def stop(self):
        self.end()

    # the standing lines

    def log_line(self, now: float) -> str:
        """The plain progress line: games, rate, time left, win shares, the leader against the
        next (W-L-D, Elo +- interval, LOS)."""
        per_second = self.rate.per_second()
        pace = (f", {per_second:.1f} games/s, {clock_text(self.time_left(now))} left"
                if per_second else "")
        text = f"{self.done}/{self.total} games{pace}; {self.standing()}"
        order = [e for _, e in sorted(((w / n if n else 0.0, e)
                                       for e, (n, w) in self.totals.items()), reverse=True)]
        pair = self.pairs.line(order[0], order[1]) if len(order) > 1 else None
        return text + (f"; {pair}" if pair else "")

    def standing(self) -> str:
        rows = sorted(((w / n if n else 0.0, e) for e, (n, w) in self.totals.items()), reverse=True)
        text = "  ".join(f"{e} {share:.3f}" for share, e in rows[:4])
        if len(rows) > 4:
            text += f"  (+{len(rows) - 4} more)"
        if self.faults:
            text += f"  faults {self.faults}"
        if self.failed:
            text += f"  failed {self.failed}"
        return f"win share: {text}" if rows else "win share: -"


class _Standing:
    def __init__(self, reporter):
        self.reporter = reporter

    def __rich__(self):
        return Text(self.reporter.standing(), overflow="ellipsis", no_wrap=True)


COMPILING = ("compiling the engine and bots for this machine: a first run on two cores takes "
             "15 to 30 s before its first game; later runs load them from the cache")


def starting_text() -> str:
    """What the workers do before the first game ends."""
    return "starting the workers: they load the compiled engine and bots" if engine.compiled() \
        else COMPILING


__all__ = ["TerminalView", "Reporter", "GameRate", "starting_text"]
