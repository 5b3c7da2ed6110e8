"""Playing a tournament's games on a Dask cluster (`kdtourney run --scheduler ...`; the `dask` extra).

Only *where* the games are played differs from a local run (kdtourney.arena.runner): the client
(the process running `kdtourney run`) plans the games, plays exactly those the store lacks, and
commits each finished game in its own transaction through the runner's `_Sink`; workers never touch
the store, so no shared filesystem is assumed.

Addresses
---------
- `tcp://HOST:PORT` (or anything `distributed.Client` accepts): an existing scheduler;
- a path to a scheduler file (`dask scheduler --scheduler-file F`);
- `local:N`: a `distributed.LocalCluster` of N worker processes with one thread each, for this run.

Bots and warm-up
----------------
A task carries the tournament and the client's bot-folder sources (`BotRegistry.source_files()`);
each worker process rebuilds a registry from them once (`BotRegistry.from_sources`, installed entry
points included) and keeps it under a content hash, with the bots' factories. Before any game, one
setup task per worker loads or compiles the engine kernels and plays a few decisions with every
entrant's bot (one worker per host first, so the others load the Numba cache instead of compiling
too). A worker that lacks a bot, or runs another kdtourney version, stops the run with a one-line
error naming the worker. Bots in their own process (TOML bots; with isolate, every bot) get a
ProcessPool per worker process, checked in setup (a command that does not start there stops the
run the same way) and closed by the `BotProcesses` worker plugin when the worker closes; their
faults carry their last stderr lines (no log files: workers share no filesystem with the client).

Batches
-------
A task plays a batch of games and returns their results; the client commits them as each task
finishes (`distributed.wait(..., FIRST_COMPLETED)`). Batches are guided as in the local runner
(about a quarter of each worker's share of the games left, at most MAX_BATCH) and also kept to about
TARGET_TASK_SECONDS of play once game durations are known, so an interrupted client loses about a
second of each worker's work; two tasks per worker thread are in flight so no worker waits for the
scheduler.

Lost and hung workers
---------------------
Dask reschedules the tasks of a worker that dies (`distributed.scheduler.allowed-failures`, 3 by
default, set so for `local:N`); the client commits a game once (by game index), so a replayed batch
never counts twice. A batch that keeps killing workers (KilledWorker) is split and its games are
played one per task; a single game that does so is stored as a failed game ('crash' on seat -1), as
the local runner does when the culprit is unknown. Unlike a local run, the seat of a bot that kills
its worker is not known (the worker's last state dies with it), so it is not made to forfeit.
Every POLL_SECONDS the client asks each worker which game, seat and bot call it is in and since
when; a worker without progress for `hang_timeout` seconds is killed (its nanny starts a new one)
and its batch played again, the hung game alone; hung a second time, the bot deciding forfeits at
that call (fault 'timeout'), as in a local run.
"""

from __future__ import annotations

import collections
import hashlib
import json
import logging
import os
import threading
import time
import uuid

from kdtourney.arena.match import TIMEOUT, play_match
from kdtourney.arena.tournament import ArenaError, Tournament

try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # without the dask extra this module only says so (MISSING_EXTRA)
    _WorkerPlugin = object

MAX_BATCH = 64               # games per task at most
TARGET_TASK_SECONDS = 1.0    # play per task, once game durations are known
FIRST_BATCH = 4              # games per task before any duration is known
CONNECT_TIMEOUT = 10.0       # seconds to reach the scheduler
WORKERS_TIMEOUT = 60.0       # seconds to wait for a first worker (or a new one after all are lost)
POLL_SECONDS = 1.0           # worker progress and membership checks
ALLOWED_FAILURES = 3         # worker deaths a task may cause before KilledWorker (local:N)
MISSING_EXTRA = "--scheduler needs the dask extra: pip install 'kdtourney[dask]'"


class WorkerError(Exception):
    """A worker cannot play this tournament (a bot missing there, another version): one line."""


# --- the worker side ---------------------------------------------------------------------------

_STATES: dict = {}             # content hash -> (tournament, factories, rules, bot process pool)
_STATE_LOCK = threading.Lock()
_PROGRESS = [-1, -1, -1, 0.0]  # game (-1 none, -2 setting up), seat, bot call, monotonic time


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "?"


def _state(key, sources, tdict, settings, isolate):
    """This worker's tournament, bot factories, rules and bot process pool for `key`, built and
    warmed once; bots in their own process are started and checked here (WorkerError)."""
    with _STATE_LOCK:
        state = _STATES.get(key)
        if state is not None:
            return state
        from kdtourney.arena.runner import _factories, _warm_bots
        from kdtourney.bots.external import ProcessPool, StartupError
        from kdtourney.bots.registry import BotRegistry, EntrantError
        from kdtourney.engine import warm_up

        _PROGRESS[:] = [-2, -1, -1, time.monotonic()]
        tournament = Tournament.from_dict(tdict)
        registry = BotRegistry.from_sources(sources)
        try:
            registry.start_check(tournament.specs, settings)
        except (EntrantError, StartupError) as exc:
            raise WorkerError(f"worker {_worker_address()} cannot play {tournament.describe()}: "
                              f"{exc}") from None
        _close_pools()  # one tournament at a time per worker process
        pool = ProcessPool(settings)
        factories = _factories(registry, tournament.specs, pool, isolate)
        warm_up()

        def touch():
            _PROGRESS[3] = time.monotonic()

        _warm_bots(tournament, registry, touch)
        state = (tournament, factories, {p: tournament.rules_for(p) for p in tournament.players},
                 pool)
        _STATES[key] = state
        _PROGRESS[:] = [-1, -1, -1, time.monotonic()]
        return state


def _close_pools():
    """Stop this worker's bot processes (a new tournament, the worker's end)."""
    for state in _STATES.values():
        state[3].close()
    _STATES.clear()


class BotProcesses(_WorkerPlugin):
    """Worker plugin: a worker stops its bot processes when it closes (or is restarted)."""

    name = "kdtourney-bot-processes"

    def teardown(self, worker):
        with _STATE_LOCK:
            _close_pools()


def setup_worker(key, sources, tdict, settings, isolate) -> dict:
    """Task: build and warm this worker's state; returns what the client checks."""
    from kdtourney import __version__

    _state(key, sources, tdict, settings, isolate)
    return dict(address=_worker_address(), kdtourney=__version__)


def play_batch(key, sources, tdict, settings, isolate, batch) -> list:
    """Task: play [(GameSpec, forced faults)]; returns [(game index, MatchResult)]."""
    tournament, factories, rules, pool = _state(key, sources, tdict, settings, isolate)

    def monitor(seat, call):
        _PROGRESS[1:] = [seat, call, time.monotonic()]

    out = []
    try:
        for spec, forced in batch:
            _PROGRESS[:] = [spec.game, -1, 0, time.monotonic()]
            pool.game = spec.game
            result = play_match(
                rules[spec.n_players], spec.deal_seeds, spec.bot_seeds,
                [factories[tournament.specs[e]] for e in spec.seats],
                move_time_limit=tournament.move_time_limit, forced=forced, monitor=monitor)
            out.append((spec.game, result))
    finally:
        _PROGRESS[:] = [-1, -1, -1, time.monotonic()]
    return out


def progress() -> tuple:
    """Run on a worker (client.run): (game, seat, bot call, seconds since the last step)."""
    game, seat, call, since = _PROGRESS
    return int(game), int(seat), int(call), time.monotonic() - since


def _exit_now():
    for state in _STATES.values():
        state[3].kill_all()  # the bots first: os._exit runs no cleanup
    os._exit(1)


# --- the client side ---------------------------------------------------------------------------

def _distributed():
    try:
        import distributed
    except ImportError:
        raise ArenaError(MISSING_EXTRA) from None
    return distributed


def content_key(sources: dict, tdict: dict, *settings) -> str:
    """A hash of what a worker builds its state from."""
    text = json.dumps([sorted(sources.items()), tdict, *settings], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Cluster:
    """A connection to a Dask scheduler (and the LocalCluster behind it for `local:N`)."""

    def __init__(self, address: str):
        distributed = _distributed()
        self.address = address = str(address).strip()
        self.local = None
        self._hidden = None
        self._quiet_logs()
        try:
            if address.startswith("local:"):
                self._start_local(distributed, address)
            elif address.endswith(".json") and os.path.isfile(address):
                self.client = distributed.Client(scheduler_file=address, timeout=CONNECT_TIMEOUT)
            else:
                if "://" not in address and address.count(":") != 1:
                    raise ArenaError(f"--scheduler {address!r} is not a scheduler address: "
                                     "tcp://HOST:PORT, a scheduler file, or local:N")
                _probe(address)
                self.client = distributed.Client(address, timeout=CONNECT_TIMEOUT)
        except ArenaError:
            self.close()
            raise
        except Exception as exc:  # noqa: BLE001 - refused, timed out, or not a Dask scheduler
            self.close()
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if not isinstance(exc, (OSError, ValueError, TypeError)):
                reason = f"not a Dask scheduler? ({type(exc).__name__}: {reason[:200]})"
            raise ArenaError(f"cannot reach the Dask scheduler at {address}: {reason}") from None

    def _quiet_logs(self):
        """The run's progress is the story; Dask's own warnings (a lost worker...) would only
        interleave with it; what matters reaches the run as an exception or a note."""
        self._levels = {}
        for name in ("distributed", "dask"):
            logger = logging.getLogger(name)
            self._levels[name] = logger.level
            logger.setLevel(logging.CRITICAL)

    def _start_local(self, distributed, address):
        import dask

        from kdtourney.arena.runner import _main_module_hidden

        try:
            n = int(address.split(":", 1)[1])
        except ValueError:
            n = 0
        if n < 1:
            raise ArenaError(f"--scheduler {address!r}: local:N needs a number of workers N >= 1")
        # worker processes are spawned (now and when one is replaced) without re-running __main__
        self._hidden = _main_module_hidden()
        self._hidden.__enter__()
        with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}):
            self.local = distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                silence_logs=logging.ERROR, host="127.0.0.1")
        self.client = distributed.Client(self.local, timeout=CONNECT_TIMEOUT)

    # what the runner asks

    def workers(self) -> dict:
        """{address: number of threads} of the workers now connected."""
        info = self.client.scheduler_info(n_workers=-1) if _takes_n_workers(self.client) \
            else self.client.scheduler_info()
        return {addr: w.get("nthreads", 1) for addr, w in info.get("workers", {}).items()}

    def wait_for_workers(self, timeout: float = WORKERS_TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            workers = self.workers()
            if workers:
                return workers
            if time.monotonic() > deadline:
                raise ArenaError(f"the Dask scheduler at {self.address} has no workers (waited "
                                 f"{timeout:g} s); start some: dask worker {self.scheduler_address}"
                                 " --nthreads 1")
            time.sleep(0.2)

    @property
    def scheduler_address(self) -> str:
        return self.client.scheduler.address

    def threads(self) -> int:
        return sum(self.workers().values())

    def close(self):
        client = getattr(self, "client", None)
        if client is not None:
            try:
                client.close(timeout=5)
            except Exception:  # noqa: BLE001 - closing a broken connection
                pass
        if self.local is not None:
            try:
                self.local.close(timeout=10)
            except Exception:  # noqa: BLE001
                pass
            self.local = None
        if self._hidden is not None:
            self._hidden.__exit__(None, None, None)
            self._hidden = None
        for name, level in getattr(self, "_levels", {}).items():
            logging.getLogger(name).setLevel(level)

    # playing

    def play(self, tournament, specs, pending, sink, registry, outcome, reporter, hang_timeout,
             settings, isolate):
        """Play the games of `pending` (a deque of game indexes) on the cluster, committing each
        through `sink` (kdtourney.arena.runner._Sink) once. settings, isolate: how bots in their
        own process run (kdtourney.bots.external.ProcessSettings; every bot in its own)."""
        _Play(self, tournament, specs, pending, sink, registry, outcome, reporter,
              hang_timeout, settings, isolate).run()


def _probe(address: str) -> None:
    """Fail at once (OSError) when nothing listens at a tcp:// address, instead of the client's
    retrying until its connect timeout."""
    import socket

    from distributed.comm import parse_address, parse_host_port

    scheme, location = parse_address(address)
    if scheme != "tcp":
        return
    host, port = parse_host_port(location)
    with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT):
        pass


def _takes_n_workers(client) -> bool:
    import inspect

    return "n_workers" in inspect.signature(client.scheduler_info).parameters


class _Play:
    def __init__(self, cluster, tournament, specs, pending, sink, registry, outcome, reporter,
                 hang_timeout, settings, isolate):
        self.cluster, self.client = cluster, cluster.client
        self.tournament, self.specs, self.pending = tournament, specs, pending
        self.sink, self.outcome, self.reporter = sink, outcome, reporter
        self.hang_timeout = hang_timeout
        self.sources = registry.source_files()
        self.tdict = tournament.to_dict()
        self.bots = (settings, isolate)  # how bots in their own process run
        self.key = content_key(self.sources, self.tdict, *self.bots)
        self.wanted = set(pending)
        self.committed: set[int] = set()
        self.inflight: dict = {}                 # future -> [game indexes]
        self.isolate: set[int] = set()           # games played one per task
        self.forced: dict[int, dict] = collections.defaultdict(dict)
        self.hangs: dict[int, int] = collections.Counter()
        self.killed: set[str] = set()            # workers we killed (hung)
        self.game_seconds = None                 # running mean of a game's duration
        self.known: dict = {}

    def note(self, text):
        self.outcome.notes.append(text)
        if self.reporter is not None:
            self.reporter.note(text)

    # setup

    def setup(self):
        from kdtourney import __version__

        workers = self.cluster.wait_for_workers()
        self.client.register_plugin(BotProcesses(), name=BotProcesses.name)
        self.known = dict(workers)
        by_host: dict[str, list] = collections.defaultdict(list)
        for addr in workers:
            by_host[addr.rsplit(":", 1)[0]].append(addr)
        first = [addrs[0] for addrs in by_host.values()]
        rest = [a for addrs in by_host.values() for a in addrs[1:]]
        for group in (first, rest):  # the first worker of a host compiles, the others load
            futures = [self.client.submit(setup_worker, self.key, self.sources, self.tdict,
                                          *self.bots, workers=[addr], allow_other_workers=False,
                                          pure=False,
                                          key=f"kdtourney-setup-{uuid.uuid4().hex[:12]}")
                       for addr in group]
            for future in futures:
                try:
                    info = future.result()
                except WorkerError as exc:
                    raise ArenaError(str(exc)) from None
                except Exception as exc:  # noqa: BLE001 - a worker lost during setup: Dask retries
                    if type(exc).__name__ in ("KilledWorker", "CancelledError"):
                        continue
                    raise ArenaError(f"a worker failed to set up: {_one_line(exc)}") from None
                if info["kdtourney"] != __version__:
                    raise ArenaError(f"worker {info['address']} runs kdtourney {info['kdtourney']}, "
                                     f"this machine {__version__}: install the same version on "
                                     "every machine")
        many = {a: n for a, n in workers.items() if n > 1}
        if many:
            addr, n = next(iter(many.items()))
            self.note(f"worker {addr} has {n} threads: games in threads of one process share the "
                      "GIL (timings, --move-time-limit); start workers with --nthreads 1")

    # batches

    def batch_size(self, threads):
        size = max(1, min(MAX_BATCH, len(self.pending) // (4 * max(1, threads))))
        if self.game_seconds is None:
            return min(size, FIRST_BATCH)
        return max(1, min(size, int(TARGET_TASK_SECONDS / max(self.game_seconds, 1e-6))))

    def refill(self, threads):
        size = self.batch_size(threads)
        while self.pending and len(self.inflight) < 2 * max(1, threads):
            batch = [self.pending.popleft()]
            if batch[0] not in self.isolate:
                while self.pending and len(batch) < size and self.pending[0] not in self.isolate:
                    batch.append(self.pending.popleft())
            games = [(self.specs[g], dict(self.forced.get(g, {}))) for g in batch]
            future = self.client.submit(
                play_batch, self.key, self.sources, self.tdict, *self.bots, games, pure=False,
                key=f"kdtourney-games-{batch[0]}+{len(batch)}-{uuid.uuid4().hex[:8]}")
            self.inflight[future] = batch

    def requeue(self, games):
        for g in reversed(games):
            if g not in self.committed:
                self.pending.appendleft(g)

    def finished(self, future) -> bool:
        """Take in a task that looked done; False if it is not (its result was lost with a worker
        and is being computed again)."""
        status = future.status
        if status not in ("finished", "error", "cancelled"):
            return False
        games = self.inflight.pop(future)
        if status == "finished":
            for g, result in future.result():
                if g in self.wanted and g not in self.committed:
                    self.committed.add(g)
                    self.sink.commit(g, result)
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
            if len(games) > 1:
                self.isolate.update(games)
                self.note(f"games {games[0]}..{games[-1]} killed {ALLOWED_FAILURES + 1} workers; "
                          "playing them one by one")
                self.requeue(games)
            else:
                g = games[0]
                message = (f"the game killed its Dask worker {ALLOWED_FAILURES + 1} times "
                           "(the bot at fault is not known on a cluster)")
                self.committed.add(g)
                self.sink.fail(g, message)
                self.note(f"game {g}: {message}; stored as a failed game")
            return True
        raise ArenaError(f"a worker failed: {_one_line(exc)}")

    # watching the workers

    def watch(self):
        workers = self.cluster.workers()
        for addr in set(self.known) - set(workers):
            if addr not in self.killed:  # (a killed one is counted when killed)
                self.outcome.worker_losses += 1
                self.note(f"worker {addr} was lost; its games are played again elsewhere")
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
            game, seat, call, age = state
            if game >= 0 and age > self.hang_timeout and game not in self.committed:
                self.hung(addr, game, seat, call)

    def hung(self, addr, game, seat, call):
        self.killed.add(addr)
        self.outcome.worker_losses += 1
        self.hangs[game] += 1
        why = f"hung (no progress for {self.hang_timeout:g} s)"
        note = f"worker {addr} {why} in game {game}"
        spec = self.specs[game]
        if self.hangs[game] >= 2 and seat >= 0 and seat not in self.forced[game]:
            entrant = self.tournament.entrants[spec.seats[seat]]
            self.forced[game][seat] = (call, TIMEOUT, f"the worker {why} during this bot's call "
                                                      f"{call} (twice)")
            note += f"; {entrant} (seat {seat}) forfeits it"
        elif self.hangs[game] >= 2 + spec.n_players:
            self.committed.add(game)
            self.sink.fail(game, f"the worker {why} {self.hangs[game]} times in this game, "
                                 "outside any bot call")
            note += "; stored as a failed game"
        else:
            note += "; playing it again"
        self.note(note)
        for future, games in list(self.inflight.items()):
            if game in games:
                future.cancel()
                del self.inflight[future]
                self.isolate.add(game)
                self.requeue(games)
        try:
            self.client.run(_exit_now, workers=[addr], on_error="ignore")
        except Exception:  # noqa: BLE001 - it is gone, as wanted
            pass

    # the loop

    def run(self):
        distributed = _distributed()
        self.setup()
        last_watch = time.monotonic()
        threads = self.cluster.threads()
        try:
            while self.pending or self.inflight:
                self.refill(threads)
                try:
                    done = distributed.wait(list(self.inflight), timeout=POLL_SECONDS,
                                            return_when="FIRST_COMPLETED").done
                except TimeoutError:
                    done = ()
                taken = [self.finished(f) for f in done if f in self.inflight]
                if taken and not any(taken):
                    time.sleep(0.05)  # results lost with a worker: Dask computes them again
                if time.monotonic() - last_watch >= POLL_SECONDS:
                    self.watch()
                    threads = sum(self.known.values()) or 1
                    last_watch = time.monotonic()
        finally:
            for future in self.inflight:
                future.cancel()


def _one_line(exc) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[-1]}" if text else type(exc).__name__


__all__ = ["Cluster", "WorkerError", "play_batch", "setup_worker", "content_key", "MISSING_EXTRA"]
