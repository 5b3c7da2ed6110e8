"""A ladder's list and page while it plays, built beside play, and the last one at its end.

    with LadderPages(display, write) as pages:
        play_ladder(..., display=display, after_chunk=pages.after_chunk)
    board = final_page(folder, write)

After a chunk is queued, the page built beside play (kdtourney.commands.beside, at the lowest
priority) is taken: its list goes to the display, its page is written here (the process beside
play, ended at once when play ends, never writes one); the next starts PAGE_SECONDS after the
last started, and not before PAGE_SHARE times its work has passed since it ended, so it takes at
most about a tenth of a core. The ladder never waits for a page.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

from kdtourney.commands.beside import beside_play
from kdtourney.report.ladder import Board, ladder_board, ladder_page, write_ladder_page
from kdtourney.report.page import REPORT_FILE, write_page
from kdtourney.store import reader

PAGE_SECONDS = 5.0  # between the starts of two pages
PAGE_SHARE = 9      # after a page, wait this many times its work before the next


class LadderPages:
    """The page built beside play after each chunk (`after_chunk`), its list shown on `display`
    (a kdtourney.terminal.display.LadderDisplay), its page written with `write`."""

    def __init__(self, display, write: bool):
        self.display, self.write = display, write
        self.due = 0.0         # when the next page may start (time.monotonic)
        self.building = None   # the page being built beside play (a Future)
        self.beside: Any = None  # the executor beside play, once entered
        self.ending = contextlib.ExitStack()

    def __enter__(self) -> LadderPages:
        self.beside = self.ending.enter_context(beside_play())
        return self

    def __exit__(self, *exc) -> None:
        self.ending.close()

    def after_chunk(self, folder) -> None:
        """Take the page built beside play if it is done, and start the next when it is due."""
        if self.building is not None and self.building.done():
            rows, html, seconds = self.building.result()
            self.display.board(rows)
            if html is not None:
                write_page(html, Path(folder) / REPORT_FILE)
            self.building = None
            self.due = max(self.due, time.monotonic() + PAGE_SHARE * seconds)
        if self.building is None and time.monotonic() >= self.due:
            self.building = self.beside.submit(build_page, str(folder), self.write)
            self.due = time.monotonic() + PAGE_SECONDS


def build_page(folder: str, write: bool) -> tuple[list, str | None, float]:
    """In the process beside play: the ladder's list (and, with `write`, its page marked running)
    from what is stored; returns the list's rows for the terminal, the page (or None) and the
    CPU seconds it took."""
    started = time.process_time()
    with reader(folder):  # the list and the page of one state of the store
        board = ladder_board(folder)
        html = ladder_page(folder, board, running=True) if write else None
    return board.rows, html, time.process_time() - started


def final_page(folder, write: bool) -> Board:
    """The ladder's list from everything stored, and with `write` its last page (not running)."""
    board = ladder_board(folder)
    if write:
        write_ladder_page(folder, board, running=False)
    return board


__all__ = ["LadderPages", "build_page", "final_page", "PAGE_SECONDS", "PAGE_SHARE"]
