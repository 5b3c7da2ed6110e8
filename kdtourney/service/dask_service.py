"""The game service on a Dask cluster (`--scheduler`; the `dask` extra): tasks of batches of games.

    DaskService(cluster, tournament, registry, hang_timeout=, settings=, isolate=, identities=,
                require_limits=False, on_note=None)
        the interface of kdtourney.service.local.LocalService (join, submit, step, cancel, busy,
        queued, close), for as long as the command holds the cluster (kdtourney.service.cluster)
    Shipping    what the workers build their state from, shipped once per worker and set up

The workers run kdtourney.service.dask_worker. Dead and hung workers, and tasks Dask gives up on,
go to the forfeit policy (kdtourney.service.forfeit) as in a local run. ArenaError for a worker
that cannot play the tournament or a lost scheduler; a worker's bug is a HarnessError. How it
works and why: docs/clusters.md.
"""

from __future__ import annotations

import collections
import time
import traceback
import uuid

from kdtourney import __version__, interrupts
from kdtourney.service.backend import Finished, GameService
from kdtourney.service.cluster import ALLOWED_FAILURES, distributed_module, limits_note
from kdtourney.service.dask_worker import (
    WorkerError,
    collect_deaths,
    exit_now,
    play_batch,
    progress,
    setup_worker,
    shipment_plugin,
)
from kdtourney.service.forfeit import DONE, FAIL, hang_limit
from kdtourney.tournament.definition import ArenaError, HarnessError, Tournament

MAX_BATCH = 64               # games per task at most
TARGET_TASK_SECONDS = 1.0    # play per task, once game durations are known
FIRST_BATCH = 4              # games per task before any duration is known
SETUP_POLL = 1.0             # seconds between looks at whether a worker setting up is still there
POLL_SECONDS = 1.0           # worker progress and membership checks
DEATH_WAIT = 2.0             # seconds a task's deaths may take to reach the nannies' reports


class Shipping:
    """What a command's Dask workers build their state from: the bots' sources (sandboxed, with
    what their modules define), how bots run (`settings`, `isolate`), the entrants' identities;
    shipped once per worker as a plugin (dask_worker.Shipment, which reaches the workers that
    join later too) under `key`, and set up on each (`ship`). `heard`: the entrants each worker
    said it knows; `base`: those the last shipment holds."""

    def __init__(self, cluster, registry, settings, isolate: bool, identities: dict, run: bytes,
                 require_limits: bool, note):
        self.cluster, self.client = cluster, cluster.client
        self.sources = registry.source_files()
        self.listed = None if settings.sandbox is None else registry.listings()
        self.settings, self.isolate = settings, isolate
        self.identities = dict(identities)
        self.run, self.require_limits, self.note = run, require_limits, note
        self.shipped = 0        # shipments made (one more per new sources)
        self.plugin = None      # the name of the plugin of the last one
        self.key: str | None = None         # ... and of the workers' state built from it
        self.base = 0
        self.heard: dict = {}

    def changed(self, registry) -> bool:
        """Whether `registry` has other bot sources than the workers'."""
        now = None if self.settings.sandbox is None else registry.listings()
        return (registry.source_files(), now) != (self.sources, self.listed)

    def reload(self, registry) -> None:
        """New sources: the next shipment carries them (and only the entrants joined since)."""
        self.sources = registry.source_files()
        self.listed = None if self.settings.sandbox is None else registry.listings()
        self.identities = {}

    def ship(self, table: Tournament, entrants: int) -> dict:
        """Ship `table` (of `entrants` entrants) and what the workers build their state from, and
        build and warm up the state on each worker (one per host first, so the others load the
        Numba cache instead of compiling too); returns the workers set up, {address: threads}."""
        workers = self.cluster.wait_for_workers()
        self.unship()
        self.shipped += 1
        self.key = f"{self.run.hex()}-{self.shipped}"
        plugin = shipment_plugin()(self.key, dict(
            sources=self.sources, tdict=table.to_dict(), settings=self.settings,
            isolate=self.isolate, listed=self.listed, identities=dict(self.identities)))
        self.client.register_plugin(plugin, name=plugin.name)
        self.plugin = plugin.name
        self.base, self.heard = entrants, {}
        known = dict(workers)
        by_host: dict[str, list] = collections.defaultdict(list)
        for addr in workers:
            by_host[addr.rsplit(":", 1)[0]].append(addr)
        first = [addrs[0] for addrs in by_host.values()]
        rest = [a for addrs in by_host.values() for a in addrs[1:]]
        for group in (first, rest):  # the first worker of a host compiles, the others load
            futures = [self.client.submit(setup_worker, self.key, workers=[addr],
                                          allow_other_workers=False, pure=False,
                                          key=f"kdtourney-setup-{uuid.uuid4().hex[:12]}")
                       for addr in group]
            for addr, future in zip(group, futures):
                info = self.set_up(future, addr)
                if info is None:  # the worker left before setting up: no games go to it
                    known.pop(addr, None)
                elif info:
                    self.heard[addr] = info["known"]
        many = {a: n for a, n in workers.items() if n > 1}
        if many:
            addr, n = next(iter(many.items()))
            self.note(f"worker {addr} has {n} threads: games in threads of one process share the "
                      "GIL (timings, --move-time-limit); start workers with --nthreads 1")
        return known

    def set_up(self, future, addr: str) -> dict | None:
        """What the setup task on `addr` found, checked: {} for a worker lost as it set up (Dask
        retries), None for one gone before; ArenaError for a worker that cannot play the
        tournament or runs another kdtourney version."""
        try:
            info = self.setup_result(future, addr)
        except WorkerError as exc:
            raise ArenaError(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a worker lost during setup: Dask retries
            if type(exc).__name__ in ("KilledWorker", "CancelledError"):
                return {}
            raise HarnessError(f"a worker failed to set up: {one_line(exc)}",
                               trace=worker_trace(exc)) from None
        if info is None:
            return None
        if info["kdtourney"] != __version__:
            raise ArenaError(f"worker {info['address']} runs kdtourney {info['kdtourney']}, "
                             f"this machine {__version__}: install the same version on every "
                             "machine")
        note = limits_note(info, self.cluster.limits_told, self.require_limits)
        if note is not None:
            self.note(note)
        return info

    def setup_result(self, future, addr: str):
        """The result of a setup task pinned to the worker `addr`, or None if that worker left
        first: a task pinned to a worker that is gone waits for it for ever (Dask neither retries
        it elsewhere nor fails it), as when the scheduler still listed a killed worker."""
        while True:
            try:
                return future.result(timeout=SETUP_POLL)
            except TimeoutError:
                if addr not in self.cluster.workers():
                    future.cancel()
                    return None

    def unship(self) -> None:
        """The workers forget the last shipment, and stop the bot processes of its state."""
        if self.plugin is None:
            return
        name, self.plugin = self.plugin, None
        try:
            if self.client.status == "running":
                self.client.unregister_worker_plugin(name)
        except Exception:  # noqa: BLE001 - a broken connection: the worker's close tears it down
            pass

    def joined(self, pairs: list, known) -> tuple:
        """The entrants a task carries: (start, [(label, spec)], {label: identity}) of `pairs`
        (all the entrants) from the fewest any of the workers `known` said it knows (a worker
        that never said: those it was shipped)."""
        start = min((self.heard.get(addr, self.base) for addr in known), default=self.base)
        pairs = pairs[start:]
        return start, pairs, {label: self.identities[label] for label, _ in pairs}


class DaskService(GameService):
    """The game service on a Dask cluster (see the module docstring). settings, isolate: how
    bots in their own process run (kdtourney.external.ProcessSettings; every bot in its own);
    identities: {entrant: identity} as the store records them, which every worker checks what it
    loads against. Sandboxed, a host that cannot enforce every limit is a note (once per host and
    connection), or with `require_limits` an ArenaError."""

    def __init__(self, cluster, tournament, registry, *, hang_timeout, settings, isolate,
                 identities, require_limits=False, on_note=None):
        super().__init__(tournament, on_note)
        self.cluster, self.client = cluster, cluster.client
        self.hang_timeout = hang_timeout
        # this run's games in the workers' traces: a long-lived cluster's nannies may still hold
        # the trace of a worker that died in an earlier run's game of the same index
        self.run = uuid.uuid4().bytes
        self.shipping = Shipping(cluster, registry, settings, isolate, identities, self.run,
                                 require_limits, self.note)
        self.sendings: dict = {}                 # game -> how many times it was sent to play
        self.inflight: dict = {}                 # future -> [game indexes]
        self.isolate: set[int] = set()           # games played one per task
        self.killed: set[str] = set()            # workers we killed (hung)
        self.kills = 0                           # ... how many in all
        self.kills_at: dict = {}                 # future -> self.kills when it was submitted
        self.game_seconds = None                 # running mean of a game's duration
        self.known: dict = {}                    # the workers connected: {address: threads}
        self.ready = False
        self.last_watch = 0.0
        self.threads = 1

    @property
    def workers(self) -> int:
        return sum(self.cluster.wait_for_workers().values())

    # the interface every backend has

    def join(self, tournament, identities, registry=None) -> None:
        """As LocalService.join. New entrants go to each worker with the next tasks it plays,
        nothing restarts; new sources make a new shipment and state on every worker at the next
        step (the old state's bot processes stop)."""
        if registry is not None and self.changed(registry):
            self.shipping.reload(registry)
            self.renew(tournament)
            self.ready = False
        self.mapping, _ = self.entrants.join(tournament)
        self.shipping.identities.update(identities)

    def changed(self, registry) -> bool:
        """As LocalService.changed."""
        return self.shipping.changed(registry)

    @property
    def busy(self) -> bool:
        return bool(self.pending) or bool(self.inflight)

    def step(self, timeout: float = POLL_SECONDS) -> list:
        """Submit tasks for the queued games, wait up to `timeout` seconds, and return the games
        finished since the last call (kdtourney.service.backend.Finished)."""
        distributed = distributed_module()
        if not self.ready:
            self.known = self.shipping.ship(self.entrants.table(self.tournament),
                                            len(self.entrants.pairs))
            self.ready = True
            self.threads = self.cluster.threads()
            self.last_watch = time.monotonic()
        interrupts.check()
        self.refill(self.threads)
        if self.inflight:
            try:
                done = distributed.wait(list(self.inflight), timeout=timeout,
                                        return_when="FIRST_COMPLETED").done
            except TimeoutError:
                done = ()
            taken = [self.finished_task(f) for f in done if f in self.inflight]
            if taken and not any(taken):
                time.sleep(0.05)  # results lost with a worker: Dask computes them again
        if time.monotonic() - self.last_watch >= POLL_SECONDS:
            self.watch()
            self.threads = sum(self.known.values()) or 1
            self.last_watch = time.monotonic()
        done, self.finished = self.finished, []
        return done

    def close(self) -> None:
        for future in self.inflight:
            future.cancel()
        self.inflight, self.kills_at = {}, {}
        self.shipping.unship()

    def commit(self, g, result=None, failed=None) -> None:
        """Hand `g` back, once (a replayed batch's copy of it is ignored: not ours any more)."""
        if failed is not None and g in self.pending:  # failed while waiting to be played again
            self.pending.remove(g)
        self.finished.append(Finished(self.forget(g), result, failed))

    def forget(self, game: int):
        self.sendings.pop(game, None)
        self.isolate.discard(game)
        return super().forget(game)

    # batches

    def batch_size(self, threads: int) -> int:
        """Games per task: guided as in a local run, and once durations are known about
        TARGET_TASK_SECONDS of play."""
        size = max(1, min(MAX_BATCH, len(self.pending) // (4 * max(1, threads))))
        if self.game_seconds is None:
            return min(size, FIRST_BATCH)
        return max(1, min(size, int(TARGET_TASK_SECONDS / max(self.game_seconds, 1e-6))))

    def refill(self, threads: int) -> None:
        """Submit tasks until two per worker thread are in flight (a game sent alone once it
        was lost)."""
        size = self.batch_size(threads)
        joined = self.shipping.joined(self.entrants.pairs, self.known)
        while self.pending and len(self.inflight) < 2 * max(1, threads):
            batch = [self.pending.popleft()]
            if batch[0] not in self.isolate:
                while self.pending and len(batch) < size and self.pending[0] not in self.isolate:
                    batch.append(self.pending.popleft())
            for g in batch:
                self.sendings[g] = self.sendings.get(g, 0) + 1
            games = [(self.sent[g], self.policy.forced(g), self.sendings[g]) for g in batch]
            future = self.client.submit(
                play_batch, self.shipping.key, self.run, joined, games, pure=False,
                key=f"kdtourney-games-{batch[0]}+{len(batch)}-{uuid.uuid4().hex[:8]}")
            self.inflight[future] = batch
            self.kills_at[future] = self.kills

    def requeue(self, games) -> None:
        for g in reversed(games):
            if g in self.specs and g not in self.pending:
                self.pending.appendleft(g)

    def finished_task(self, future) -> bool:
        """Take in a task that looked done; False if it is not (its result was lost with a worker
        and is being computed again)."""
        status = future.status
        if status not in ("finished", "error", "cancelled"):
            return False
        games = self.inflight.pop(future)
        bystander = self.kills > self.kills_at.pop(future, self.kills)
        if status == "finished":
            addr, known, results = future.result()
            self.shipping.heard[addr] = known
            if results is None:  # it knew too few entrants: sent again with more
                self.known.setdefault(addr, 1)  # (one the last look at the workers missed)
                self.requeue(games)
                return True
            for g, result in results:
                if g in self.specs:
                    self.commit(g, result)
                    d = result.duration
                    self.game_seconds = d if self.game_seconds is None else \
                        0.9 * self.game_seconds + 0.1 * d
            return True
        if status == "cancelled":
            if self.client.status not in ("running", "connecting"):
                raise ArenaError(f"lost the Dask scheduler at {self.cluster.address}")
            self.requeue(games)
            return True
        exc = future.exception()
        if isinstance(exc, WorkerError):
            raise ArenaError(str(exc)) from None
        if type(exc).__name__ == "KilledWorker":
            self.given_up(games, bystander)
            return True
        raise HarnessError(f"a worker failed: {one_line(exc)}",
                           trace=worker_trace(exc, future.traceback()))

    def given_up(self, games: list, bystander: bool) -> None:
        """Dask gave up on a task after ALLOWED_FAILURES + 1 worker deaths (KilledWorker): its
        games are played one by one; a game alone counts one loss outside any bot call when no
        nanny tells of a death in it (none there, a machine lost, or it only waited on workers
        another task killed, which Dask counts too), unless `bystander`: the client killed
        workers (hung in other games) while it waited; then it is sent again, a new task."""
        if len(games) > 1:
            self.isolate.update(games)
            self.note(f"games {games[0]}..{games[-1]} killed {ALLOWED_FAILURES + 1} workers; "
                      "playing them one by one")
            self.requeue(games)
            return
        g = games[0]
        before = self.policy.losses[g]
        self.await_deaths(g, before)
        if g in self.specs and self.policy.losses[g] == before and not bystander:
            self.lost(g, -1, -1, f"was on {ALLOWED_FAILURES + 1} workers that died")
        if g in self.specs:
            self.requeue([g])

    # watching the workers

    def watch(self) -> None:
        """Count the workers lost since the last look, the deaths the nannies tell of, and end
        the workers past the limit of their step (`hung`)."""
        workers = self.cluster.workers()
        gone = [addr for addr in set(self.known) - set(workers) if addr not in self.killed]
        for addr in gone:  # (a killed one is counted when killed)
            self.losses += 1
            self.note(f"worker {addr} was lost; its games are played again elsewhere")
        self.collect_deaths()  # every time: a dead process may outlive its worker's removal
        self.known = workers
        if not workers:
            self.cluster.wait_for_workers()
            return
        try:
            states = self.client.run(progress, on_error="return")
        except Exception:  # noqa: BLE001 - a worker going away while asked
            return
        for addr, state in states.items():
            if not isinstance(state, tuple) or addr in self.killed:
                continue
            game, seat, call, age, limit, sending = state
            limit = hang_limit(self.hang_timeout, limit)
            if game < 0 or age <= limit:
                continue
            if game not in self.specs or sending != self.sendings.get(game):
                # a copy of a decided game's task, or of a game sent again since, cancelled but
                # still running (Dask cannot stop a thread, and may have run a task again on
                # another worker before the cancel reached it): hung there, it holds the worker's
                # thread and the tasks queued behind it for ever, and its hang was counted at
                # the sending it was. End the worker; no loss to count.
                self.end_worker(addr)
            else:
                self.hung(addr, game, seat, call, limit)

    def collect_deaths(self) -> None:
        """Ask the nannies where their dead workers were (dask_worker.collect_deaths), and blame
        those games as the local runner does."""
        try:
            reports = self.client.run(collect_deaths, self.run, nanny=True, on_error="return")
        except Exception:  # noqa: BLE001 - no nannies (or going away): the losses stay unknown
            return
        for deaths in reports.values():
            if isinstance(deaths, list):
                for game, seat, call in deaths:
                    if game in self.specs:
                        self.lost(game, seat, call, "died")

    def await_deaths(self, game: int, before: int) -> None:
        """collect_deaths until the nannies tell of a loss in `game` beyond the `before` known,
        for DEATH_WAIT seconds at most: the scheduler can give up on a task before the last worker
        it killed is gone."""
        deadline = time.monotonic() + DEATH_WAIT
        while True:
            self.collect_deaths()
            if (game not in self.specs or self.policy.losses[game] > before
                    or time.monotonic() > deadline):
                return
            time.sleep(0.05)

    def hung(self, addr: str, game: int, seat: int, call: int, limit: float) -> None:
        self.losses += 1
        why = f"hung (no progress for {limit:g} s)"
        self.lost(game, seat, call, why, addr, hung=True)
        self.end_worker(addr)

    def end_worker(self, addr: str) -> None:
        """Make the worker `addr` exit (its nanny starts a new one), counted where it is called."""
        self.killed.add(addr)
        self.kills += 1
        try:
            self.client.run(exit_now, workers=[addr], on_error="ignore")
        except Exception:  # noqa: BLE001 - it is gone, as wanted
            pass

    def lost(self, game, seat, call, why, addr=None, hung=False, times=1) -> None:
        """A worker died or hung in `game` (seat and call: where, -1 if not known): the forfeit
        policy decides; the game's task is cancelled and the game played alone, or stored as a
        failed game."""
        action, what = self.policy.lost(game, seat, call, why, hung=hung, times=times)
        where = f"worker {addr}" if addr else "a worker"
        self.note(f"{where} {why} in game {game}; {what}")
        if action == DONE:
            return
        if action == FAIL:
            self.commit(game, failed=self.policy.failed_message(game))
        self.isolate.add(game)
        for future, games in list(self.inflight.items()):
            if game in games:  # Dask would play it again as it was: play it as decided
                future.cancel()
                del self.inflight[future]
                self.kills_at.pop(future, None)
                self.requeue(games)


def worker_trace(exc, tb=None) -> str:
    """The traceback of an exception a Dask worker raised, as it was raised there (`tb`: the
    task's, where the exception does not carry it)."""
    return "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__))


def one_line(exc) -> str:
    """'KeyError: 3': an exception's type and the last line of its message."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[-1]}" if text else type(exc).__name__


__all__ = ["DaskService", "Shipping", "worker_trace", "one_line", "MAX_BATCH", "POLL_SECONDS",
           "DEATH_WAIT"]
