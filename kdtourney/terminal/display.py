"""The live terminal views of the commands that play chunk after chunk (`sprt`, `tune`,
`ladder`): the command line's side. The drivers (kdtourney.commands.sprt, tune, ladder) call a
display's methods and know nothing of the terminal."""

from __future__ import annotations

import math

from rich import box
from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from kdtourney.commands import tune as tuning
from kdtourney.terminal.progress import GameRate, TerminalView, starting_text
from kdtourney.terminal.tables import ladder_table
from kdtourney.text import shown
from kdtourney.tournament import sprt as sequential


class ChunkDisplay(TerminalView):
    """What the views of `sprt` and `tune` share: the games played since the last state (`game`),
    a live view of `__rich__` on a terminal once the header is printed (`go_live`), and otherwise
    a status line per state (`status`)."""

    def __init__(self, quiet: bool = False, console=None):
        super().__init__(quiet, console)
        self.rate = GameRate()
        self.pending = 0  # games since the last update (not yet in state.stored)
        self.printed = ""  # the last status line printed

    def __rich__(self):
        raise NotImplementedError  # what the live view shows: each display's own

    def go_live(self) -> None:
        self.starting = starting_text()
        if self.console.is_terminal:
            self.live = Live(self, console=self.console, refresh_per_second=4, transient=True)
            self.live.start()

    def game(self, spec, results, faults):
        self.rate.game()
        self.pending += 1

    def status(self, state, line: str) -> None:
        """The new `state` and its status `line`, printed where no live view shows it; a state
        told twice (the last chunk, then the decision) is printed once."""
        self.state, self.pending = state, 0
        if not self.quiet and self.live is None and line != self.printed:
            self.print(line)
            self.printed = line


class SprtDisplay(ChunkDisplay):
    """The terminal display of a test: a header, then a live line (games played, LLR with its
    bounds, Elo estimate) on a terminal, or a plain line per chunk otherwise; `quiet`: nothing."""

    def __init__(self, quiet: bool = False, console=None):
        super().__init__(quiet, console)
        self.state = None
        self.faults = 0

    def begin(self, tournament, test, state, workers):
        self.tournament, self.test, self.state = tournament, test, state
        if self.quiet:
            return
        self.print(sequential.header_line(tournament, test, state, workers))
        cap = sequential.cap_blocks(tournament)
        if cap < test.min_blocks:
            self.print(f"note: the cap allows {cap} blocks, fewer than the "
                       f"{test.min_blocks} the test needs before it decides")
        self.go_live()

    def __rich__(self):
        st = self.state
        if not self.rate.started:
            return Text(self.starting, overflow="ellipsis", no_wrap=True)
        per_second = self.rate.per_second()
        rate = f"  {per_second:.1f} games/s" if per_second else ""
        faults = f"  {self.faults} faults" if self.faults else ""
        elo = " ".join(f"{x:+.0f}" if math.isfinite(x) else "-" for x in (st.elo, st.lo, st.hi))
        elo = "Elo {} [{}, {}]".format(*elo.split())
        return Text(f"LLR {st.llr:.2f} [{st.lower:.2f}, {st.upper:.2f}]  {elo}  {st.blocks} "
                    f"blocks  {st.stored + self.pending} games{rate}{faults}",
                    overflow="ellipsis", no_wrap=True)

    def game(self, spec, results, faults):
        super().game(spec, results, faults)
        self.faults += len(faults) if results else 0  # a failed game's rows name its seats

    def update(self, state):
        self.status(state, sequential.status_line(state))


class TuneDisplay(ChunkDisplay):
    """The terminal view of a tune: a header, then (on a terminal) a live table of every
    parameter's value, start, range and current perturbation, with the games played; otherwise a
    plain line per batch. `quiet`: nothing. Also the runner's reporter for each batch."""

    def begin(self, table, tune, state, workers):
        self.table, self.tune, self.state = table, tune, state
        if self.quiet:
            return
        self.print(tuning.header_line(table, tune, state, workers))
        self.go_live()

    def __rich__(self):
        tune, st = self.tune, self.state
        k = max(1, st.done)
        per_second = self.rate.per_second()
        rate = f", {per_second:.1f} games/s" if per_second else ""
        if not self.rate.started:
            rate += f"; {self.starting}"
        table = Table(title=f"iteration {st.done}/{tune.schedule.iterations}, "
                            f"{st.stored + self.pending} games{rate}", title_justify="left",
                      box=box.SIMPLE_HEAD, pad_edge=False)
        for column in ("parameter", "now", "start", "min", "max", "c_k"):
            table.add_column(column, justify="left" if column == "parameter" else "right")
        now = tune.rounded(st.theta(tune))
        for p, v in zip(tune.params, now):
            table.add_row(p.name, str(v), f"{p.start:g}", f"{p.min:g}", f"{p.max:g}",
                          f"{float(tune.schedule.c_k(p, k)):.3g}")
        return table

    def update(self, state):
        self.status(state, tuning.status_line(self.tune, state))


class LadderDisplay(TerminalView):
    """The terminal while the ladder runs: on a terminal a live table (the list's first rows: Elo
    with its interval, games, version, status), the games per second and the newest entrants; else
    (and with `quiet`: nothing but errors) one line per entrant change. `board` takes the rows of
    the list when it is recomputed (they come from the report side: kdtourney.report.ladder)."""

    TOP = 15

    def __init__(self, quiet: bool = False, console=None):
        super().__init__(quiet, console)
        self.rows: list = []
        self.events: list = []
        self.played = 0
        self.rate = GameRate()

    def begin(self, config, folder, stored, workers):
        self.stored = stored
        self.starting = starting_text()
        if self.quiet:
            return
        sizes = "/".join(str(p) for p in config.players)
        self.print(f"ladder in {folder}: {sizes}-player blocks, seed {config.seed}, "
                   f"{workers} worker{'s' * (workers != 1)}"
                   + (f", {stored} games stored" if stored else ""))
        if self.console.is_terminal:
            self.live = Live(self, console=self.console, refresh_per_second=2, transient=True)
            self.live.start()

    def __rich__(self):
        rate = self.rate.per_second() or 0.0
        table = ladder_table(self.rows[:self.TOP], unranked="")
        more = len(self.rows) - self.TOP
        lines = [Text(self.starting if not self.rate.started else
                      f"{self.stored + self.played} games, {rate:.1f} games/s"
                      + (f"; {more} more entrants on the page" if more > 0 else ""))]
        lines += [Text(f"  {e}", overflow="ellipsis", no_wrap=True) for e in self.events[-3:]]
        return Group(table, *lines)

    def game(self, spec, results, faults):
        self.played += 1
        self.rate.game()

    def event(self, text):
        self.events.append(text)
        if not self.quiet and self.live is None:
            self.print(shown(text), markup=False)

    def board(self, rows):
        self.rows = list(rows)


__all__ = ["SprtDisplay", "TuneDisplay", "LadderDisplay"]
