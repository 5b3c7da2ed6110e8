"""The bot processes of one worker process (`ProcessPool`), and the start-up check.

A game borrows the processes it needs (`ExternalBot`), one per entrant and seat in use, gives them
back at `close`, and the next game reuses them, so a slow start (a JVM) is paid once. A process
that crashed, timed out or broke the protocol is killed and a new one started for the next game.
`ProcessPool.close` sends `quit`, waits 2 s, then kills what is left. Sandboxed, a process never
plays a deal twice: the games of a duplicate block share their deal (in other seats), and a bot
that remembered it would know the order of the undrawn dominoes; such a game gets another process
(a bot sandbox cannot tell another anything). Bots of kdtourney or of the installation (trusted:
the harness runs their code anyway) keep one process. At most
`ProcessSettings.idle_processes` processes wait idle: past that, the one idle the longest is
asked to quit (and killed if it does not), so a round robin of many entrants does not keep a
process for every entrant and seat ever played on a worker.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import tempfile
import time

from kdtourney.external import private
from kdtourney.external.bot import ExternalBot
from kdtourney.external.declaration import Program
from kdtourney.external.launch import kill_group
from kdtourney.external.process import (
    QUIT_GRACE,
    BotFailure,
    BotProcess,
    ProcessSettings,
    StartupError,
)

EVICT_GRACE = 0.5   # s an evicted process has to exit after quit before it is killed


def log_name(entrant: str) -> str:
    """The log file of an entrant: its label with what a file name cannot hold replaced."""
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", entrant) + ".log"


class ProcessPool:
    """The bot processes of one worker process.

    track: called with the list of the live bots' process groups whenever it changes (the local
    runner's parent kills them if this worker dies). `game`: the game index being played, for the
    `game` messages and the logs. An entrant is its label (`random#2` in an A/A test): its
    processes are its own, and so is its log file.
    """

    def __init__(self, settings: ProcessSettings | None = None, track=None):
        self.settings = settings or ProcessSettings()
        self.track = track
        self.game = 0
        self.deals: tuple = ()  # the deal seeds of the game being played
        # idle processes, least recently given back first: BotProcess -> (program, entrant)
        self._idle: collections.OrderedDict = collections.OrderedDict()
        self._all: list[BotProcess] = []
        self._tmp: str | None = None

    def file(self, name: str, text: str) -> str:
        """A file of this pool's temporary folder (removed at close, in the harness's private
        folder), written once, readable by all (the folders by this user only)."""
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="pool-", dir=private.folder())
        path = os.path.join(self._tmp, name)
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            # readable by a sandboxed bot, which is another user as root (the folder is not)
            os.chmod(path, 0o644)
        return path

    def bot(self, program: Program, entrant: str, options: dict) -> ExternalBot:
        """A new ExternalBot for one game of `entrant` (its label)."""
        return ExternalBot(self, program, entrant, options)

    def new_game(self, game: int, deals: tuple = ()) -> None:
        """The game played next: its index and its deal seeds."""
        self.game, self.deals = game, tuple(deals)

    def lend(self, program: Program, entrant: str) -> BotProcess:
        """A live process of this entrant, started if none is idle (not started yet: the bot's
        first `setup` starts it); sandboxed, one that has not played this game's deals (unless
        the program is trusted)."""
        for process in reversed([p for p, key in self._idle.items() if key == (program, entrant)]):
            if self.settings.sandbox is not None and not program.trusted \
                    and not process.deals.isdisjoint(self.deals):
                continue
            del self._idle[process]
            if process.alive():
                return process
            self._retire(process)
        log = None if self.settings.log_dir is None else os.path.join(self.settings.log_dir,
                                                                      log_name(entrant))
        process = BotProcess(program, self.settings, log)
        self._all.append(process)
        return process

    def started(self, process: BotProcess) -> None:
        self._tracked()

    def give_back(self, program: Program, entrant: str, process: BotProcess) -> None:
        if not process.alive():
            self._retire(process)
            return
        if process.confinement is not None:  # its game is over: so is all it started
            assert process.pid is not None  # alive: started
            process.confinement.end_game(process.pid)
        self._idle[process] = (program, entrant)
        while len(self._idle) > self.settings.idle_processes:  # the least recently used goes
            oldest, _ = self._idle.popitem(last=False)
            oldest.quit()
            self._retire(oldest, grace=EVICT_GRACE)

    @property
    def idle(self) -> int:
        """How many processes wait idle."""
        return len(self._idle)

    @property
    def idle_processes(self) -> list[BotProcess]:
        """The processes waiting idle, the least recently given back first."""
        return list(self._idle)

    def _retire(self, process: BotProcess, grace: float = 0) -> None:
        process.stop(grace=grace)
        if process in self._all:
            self._all.remove(process)
        self._tracked()

    def _tracked(self):
        if self.track is not None:
            self.track([p.pid for p in self._all if p.proc is not None and p.exit_code() is None])

    def kill_all(self) -> None:
        """Kill every bot's process group now, without a word (this process is going away)."""
        for process in self._all:
            if process.pid is not None and not process.stopped:
                kill_group(process.pid)
                if process.confinement is not None:  # a frozen v1 cgroup holds them otherwise
                    process.confinement.kill()

    def close(self) -> None:
        """quit to every bot, 2 s to exit, then kill what is left (and their children)."""
        processes, self._all = self._all, []
        self._idle.clear()
        for process in processes:
            process.quit()
        deadline = time.monotonic() + QUIT_GRACE
        for process in processes:
            process.stop(grace=max(0.0, deadline - time.monotonic()))
        if self.track is not None:
            self.track([])
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --- the start-up check ------------------------------------------------------------------------

def check_programs(programs, settings: ProcessSettings) -> dict:
    """Start each Program once, exchange hello, quit: {program: its hello}. StartupError naming the
    program's origin for the first one that does not start or answer. All are started at once, so
    the check takes about the slowest start."""
    processes = [BotProcess(program, settings) for program in dict.fromkeys(programs)]
    try:
        for process in processes:
            _named(process, process.spawn)
        return {process.program: _named(process, process.handshake) for process in processes}
    finally:
        for process in processes:
            process.quit()
        for process in processes:
            process.stop()


def _named(process: BotProcess, step):
    try:
        return step()
    except BotFailure as exc:
        stderr = f" (stderr: {' | '.join(exc.stderr.splitlines()[-3:])})" if exc.stderr else ""
        raise StartupError(f"{process.program.origin}: the bot {exc}{stderr}") from None
