"""The game service: the workers that play a command's games, for the life of the command.

`run`, `sprt`, `tune` and `ladder` are feeds: each decides which games to play next from the
results so far, and the one driver loop (kdtourney.commands.run.Driver) hands them to one service
(`open_service`), which plays them and hands back each finished game as it comes (`step`). The
service knows nothing of what a command does with a result: the driver stores it and the feed
decides what comes next. Nothing is restarted as a feed goes on: the worker processes, the
registry they loaded, the compiled kernels and the bot processes pooled in each worker
(sandboxed ones included) live until the command ends.

Two backends behind one interface (`join`, `submit`, `step`, `cancel`, `busy`, `queued`,
`close`):

- `LocalService`: worker processes forked by a fork server (multiprocessing's 'forkserver':
  never a fork of the command's process, which may run threads) that has imported kdtourney and
  Numba once (kdtourney.service.preload), so a worker starts in milliseconds, not a second or two;
  it takes the command's environment as it is when it starts. Before its first game every worker
  loads, or on a fresh install compiles, the kernels of the games (`workers.warm_up`; workers
  warming up together share the compiling out). Games go to workers in batches over one pipe per
  worker (guided: a batch is about a quarter of each worker's share of the games queued, at most
  MAX_BATCH, so batches shrink towards the end; a worker holds at most two). A shared array tells
  which game, seat and bot call each worker is in, and by when it must make its next step
  (`Heartbeat`).
- `DaskService` (kdtourney.service.cluster): tasks of batches on a Dask cluster, played by the
  same worker state (kdtourney.service.worker.WorkerState).

Entrants and versions
---------------------
A feed's new entrants join the running workers (`join`): a tune's new parameter values, a
ladder's new bot. Local or on Dask, a worker holds one kdtourney.service.worker.WorkerState, which
checks an entrant and warms up its bot's kernels once, as it joins. The service keeps every
entrant it was given, (label, spec), in the order they joined (`Entrants`), and sends a game's
seats as indexes into that list, so a game played again after a worker was lost has the same
bots. A new version of a bot cannot join: a module's import name depends only on its path and a
worker keeps it imported, so when the feed's registry has new sources the (idle) workers are ended
and the next games start new ones with the new sources (a ladder, once the games queued are
played; two versions of one bot are never in play at once).

Bots in their own process
-------------------------
TOML bots (and, with `isolate`, every Python entrant, through `kdtourney serve`) play in processes
of a `ProcessPool` per worker (kdtourney.external), kept for the worker's life. A worker
records its bots' process groups in a shared array: if it dies, the parent kills them (the bots
themselves die with it by PR_SET_PDEATHSIG, what they started would not); if the parent dies, the
worker gets SIGTERM and kills them. Sandboxed, a worker does not run the bot modules but takes
what they define from the parent's registry (`BotRegistry.listings`).

Dead and hung workers
---------------------
A worker that dies (os._exit, a segfault, the OOM killer) or hangs (a single call into a bot, or
the harness, making no progress for `hang_timeout` seconds, or for a decision of an in-process
bot under a clock, for what the clock allows it plus its margin and HANG_GRACE:
kdtourney.service.forfeit.hang_limit) is killed and replaced, and its unfinished games are played
again. kdtourney.service.forfeit decides, as for a Dask cluster, whether the game is played again
as it was, with the seat's bot forfeiting at that call, or handed back as a failed game.

A worker's memory: a worker is recycled (ended between games and replaced by a fresh process,
which loads the kernels from the cache) after RECYCLE_GAMES games, or once its resident memory
passes RECYCLE_MIB MiB, so a command that runs for days (a ladder) does not grow without bound.

Determinism: a game's bots, seeds and deal depend only on its GameSpec, so what is stored is the
same whatever the number of workers, the order the games finish in, recycling and interruptions
(timings and timeouts aside).
"""

from __future__ import annotations

import collections
import multiprocessing as mp
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass, replace
from multiprocessing.connection import wait

from kdtourney import interrupts
from kdtourney.service.forfeit import FAIL, ForfeitPolicy, hang_limit
from kdtourney.match.loop import MatchResult
from kdtourney.tournament.definition import ArenaError, HarnessError, Tournament
from kdtourney.service.worker import WorkerState, main_module_hidden
from kdtourney.external import QUIT_GRACE, ProcessPool, die_with_parent, kill_group
from kdtourney.service.fork_server import worker_context

MAX_BATCH = 32            # games per batch at most
DEFAULT_HANG_TIMEOUT = 600.0
NOTES_KEPT = 100          # notes a service keeps (a ladder runs for days)
RECYCLE_GAMES = 20_000    # a worker is replaced after this many games ...
RECYCLE_MIB = 2048        # ... or once its resident memory passes this (checked between batches)
SLOT = 6                  # status array per worker (Heartbeat): game, seat, call, deadline, limit,
_VERSION = 5              # and the version of that step (odd while it is written)
MAX_FAILED_STARTS = 3     # workers in a row failing to start stop the command (a broken setup,
                          # not a worker lost now and then over a ladder's days)
_GROUPS = 64              # bot process groups recorded per worker


@dataclass
class Finished:
    """A game the service is done with: its spec and result, or (result None) the message of a
    game that could not be finished (kdtourney.service.forfeit)."""

    spec: object
    result: MatchResult | None = None
    failed: str | None = None


class Entrants:
    """The entrants a service's workers know, (label, spec) in the order they joined: a feed's
    new entrants (a tune's new parameter values, a ladder's new bot) join the running workers, and
    a game's seats are sent as indexes into this list."""

    def __init__(self, tournament: Tournament):
        self.pairs: list[tuple] = []
        self.index: dict[tuple, int] = {}
        self.labels: list[str] = []  # by index, for the forfeit policy's notes and rows
        self.join(tournament)

    def join(self, tournament: Tournament) -> tuple[tuple, list]:
        """(the index of each entrant of `tournament`, the (label, spec) pairs new here)."""
        mapping, new = [], []
        for pair in zip(tournament.entrants, tournament.specs):
            if pair not in self.index:
                self.index[pair] = len(self.pairs)
                self.pairs.append(pair)
                self.labels.append(pair[0])
                new.append(pair)
            mapping.append(self.index[pair])
        return tuple(mapping), new

    def table(self, tournament: Tournament, pairs=None) -> Tournament:
        """`tournament` with these entrants (default: all known) as its own."""
        pairs = self.pairs if pairs is None else pairs
        return replace(tournament, entrants=tuple(p[0] for p in pairs),
                       specs=tuple(p[1] for p in pairs))


# --- the worker process ------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """A step a worker published whole (`Heartbeat`): the game (-1 none, -2 warming up), the seat
    and bot call it is in (-1: none, the harness's work), the monotonic time by which it must make
    its next step and the limit that deadline came from."""

    game: int
    seat: int
    call: int
    deadline: float
    limit: float


class Heartbeat:
    """Where a worker is, in its part of the status array the parent watches (`overdue`): each
    step (`Step`) is published whole, a version count odd while it is written, so the parent
    decides that a worker hung and charges the hang from one step, never from parts of two.

    The parent pairs nothing of one step with another: a fresh batch's game with the time its
    worker went idle, a clocked call's short limit with the time of the call before, the deadline
    of one step with the game or call the worker reached by the time it was killed."""

    def __init__(self, status, slot: int, hang_timeout: float, clock=time.monotonic):
        self.status, self.base = status, slot * SLOT
        self.hang_timeout, self.clock = hang_timeout, clock
        version = int(status[self.base + _VERSION])
        self.version = version + version % 2  # a writer killed mid-step left it odd
        self.current = -1  # the game it is in

    def _publish(self, game: int, seat: int, call: int, limit: float) -> None:
        status, base = self.status, self.base
        self.version += 1
        status[base + _VERSION] = self.version  # odd: being written
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
    progress). whole False: what the array holds, for a worker that is dead (killed between two
    writes, it left parts of a step)."""
    base = slot * SLOT
    version = status[base + _VERSION]
    values = status[base:base + 5]
    if whole and (version % 2 or status[base + _VERSION] != version):
        return None
    game, seat, call, deadline, limit = values
    return Step(int(game), int(seat), int(call), deadline, limit)


def overdue(status, slot: int, now: float) -> Step | None:
    """The step of the worker of `slot` if it made no step by that step's deadline, else None."""
    step = read_step(status, slot)
    return step if step is not None and now > step.deadline else None


def _worker_main(slot, conn, status, groups, sources, tournament_dict, warm, settings, isolate,
                 identities, listed, recycle, hang_timeout, environ):
    """A worker: receives batches [(game spec, forced faults)] and new entrants ('entrants',
    [(label, spec)], identities), sends ('game', index, MatchResult) per game, and ('tired',) once
    it should be recycled (`recycle`: games, MiB). Its bots in their
    own process are recorded in `groups` (their process groups, which the parent kills should
    this worker die) and stopped when it ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business
    os.environ.clear()  # the parent's environment now, not the fork server's at its start
    os.environ.update(environ)
    pool = ProcessPool(settings, track=lambda pids: _record_groups(groups, slot, pids))
    _exit_with_parent(pool)
    try:
        _work(slot, conn, Heartbeat(status, slot, hang_timeout), pool, sources, tournament_dict,
              warm, isolate, identities, listed, recycle)
    finally:
        pool.close()
    _quick_exit(conn)


def _work(slot, conn, beat, pool, sources, tournament_dict, warm, isolate, identities, listed,
          recycle):
    import platform

    try:
        state = WorkerState(sources, tournament_dict, isolate, listed, identities, pool, beat,
                            machine=f"{platform.node()} (worker {slot})", local=True, warm=warm,
                            first=slot)
        beat.idle()
        conn.send(("ready",))
    except ArenaError as exc:  # it did not load what the store recorded
        conn.send(("refused", str(exc)))
        return
    except BaseException:  # noqa: BLE001 - reported to the parent, which stops
        conn.send(("fatal", traceback.format_exc()))
        return

    played, tired = 0, False
    max_games, max_mib = recycle
    while True:
        beat.idle()
        try:
            batch = conn.recv()
        except EOFError:
            batch = None
        if batch is None:
            return
        if batch[0] == "entrants":  # new entrants join: checked, warmed up, their bots made
            try:
                state.join(*batch[1:])
            except ArenaError as exc:
                conn.send(("refused", str(exc)))
                return
            except BaseException:  # noqa: BLE001 - a harness bug: the parent stops the tournament
                conn.send(("fatal", traceback.format_exc()))
                return
            continue
        for spec, forced in batch:
            try:
                result = state.play(spec, forced)
            except BaseException:  # noqa: BLE001 - a harness bug: the parent stops the tournament
                conn.send(("fatal", f"game {spec.game}: " + traceback.format_exc()))
                return
            conn.send(("game", spec.game, result))
            played += 1
        if not tired and (played >= max_games or resident_mib() > max_mib):
            tired = True
            conn.send(("tired",))  # the parent sends no more and ends this worker when it is idle


def resident_mib() -> float:
    """This process's resident memory in MiB (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def _record_groups(groups, slot, pids):
    """Write a worker's bot process groups to its part of the shared array (0: none). A pool
    holds at most its idle bound plus a table's seats, far fewer than the slots."""
    if len(pids) > _GROUPS:
        raise RuntimeError(f"{len(pids)} bot processes in one worker, more than the {_GROUPS} "
                           "it can record for cleanup")
    base = slot * _GROUPS
    for i in range(_GROUPS):
        groups[base + i] = pids[i] if i < len(pids) else 0


def _kill_groups(groups, slot):
    """Kill the recorded bot process groups of a worker (dead, or gone past its time to exit)."""
    base = slot * _GROUPS
    for i in range(_GROUPS):
        if groups[base + i] > 0:
            kill_group(int(groups[base + i]))
            groups[base + i] = 0


def _exit_with_parent(pool):
    """Should the parent die (even by SIGKILL), this worker gets SIGTERM: it kills its bots' process
    groups and exits."""
    def handler(signum, frame):
        pool.kill_all()
        os._exit(1)

    signal.signal(signal.SIGTERM, handler)
    # the fork server is this process's parent, and it ends when the command's process does
    die_with_parent(signal.SIGTERM)
    parent = mp.parent_process()  # the command's process
    if parent is not None and not parent.is_alive():
        handler(signal.SIGTERM, None)


def _quick_exit(conn):
    """End the worker at once: its results are sent and it owns nothing else; the interpreter's
    normal exit (finalizers of Numba and friends) takes about a second."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    conn.close()
    os._exit(0)


# --- the parent's side -------------------------------------------------------------------------

class _Worker:
    def __init__(self, slot, process, conn):
        self.slot = slot
        self.process = process
        self.conn = conn
        self.inflight: list[int] = []  # game indexes sent, in the order the worker plays them
        self.ready = False
        self.tired = False  # to be recycled once idle


class LocalService:
    """Worker processes on this machine playing the games of `tournament` for as long as the
    service is open (a context manager; `close` ends them and their bots).

    registry: the BotRegistry the entrants were checked against (its sources go to the workers);
    workers: processes; settings, isolate: how bots in their own process run
    (kdtourney.external.ProcessSettings; every bot in its own); identities: {entrant:
    identity} as the store records them, which every worker checks what it loads against;
    warm: warm up before the first game; on_note: called with each note (a worker lost, ...).
    """

    def __init__(self, tournament: Tournament, registry, *, workers: int, settings, isolate,
                 identities, hang_timeout: float, warm: bool = True, on_note=None,
                 recycle: tuple = (RECYCLE_GAMES, RECYCLE_MIB)):
        self.tournament = tournament
        self.workers = workers
        self.settings, self.isolate, self.identities = settings, isolate, identities
        self.hang_timeout = hang_timeout
        self.warm = warm
        self.on_note = on_note
        self.recycle = recycle
        self.notes = collections.deque(maxlen=NOTES_KEPT)  # the latest (on_note has them all)
        self.losses = 0          # workers that died or hung
        self.recycled = 0        # workers ended for their age or memory, and replaced
        self.reloads = 0         # times the workers were ended for new sources (join)
        self.specs: dict = {}    # game index -> GameSpec, of the games submitted and not done
        self.sent: dict = {}     # ... as sent to the workers: seats index self.entrants
        self.pending: collections.deque = collections.deque()  # game indexes not yet sent
        self.entrants = Entrants(tournament)
        self.mapping = tuple(range(len(tournament.entrants)))  # the last table's seats
        self.policy = ForfeitPolicy(self.sent, self.entrants.labels)
        self.failed_starts = 0   # workers in a row that died before they were ready
        self.finished: list[Finished] = []
        self.failure: HarnessError | None = None  # a worker's bug, raised once the games
        self.pool: list[_Worker] = []             # finished before it are handed back
        self.sources = registry.source_files()
        self.listed = None if settings.sandbox is None else registry.listings()
        self.tdict = tournament.to_dict()
        self.ctx = worker_context()
        self.status = self.ctx.RawArray("d", SLOT * workers)
        for slot in range(workers):
            Heartbeat(self.status, slot, hang_timeout).idle()
        self.groups = self.ctx.RawArray("q", _GROUPS * workers)

    # the interface every backend has

    def join(self, tournament: Tournament, identities: dict, registry=None) -> None:
        """Make `tournament` the table of the games submitted from now on: its entrants that
        the workers do not know join them (each worker checks their code against `identities`,
        {label: identity}, and makes their bots from then on); nothing restarts.

        registry: the feed's registry when it may have changed (a ladder's folders rescanned).
        A module's import name depends only on its path and a worker keeps it imported, so a new
        version cannot join a worker that loaded the old one: when the sources changed, the
        workers (idle: the feed waits for the games queued to be played) are ended, and the next games
        start new ones with the new sources, knowing only this table's entrants."""
        if registry is not None and self.changed(registry):
            if self.busy:
                raise RuntimeError("the bots' sources changed while games were being played")
            self.close()
            self.sources = registry.source_files()
            self.listed = None if self.settings.sandbox is None else registry.listings()
            self.entrants = Entrants(tournament)
            self.policy = ForfeitPolicy(self.sent, self.entrants.labels)
            self.identities = dict(identities)
            self.tdict = tournament.to_dict()
            self.tournament = tournament
            self.reloads += 1
        self.mapping, new = self.entrants.join(tournament)
        if not new:
            return
        self.identities = dict(self.identities, **identities)
        self.tdict = self.entrants.table(self.tournament).to_dict()
        for worker in self.pool:
            try:
                worker.conn.send(("entrants", new, identities))
            except (BrokenPipeError, OSError):
                pass  # it died: its replacement starts with every entrant

    def changed(self, registry) -> bool:
        """Whether `registry` has other bot sources than the workers' (`join` ends them)."""
        listed = None if self.settings.sandbox is None else registry.listings()
        return registry.source_files() != self.sources or listed != self.listed

    def submit(self, specs) -> None:
        """Queue games (GameSpecs of the table last joined) to play; the first call starts the
        workers."""
        for spec in specs:
            self.specs[spec.game] = spec
            self.sent[spec.game] = replace(spec, seats=tuple(self.mapping[e] for e in spec.seats))
            self.pending.append(spec.game)
        if not self.pool and self.pending:
            # they share the compiling out
            self.pool = [self._spawn(slot, self.warm) for slot in range(self.workers)]

    @property
    def queued(self) -> int:
        """Games submitted and not yet sent to a worker."""
        return len(self.pending)

    @property
    def busy(self) -> bool:
        """Games are queued or being played."""
        return bool(self.pending) or any(w.inflight for w in self.pool)

    def cancel(self) -> list:
        """Drop the games not yet sent to a worker (those being played still finish); returns
        their GameSpecs."""
        dropped = [self._forget(g) for g in self.pending]
        self.pending.clear()
        return dropped

    def step(self, timeout: float = 0.5) -> list[Finished]:
        """Send queued games to idle workers, wait up to `timeout` seconds for news, and return
        the games finished since the last call (a dead or hung worker is replaced on the way)."""
        interrupts.check()
        if self.failure is not None:
            raise self.failure
        for worker in self.pool:
            self._feed(worker)
        waitables = {}
        for worker in self.pool:
            waitables[worker.conn] = worker
            waitables[worker.process.sentinel] = worker
        for ready in wait(list(waitables), timeout=timeout):
            worker = waitables[ready]
            if worker not in self.pool:
                continue  # already replaced in this round
            if ready is worker.conn:
                try:
                    while self.failure is None and worker.conn.poll():
                        self._handle(worker, worker.conn.recv())
                except (EOFError, OSError):
                    self._lose(worker, f"died (exit code {_exit_code(worker.process)})")
            elif not worker.process.is_alive() or worker.process.exitcode is not None:
                self._lose(worker, f"died (exit code {_exit_code(worker.process)})")
            if self.failure is not None:  # the games finished before it first
                done, self.finished = self.finished, []
                if not done:
                    raise self.failure
                return done
        now = time.monotonic()
        for worker in list(self.pool):
            step = overdue(self.status, worker.slot, now)
            if step is not None:
                self._lose(worker, f"hung (no progress for {step.limit:g} s)", step)
            elif worker.tired and not worker.inflight:
                self._retire(worker)
        done, self.finished = self.finished, []
        return done

    def close(self) -> None:
        """End the workers (each quits its bots first) and whatever they left behind."""
        for worker in self.pool:
            try:
                worker.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 2.0 + QUIT_GRACE  # a worker quits its bots first
        for worker in self.pool:
            self._end(worker, max(0.0, deadline - time.monotonic()))
        self.pool = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # the workers

    def _spawn(self, slot, warm_first):
        parent_conn, child_conn = self.ctx.Pipe(duplex=True)
        process = self.ctx.Process(
            target=_worker_main, name=f"kdtourney-worker-{slot}", daemon=True,
            args=(slot, child_conn, self.status, self.groups, self.sources, self.tdict,
                  warm_first, self.settings, self.isolate, self.identities, self.listed,
                  self.recycle, self.hang_timeout, dict(os.environ)))
        with main_module_hidden():
            process.start()
        child_conn.close()
        return _Worker(slot, process, parent_conn)

    def _end(self, worker, grace):
        worker.process.join(grace)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join(2)
        worker.conn.close()
        _kill_groups(self.groups, worker.slot)

    def _note(self, text):
        self.notes.append(text)
        if self.on_note is not None:
            self.on_note(text)

    def _handle(self, worker, message):
        kind = message[0]
        if kind == "game":
            _, game_index, result = message
            if game_index in worker.inflight:
                worker.inflight.remove(game_index)
                self.finished.append(Finished(self._forget(game_index), result))
        elif kind == "ready":
            worker.ready = True
            self.failed_starts = 0
        elif kind == "tired":
            worker.tired = True
        elif kind == "fatal":
            self.failure = HarnessError(
                f"a worker failed: {message[1].strip().splitlines()[-1]}", trace=message[1])
        elif kind == "refused":  # it did not load what the store recorded
            raise ArenaError(message[1])

    def _forget(self, game):
        """Done with `game` (handed back or cancelled): its GameSpec, no longer kept."""
        self.sent.pop(game)
        self.policy.forget(game)
        return self.specs.pop(game)

    def _drain(self, worker):
        """Read whatever a (possibly dead) worker has sent."""
        try:
            while self.failure is None and worker.conn.poll():
                self._handle(worker, worker.conn.recv())
        except (EOFError, OSError):
            pass

    def _retire(self, worker):
        """Replace an idle worker that has played its share or grown too big."""
        self.recycled += 1
        try:
            worker.conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self._end(worker, 2.0 + QUIT_GRACE)
        self.pool[self.pool.index(worker)] = self._spawn(worker.slot, False)

    def _lose(self, worker, why, step: Step | None = None):
        """The worker died or hung (at `step`, found overdue): replace it and requeue its games,
        blaming the one it was in."""
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join(5)
        self._drain(worker)  # after the kill: every game it finished, none after
        if self.failure is not None:  # it stopped on a bug of ours: not a loss to recover from
            return
        self.losses += 1
        worker.conn.close()
        _kill_groups(self.groups, worker.slot)  # its bots died with it; what they started goes now
        if not worker.ready:
            self.failed_starts += 1
            if self.failed_starts > MAX_FAILED_STARTS:
                raise ArenaError(f"worker processes keep failing to start (last: {why})")
        step = step or read_step(self.status, worker.slot, whole=False)
        current, seat, call = step.game, step.seat, step.call
        if current == -1 and worker.inflight:  # waiting for games: the oldest unsent one was lost
            current, seat, call = worker.inflight[0], -1, -1
        requeue = list(worker.inflight)
        if current in worker.inflight:
            action, what = self.policy.lost(current, seat, call, why, hung=why.startswith("hung"))
            if action == FAIL:
                requeue.remove(current)
                message = self.policy.failed_message(current)
                self.finished.append(Finished(self._forget(current), failed=message))
            self._note(f"worker {worker.slot} {why} in game {current}; {what}")
        for g in reversed(requeue):
            self.pending.appendleft(g)
        Heartbeat(self.status, worker.slot, self.hang_timeout).idle()
        self.pool[self.pool.index(worker)] = self._spawn(worker.slot, False)

    def _feed(self, worker):
        # guided scheduling: batches shrink as the games run out, so no worker is left with a
        # long queue while the others are idle at the end; a worker holds at most two batches
        if worker.tired:
            return
        pending = self.pending
        size = max(1, min(MAX_BATCH, len(pending) // (4 * len(self.pool))))
        while pending and len(worker.inflight) < 2 * size:
            batch = []
            while pending and len(batch) < size:
                g = pending.popleft()
                batch.append((self.sent[g], self.policy.forced(g)))
            try:
                worker.conn.send(batch)
            except (BrokenPipeError, OSError):
                for spec, _ in reversed(batch):
                    pending.appendleft(spec.game)
                return
            worker.inflight += [spec.game for spec, _ in batch]


def _exit_code(process) -> str:
    process.join(1)
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return f"{code}, {signal.Signals(-code).name}"
        except ValueError:
            return str(code)
    return str(code)


