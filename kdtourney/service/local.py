"""The game service on this machine: worker processes that play a command's games for its life.

    LocalService(tournament, registry, workers=N, settings=, isolate=, identities=,
                 hang_timeout=, warm=True, on_note=None)
        join, submit, step, cancel, busy, queued, close (kdtourney.service.backend.GameService);
        losses, recycled, reloads: workers lost (died or hung), recycled, ended for new sources
    WorkerProcess           the parent's handle of one worker (kdtourney.service.local_worker)
    MAX_BATCH, RECYCLE_GAMES, RECYCLE_MIB, MAX_FAILED_STARTS

Workers fork from a fork server (kdtourney.service.fork_server) and take games in batches over
a pipe each; a dead or hung worker (kdtourney.service.heartbeat) is replaced and its games played
again as kdtourney.service.forfeit decides; a worker is recycled past RECYCLE_GAMES games or
RECYCLE_MIB MiB. ArenaError when workers keep failing to start or refuse what the store
recorded; a worker's bug is raised as a HarnessError. Why it works so: docs/clusters.md.
"""

from __future__ import annotations

import os
import signal
import time
from multiprocessing.connection import Connection, wait

from kdtourney import interrupts
from kdtourney.external import QUIT_GRACE
from kdtourney.service.backend import Finished, GameService
from kdtourney.service.forfeit import FAIL
from kdtourney.service.fork_server import worker_context
from kdtourney.service.heartbeat import SLOT, Heartbeat, Step, overdue, read_step
from kdtourney.service.local_worker import GROUPS, kill_groups, worker_main
from kdtourney.service.worker import main_module_hidden
from kdtourney.tournament.definition import ArenaError, HarnessError, Tournament

MAX_BATCH = 32            # games per batch at most
RECYCLE_GAMES = 20_000    # a worker is replaced after this many games ...
RECYCLE_MIB = 2048        # ... or once its resident memory passes this (checked between batches)
MAX_FAILED_STARTS = 3     # workers in a row failing to start stop the command (a broken setup,
                          # not a worker lost now and then over a ladder's days)


class WorkerProcess:
    """The parent's handle of a worker: its slot (in the status and groups arrays), process and
    pipe, the games sent to it in the order it plays them, whether it said it is ready, and
    whether it is tired (to be recycled once idle)."""

    def __init__(self, slot, process, conn):
        self.slot, self.process = slot, process
        self.conn: Connection = conn
        self.inflight: list[int] = []
        self.ready = False
        self.tired = False


class LocalService(GameService):
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
        super().__init__(tournament, on_note)
        self.workers = workers
        self.settings, self.isolate, self.identities = settings, isolate, identities
        self.hang_timeout = hang_timeout
        self.warm = warm
        self.recycle = recycle
        self.recycled = 0        # workers ended for their age or memory, and replaced
        self.reloads = 0         # times the workers were ended for new sources (join)
        self.failed_starts = 0   # workers in a row that died before they were ready
        self.failure: HarnessError | None = None  # a worker's bug, raised once the games
        self.pool: list[WorkerProcess] = []       # finished before it are handed back
        self.sources = registry.source_files()
        self.listed = None if settings.sandbox is None else registry.listings()
        self.tdict = tournament.to_dict()
        self.ctx = worker_context()
        self.status = self.ctx.RawArray("d", SLOT * workers)
        for slot in range(workers):
            Heartbeat(self.status, slot, hang_timeout).idle()
        self.groups = self.ctx.RawArray("q", GROUPS * workers)

    # the interface every backend has

    def join(self, tournament: Tournament, identities: dict, registry=None) -> None:
        """Make `tournament` the table of the games submitted from now on: its entrants that
        the workers do not know join them (each worker checks their code against `identities`,
        {label: identity}, and makes their bots from then on); nothing restarts.

        registry: the feed's registry when it may have changed (a ladder's folders rescanned):
        when its sources changed, the (idle) workers are ended and the next games start new ones
        with the new sources, knowing only this table's entrants. HarnessError if games are
        being played then."""
        if registry is not None and self.changed(registry):
            if self.busy:
                raise HarnessError("the bots' sources changed while games were being played")
            self.close()
            self.sources = registry.source_files()
            self.listed = None if self.settings.sandbox is None else registry.listings()
            self.renew(tournament)
            self.identities = dict(identities)
            self.tdict = tournament.to_dict()
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
        workers (they share the compiling out)."""
        super().submit(specs)
        if not self.pool and self.pending:
            self.pool = [self.spawn(slot, self.warm) for slot in range(self.workers)]

    @property
    def busy(self) -> bool:
        """Games are queued or being played."""
        return bool(self.pending) or any(w.inflight for w in self.pool)

    def step(self, timeout: float = 0.5) -> list[Finished]:
        """Send queued games to idle workers, wait up to `timeout` seconds for news, and return
        the games finished since the last call (a dead or hung worker is replaced on the way)."""
        interrupts.check()
        if self.failure is not None:
            raise self.failure
        for worker in self.pool:
            self.feed(worker)
        if not self.receive(timeout):
            self.watch(time.monotonic())
        done, self.finished = self.finished, []
        if self.failure is not None and not done:  # the games finished before it first
            raise self.failure
        return done

    def receive(self, timeout: float) -> bool:
        """Take in what the workers sent within `timeout` seconds, and the deaths; True once a
        worker's bug stopped the service (`failure`)."""
        waitables: dict = {}
        for worker in self.pool:
            waitables[worker.conn] = worker
            waitables[worker.process.sentinel] = worker
        for ready in wait(list(waitables), timeout=timeout):
            worker = waitables[ready]
            if worker not in self.pool:
                continue  # already replaced in this round
            conn = worker.conn
            if ready is conn:
                try:
                    while self.failure is None and worker.conn.poll():
                        self.handle(worker, worker.conn.recv())
                except (EOFError, OSError):
                    self.lose(worker, f"died (exit code {exit_code(worker.process)})")
            elif not worker.process.is_alive() or worker.process.exitcode is not None:
                self.lose(worker, f"died (exit code {exit_code(worker.process)})")
            if self.failure is not None:
                return True
        return False

    def watch(self, now: float) -> None:
        """Replace the workers past the deadline of their step at `now`, and the tired idle ones."""
        for worker in list(self.pool):
            step = overdue(self.status, worker.slot, now)
            if step is not None:
                self.lose(worker, f"hung (no progress for {step.limit:g} s)", step)
            elif worker.tired and not worker.inflight:
                self.retire(worker)

    def close(self) -> None:
        """End the workers (each quits its bots first) and whatever they left behind."""
        for worker in self.pool:
            try:
                worker.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 2.0 + QUIT_GRACE  # a worker quits its bots first
        for worker in self.pool:
            self.end(worker, max(0.0, deadline - time.monotonic()))
        self.pool = []

    # the workers

    def spawn(self, slot: int, warm_first: bool) -> WorkerProcess:
        """Start the worker of `slot` (warming up before its first game if `warm_first`)."""
        parent_conn, child_conn = self.ctx.Pipe(duplex=True)
        process = self.ctx.Process(
            target=worker_main, name=f"kdtourney-worker-{slot}", daemon=True,
            args=(slot, child_conn, self.status, self.groups, self.sources, self.tdict,
                  warm_first, self.settings, self.isolate, self.identities, self.listed,
                  self.recycle, self.hang_timeout, dict(os.environ)))
        with main_module_hidden():
            process.start()
        child_conn.close()
        return WorkerProcess(slot, process, parent_conn)

    def end(self, worker: WorkerProcess, grace: float) -> None:
        """Wait `grace` seconds for a worker told to quit, kill it if need be, and its bots."""
        worker.process.join(grace)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join(2)
        worker.conn.close()
        kill_groups(self.groups, worker.slot)

    def handle(self, worker: WorkerProcess, message: tuple) -> None:
        """Take in one message of a worker (local_worker's)."""
        kind = message[0]
        if kind == "game":
            _, game_index, result = message
            if game_index in worker.inflight:
                worker.inflight.remove(game_index)
                self.finished.append(Finished(self.forget(game_index), result))
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

    def drain(self, worker: WorkerProcess) -> None:
        """Read whatever a (possibly dead) worker has sent."""
        try:
            while self.failure is None and worker.conn.poll():
                self.handle(worker, worker.conn.recv())
        except (EOFError, OSError):
            pass

    def retire(self, worker: WorkerProcess) -> None:
        """Replace an idle worker that has played its share or grown too big."""
        self.recycled += 1
        try:
            worker.conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.end(worker, 2.0 + QUIT_GRACE)
        self.pool[self.pool.index(worker)] = self.spawn(worker.slot, False)

    def lose(self, worker: WorkerProcess, why: str, step: Step | None = None) -> None:
        """The worker died or hung (at `step`, found overdue): replace it and requeue its games,
        blaming the one it was in."""
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join(5)
        self.drain(worker)  # after the kill: every game it finished, none after
        if self.failure is not None:  # it stopped on a bug of ours: not a loss to recover from
            return
        self.losses += 1
        worker.conn.close()
        kill_groups(self.groups, worker.slot)  # its bots died with it; what they started goes now
        if not worker.ready:
            self.failed_starts += 1
            if self.failed_starts > MAX_FAILED_STARTS:
                raise ArenaError(f"worker processes keep failing to start (last: {why})")
        step = step or read_step(self.status, worker.slot, whole=False)
        assert step is not None  # whole=False always reads one
        current, seat, call = step.game, step.seat, step.call
        if current == -1 and worker.inflight:  # waiting for games: the oldest unsent one was lost
            current, seat, call = worker.inflight[0], -1, -1
        requeue = list(worker.inflight)
        if current in worker.inflight:
            action, what = self.policy.lost(current, seat, call, why, hung=why.startswith("hung"))
            if action == FAIL:
                requeue.remove(current)
                message = self.policy.failed_message(current)
                self.finished.append(Finished(self.forget(current), failed=message))
            self.note(f"worker {worker.slot} {why} in game {current}; {what}")
        for g in reversed(requeue):
            self.pending.appendleft(g)
        Heartbeat(self.status, worker.slot, self.hang_timeout).idle()
        self.pool[self.pool.index(worker)] = self.spawn(worker.slot, False)

    def feed(self, worker: WorkerProcess) -> None:
        """Send queued games to `worker`, guided: batches shrink as the games run out, so no
        worker is left with a long queue while the others are idle at the end; a worker holds at
        most two batches."""
        if worker.tired:
            return
        pending = self.pending
        size = max(1, min(MAX_BATCH, len(pending) // (4 * len(self.pool))))
        while pending and len(worker.inflight) < 2 * size:
            batch: list = []
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


def exit_code(process) -> str:
    """A dead process's exit code, with its signal's name ('-9, SIGKILL')."""
    process.join(1)
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return f"{code}, {signal.Signals(-code).name}"
        except ValueError:
            return str(code)
    return str(code)


__all__ = ["LocalService", "WorkerProcess", "exit_code", "MAX_BATCH", "RECYCLE_GAMES",
           "RECYCLE_MIB", "MAX_FAILED_STARTS"]
