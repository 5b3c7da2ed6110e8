"""Playing a tournament's games on a Dask cluster (`kdtourney run --scheduler ...`; the `dask` extra).

Only *where* the games are played differs from a local run (kdtourney.commands.run): the client
(the process running the command) plans the games, plays exactly those the store lacks, and its
driver commits each finished game in its own transaction; workers never touch the store, so no
shared filesystem is assumed.

Addresses
---------
- `tcp://HOST:PORT` (or anything `distributed.Client` accepts): an existing scheduler;
- a path to a scheduler file (`dask scheduler --scheduler-file F`);
- `local:N`: a `distributed.LocalCluster` of N worker processes with one thread each, for this run.

Bots and warm-up
----------------
A Dask worker plays with the same state as a local worker process (kdtourney.service.worker
.WorkerState); only how games, entrants and results travel differs. What it is built from, the
client's bot-folder sources (`BotRegistry.source_files()`), the table, how bots run and the
entrants' identities, is shipped once per worker by a worker plugin (`Shipment`, which reaches
the workers that join later too); tasks never carry sources. Each worker process builds its
state once per command: a registry from the sources (`BotRegistry.from_sources`, installed entry
points included; sandboxed, with what the client's registry learned the modules define, instead
of running them), then every entrant is checked, its TOML bot started once to say hello, and its
bot's kernels warmed up (a few decisions; once per kernels, not per parameter value). Before any
game, one setup task per worker builds it (one worker per host first, so the others load the
Numba cache instead of compiling too). A worker that lacks a bot, or runs another kdtourney
version, stops the run with a one-line error naming the worker.

The entrants that join later (a tune's new parameter values, a ladder's new bot) travel with the
tasks: each carries those from the fewest any worker said it knows (every task's result says),
and a worker takes in those it lacks, checked and warmed up once like the first ones; a worker
that knows fewer (one started since) plays nothing and the batch is sent again with more. Bots in
their own process (TOML bots; with isolate, every bot) get a ProcessPool per worker process, kept
for the command and stopped when the client is done with the cluster (it unregisters the plugin)
or the worker closes; their faults carry their last stderr lines (no log files: workers share no
filesystem with the client).

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
A worker records every step (game, seat, bot call, and the run whose game it is) in memory and in
a small trace file that its nanny, the process that outlives it and starts a new one, can read.
Every POLL_SECONDS the client asks the nannies where their dead workers were in its run's games
(`collect_deaths`) and each worker where it is (`progress`); a worker without progress for
`hang_timeout` seconds (sooner in a clocked decision of an in-process bot:
kdtourney.service.forfeit.hang_limit) is killed. Each loss goes to
the same forfeit policy as in a local run (kdtourney.service.forfeit): the game is played again alone
(its task cancelled, so Dask does not replay it as it was), with the bot at fault forfeiting at that
call from the second loss on, or stored as a failed game. The client commits a game once (by game
index), so a replayed batch never counts twice. A batch that keeps killing workers before the
client hears of it (KilledWorker after `distributed.scheduler.allowed-failures`, 3 by default, set
so for `local:N`) is split and its games are played one per task. For a single game, when no
nanny tells of a death in it within DEATH_WAIT seconds (workers without a nanny, a lost machine,
or workers another task killed while this one waited on them: Dask counts those too), the
KilledWorker counts as one loss outside any bot call.
"""

from __future__ import annotations

import collections
import functools
import glob
import logging
import os
import struct
import tempfile
import threading
import time
import uuid
from dataclasses import replace

from kdtourney import interrupts
from kdtourney.service.forfeit import DONE, FAIL, ForfeitPolicy, hang_limit
from kdtourney.service.local import NOTES_KEPT, Entrants, Finished
from kdtourney.tournament.definition import ArenaError, HarnessError
from kdtourney.service.worker import WorkerState, main_module_hidden

MAX_BATCH = 64               # games per task at most
TARGET_TASK_SECONDS = 1.0    # play per task, once game durations are known
FIRST_BATCH = 4              # games per task before any duration is known
SETUP_POLL = 1.0             # seconds between looks at whether a worker setting up is still there
CONNECT_TIMEOUT = 10.0       # seconds to reach the scheduler
WORKERS_TIMEOUT = 60.0       # seconds to wait for a first worker (or a new one after all are lost)
POLL_SECONDS = 1.0           # worker progress and membership checks
DEATH_WAIT = 2.0             # seconds a task's deaths may take to reach the nannies' reports
MAX_LOCAL_PER_CORE = 4      # local:N workers per core (each is a process with its own engine)
ALLOWED_FAILURES = 3         # worker deaths a task may cause before KilledWorker (local:N)
# local:N runs beside the client on its cores: Dask's own clockwork there (an idle cluster of 2
# workers took 8% of a core, 1% so) is eased where it only measures and profiles
LOCAL_QUIET = {"distributed.admin.tick.interval": "1s",
               "distributed.admin.system-monitor.interval": "5s",
               "distributed.worker.profile.enabled": False,
               "distributed.worker.memory.monitor-interval": "1s"}
MISSING_EXTRA = "--scheduler needs the dask extra: pip install 'kdtourney[dask]'"


class WorkerError(Exception):
    """A worker cannot play this tournament (a bot missing there, another version): one line."""


# --- the worker side ---------------------------------------------------------------------------

_SHIPMENTS: dict = {}          # a command's key -> what its workers build their state from
_STATES: dict = {}             # ... -> this worker's WorkerState (one command's at a time)
_STATE_LOCK = threading.Lock()
# game (-1 none, -2 setting up), seat, bot call, monotonic time, what the call may take
# (match.play_match's limit), which of the client's sendings of the game this is
_PROGRESS = [-1, -1, -1, 0.0, None, 0]
# game, seat, call and the run (16 bytes): a worker's last step, in a file that outlives it
_TRACE = struct.Struct("<3q16s")
_TRACE_FD = [None]


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "?"


def _state(key) -> WorkerState:
    """This worker's state for the command `key`, built from its shipment (`Shipment`) and
    warmed up on first use (setup_worker; a worker started since, in its first batch); building
    it stops the bot processes of another command's state. WorkerError (one line) for a worker
    that cannot play the command's entrants."""
    with _STATE_LOCK:
        state = _STATES.get(key)
        if state is not None:
            return state
        from kdtourney.external import ProcessPool

        shipment = _SHIPMENTS.get(key)
        if shipment is None:  # registered before any task: only a bug of ours gets here
            raise RuntimeError(f"worker {_worker_address()} has no shipment {key}")
        _close_states()  # one command at a time per worker process
        beat = _Beat()
        pool = ProcessPool(shipment["settings"])
        try:
            state = WorkerState(shipment["sources"], shipment["tdict"], shipment["isolate"],
                                shipment["listed"], shipment["identities"], pool, beat,
                                machine=f"worker {_worker_address()}", local=False)
        except ArenaError as exc:
            pool.close()
            raise WorkerError(str(exc)) from None
        except BaseException:
            pool.close()
            raise
        finally:
            beat.idle()
        _STATES[key] = state
        return state


def _close_states(key=None):
    """Stop the bot processes of the command `key`'s state (default: of every command's)."""
    for k in [key] if key is not None else list(_STATES):
        state = _STATES.pop(k, None)
        if state is not None:
            state.close()


@functools.cache
def _shipment_plugin():
    """The worker plugin class `Shipment`. Made on first use: distributed takes a fifth of a
    second to import, which every command would pay (this module is imported by all of them, and
    only a Dask run needs it); workers unpickling the plugin find it by name through the module's
    `__getattr__`."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class Shipment(WorkerPlugin):
        """What the workers of the command `key` build their state from (`shipment`: the bot
        sources, the table, how bots run, their identities), sent once to every worker, those
        that join later included. Its teardown, when the command is done with the cluster
        (unregistered) or the worker closes, stops the state's bot processes."""

        def __init__(self, key: str, shipment: dict):
            self.key, self.shipment = key, shipment
            self.name = f"kdtourney-{key}"

        def setup(self, worker):
            _SHIPMENTS[self.key] = self.shipment

        def teardown(self, worker):
            with _STATE_LOCK:
                _SHIPMENTS.pop(self.key, None)
                _close_states(self.key)

    Shipment.__qualname__ = "Shipment"
    return Shipment


def __getattr__(name):
    if name == "Shipment":
        return _shipment_plugin()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def setup_worker(key) -> dict:
    """Task: build and warm up this worker's state for the command `key`; returns what the client
    checks (sandboxed: the limits this worker's machine cannot enforce) and how many entrants the
    worker knows."""
    import platform

    from kdtourney import __version__
    from kdtourney.external.sandbox import missing_limits

    state = _state(key)
    missing = missing_limits() if state.sandboxed else []
    return dict(address=_worker_address(), kdtourney=__version__, host=platform.node(),
                missing=missing, known=len(state.pairs))


_TRACE_NAME = "kdtourney-trace-"  # + nanny pid + "-" + worker pid


def _trace_prefix(nanny_pid: int) -> str:
    return os.path.join(tempfile.gettempdir(), f"{_TRACE_NAME}{nanny_pid}-")


def _step(game: int, seat: int, call: int, limit: float | None = None, run: bytes = b"",
          sending: int = 0) -> None:
    """Record where this worker is: in memory (for `progress`) and in its trace file, which its
    nanny (the parent process, which outlives it) reads if it dies (`collect_deaths`); `run`: the
    client's run whose game it is, `sending`: which sending of the game."""
    _PROGRESS[:] = [game, seat, call, time.monotonic(), limit, sending]
    if _TRACE_FD[0] is None:
        import atexit

        path = f"{_trace_prefix(os.getppid())}{os.getpid()}"
        _TRACE_FD[0] = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        atexit.register(_remove, path)
    os.pwrite(_TRACE_FD[0], _TRACE.pack(game, seat, call, run), 0)


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


class _Beat:
    """Where a Dask worker is (a WorkerState's beat): in memory, for `progress`, and while it
    plays a game of the client's run `run`, in its trace file, for `collect_deaths`."""

    def __init__(self, run: bytes = b""):
        self.run, self.game_index, self.sending = run, -1, 0

    def warming(self) -> None:
        _PROGRESS[:] = [-2, -1, -1, time.monotonic(), None, 0]

    def game(self, game: int) -> None:
        self.game_index = game
        _step(game, -1, 0, run=self.run, sending=self.sending)

    def __call__(self, seat: int, call: int, limit: float | None = None) -> None:
        _step(self.game_index, seat, call, limit, self.run, self.sending)

    def idle(self) -> None:
        _step(-1, -1, -1)


def play_batch(key, run, joined, batch) -> tuple:
    """Task: play [(GameSpec, forced faults, sending)] of the client's run `run` (of the command
    `key`; sending: which of the client's sendings of the game, for `progress`);
    joined: (start, [(label, spec)], {label: identity}), the command's entrants from index
    `start` on, those this worker does not know join it first. Returns (this worker's address,
    how many entrants it knows, [(game index, MatchResult)]); the results are None, and nothing
    played, when the worker knows fewer than `start` entrants (it started since, or played none
    of the client's last tasks): the client sends the batch again with more entrants."""
    state = _state(key)
    start, pairs, identities = joined
    with _STATE_LOCK:
        known = len(state.pairs)
        if known < start:
            return _worker_address(), known, None
        if known < start + len(pairs):
            try:
                state.join(pairs[known - start:], identities)
            except ArenaError as exc:
                raise WorkerError(str(exc)) from None
            finally:
                state.beat.idle()
    beat = _Beat(run)
    out = []
    try:
        for spec, forced, beat.sending in batch:
            out.append((spec.game, state.play(spec, forced, beat)))
    finally:
        beat.idle()
    return _worker_address(), len(state.pairs), out


def collect_deaths(run: bytes) -> list:
    """Run on a nanny (client.run(..., nanny=True)): [(game, seat, bot call)] where each of its
    worker processes that has died since in a game of `run` (the asking client's) was; each dead
    worker's trace is read once. The trace of a death in another run's game is left to that run:
    on a long-lived cluster it may be an earlier run's, whose game of the same index is not this
    run's."""
    import psutil

    def alive(pid):
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    out = []
    mine = _trace_prefix(os.getpid())
    for path in glob.glob(os.path.join(tempfile.gettempdir(), f"{_TRACE_NAME}*")):
        nanny, _, pid = os.path.basename(path)[len(_TRACE_NAME):].partition("-")
        if not (nanny.isdigit() and pid.isdigit()) or alive(int(pid)):
            continue
        if not path.startswith(mine):  # left by a cluster killed as a whole: nobody reads it
            if not alive(int(nanny)):
                _remove(path)
            continue
        try:
            with open(path, "rb") as f:
                data = f.read(_TRACE.size)
        except OSError:
            continue
        game, seat, call, of_run = (_TRACE.unpack(data) if len(data) == _TRACE.size
                                    else (-1, -1, -1, b""))
        if game >= 0 and of_run != run:
            continue
        claimed = f"{path}.{uuid.uuid4().hex}"  # several nannies may share a process (local:N)
        try:
            os.rename(path, claimed)
            os.unlink(claimed)
        except OSError:
            continue
        if game >= 0:
            out.append((game, seat, call))
    return out


def progress() -> tuple:
    """Run on a worker (client.run): (game, seat, bot call, seconds since the last step, what
    that call may take or None, which sending of the game)."""
    game, seat, call, since, limit, sending = _PROGRESS
    return int(game), int(seat), int(call), time.monotonic() - since, limit, int(sending)


def _exit_now():
    """Run on a hung worker: end it, its loss already counted (so its trace reports nothing)."""
    if _TRACE_FD[0] is not None:
        os.pwrite(_TRACE_FD[0], _TRACE.pack(-1, -1, -1, b""), 0)
    for state in _STATES.values():
        state.kill_all()  # the bots first: os._exit runs no cleanup
    os._exit(1)


# --- the client side ---------------------------------------------------------------------------

def _distributed():
    try:
        import distributed
    except ImportError:
        raise ArenaError(MISSING_EXTRA) from None
    return distributed


class Cluster:
    """A connection to a Dask scheduler (and the LocalCluster behind it for `local:N`)."""

    def __init__(self, address: str):
        distributed = _distributed()
        self.address = address = str(address).strip()
        self.local = None
        self.limits_told: set = set()  # the hosts whose weaker sandbox limits were told
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

        try:
            n = int(address.split(":", 1)[1])
        except ValueError:
            n = 0
        most = MAX_LOCAL_PER_CORE * (os.cpu_count() or 1)
        if not 1 <= n <= most:
            raise ArenaError(f"--scheduler {address!r}: local:N needs a number of workers N from 1 "
                             f"to {most} ({MAX_LOCAL_PER_CORE} per core of this machine)")
        # worker processes are spawned (now and when one is replaced) without re-running __main__
        self._hidden = main_module_hidden()
        self._hidden.__enter__()
        with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
                              **LOCAL_QUIET}):
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

def limits_note(info: dict, told: set, require: bool) -> str | None:
    """For a worker's setup `info`: the note that its machine cannot enforce every limit of a
    sandboxed bot, once per host (`told`: the hosts told already; None when nothing is to be
    told); with `require`, ArenaError instead."""
    from kdtourney.external.sandbox import weaker_limits_line

    if not info.get("missing"):
        return None
    line = weaker_limits_line(f"worker {info['address']} ({info['host']})", info["missing"])
    if require:
        raise ArenaError(f"--require-limits: {line}")
    if info["host"] in told:
        return None
    told.add(info["host"])
    return line


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


class DaskService:
    """The game service on a Dask cluster: the same interface as the local one
    (kdtourney.service.local.LocalService: submit, step, cancel, busy, queued, close), for as long
    as the command holds the cluster. settings, isolate: how bots in their own process run
    (kdtourney.external.ProcessSettings; every bot in its own); identities: {entrant:
    identity} as the store records them, which every worker checks what it loads against.
    Sandboxed, a host that cannot enforce every limit is a note (once per host and connection), or
    with `require_limits` an ArenaError."""

    def __init__(self, cluster, tournament, registry, *, hang_timeout, settings, isolate,
                 identities, require_limits=False, on_note=None):
        self.cluster, self.client = cluster, cluster.client
        self.require_limits = require_limits
        self.tournament = tournament
        self.on_note = on_note
        self.hang_timeout = hang_timeout
        # what the workers build their state from: the bots' sources and, sandboxed, what the
        # modules define; how the bots run; the entrants' identities, by label
        self.sources = registry.source_files()
        self.listed = None if settings.sandbox is None else registry.listings()
        self.settings, self.in_own_process = settings, isolate
        self.identities = dict(identities)
        # this run's games in the workers' traces: a long-lived cluster's nannies may still hold
        # the trace of a worker that died in an earlier run's game of the same index
        self.run = uuid.uuid4().bytes
        self.shipped = 0                         # shipments made (one more per new sources)
        self.plugin = None                       # the name of the plugin of the last one
        self.key = None                          # ... and of the workers' state built from it
        self.base = 0                            # the entrants it holds
        self.heard: dict = {}                    # worker -> the entrants it said it knows
        self.specs: dict = {}                    # game index -> GameSpec, submitted and not done
        self.sent: dict = {}                     # ... as sent: seats index self.entrants
        self.sendings: dict = {}                 # ... -> how many times it was sent to play
        self.entrants = Entrants(tournament)
        self.mapping = tuple(range(len(tournament.entrants)))
        self.pending: collections.deque = collections.deque()
        self.inflight: dict = {}                 # future -> [game indexes]
        self.isolate: set[int] = set()           # games played one per task
        self.policy = ForfeitPolicy(self.sent, self.entrants.labels)
        self.killed: set[str] = set()            # workers we killed (hung)
        self.kills = 0                           # ... how many in all
        self.kills_at: dict = {}                 # future -> self.kills when it was submitted
        self.game_seconds = None                 # running mean of a game's duration
        self.known: dict = {}
        self.notes = collections.deque(maxlen=NOTES_KEPT)  # the latest (on_note has them all)
        self.losses = 0
        self.finished: list = []
        self.ready = False
        self.last_watch = 0.0
        self.threads = 1

    @property
    def workers(self) -> int:
        return sum(self.cluster.wait_for_workers().values())

    def note(self, text):
        self.notes.append(text)
        if self.on_note is not None:
            self.on_note(text)

    # the interface every backend has

    def join(self, tournament, identities, registry=None) -> None:
        """As LocalService.join. New entrants go to each worker with the next tasks it plays,
        nothing restarts; new sources make a new shipment and state on every worker at the next
        step (the old state's bot processes stop)."""
        if registry is not None and self.changed(registry):
            self.sources = registry.source_files()
            self.listed = None if self.settings.sandbox is None else registry.listings()
            self.entrants = Entrants(tournament)
            self.policy = ForfeitPolicy(self.sent, self.entrants.labels)
            self.tournament = tournament
            self.identities = {}
            self.ready = False
        self.mapping, _ = self.entrants.join(tournament)
        self.identities.update(identities)

    def changed(self, registry) -> bool:
        """As LocalService.changed."""
        now = None if self.settings.sandbox is None else registry.listings()
        return (registry.source_files(), now) != (self.sources, self.listed)

    def submit(self, specs) -> None:
        for spec in specs:
            self.specs[spec.game] = spec
            self.sent[spec.game] = replace(spec, seats=tuple(self.mapping[e] for e in spec.seats))
            self.pending.append(spec.game)

    @property
    def queued(self) -> int:
        return len(self.pending)

    @property
    def busy(self) -> bool:
        return bool(self.pending) or bool(self.inflight)

    def cancel(self) -> list:
        dropped = [self._forget(g) for g in self.pending]
        self.pending.clear()
        return dropped

    def step(self, timeout: float = POLL_SECONDS) -> list:
        """Submit tasks for the queued games, wait up to `timeout` seconds, and return the games
        finished since the last call (kdtourney.service.local.Finished)."""
        distributed = _distributed()
        if not self.ready:
            self.setup()
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

    def close(self):
        for future in self.inflight:
            future.cancel()
        self.inflight, self.kills_at = {}, {}
        self.unship()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def commit(self, g, result=None, failed=None):
        """Hand `g` back, once (a replayed batch's copy of it is ignored: not ours any more)."""
        if failed is not None and g in self.pending:  # failed while waiting to be played again
            self.pending.remove(g)
        self.finished.append(Finished(self._forget(g), result, failed))

    def _forget(self, g):
        self.sent.pop(g)
        self.sendings.pop(g, None)
        self.policy.forget(g)
        self.isolate.discard(g)
        return self.specs.pop(g)

    # setup

    def setup(self):
        """Ship what the workers build their state from, once per worker (a worker plugin,
        which reaches those that join later too), and build and warm up the state on each."""
        from kdtourney import __version__

        workers = self.cluster.wait_for_workers()
        self.unship()
        self.shipped += 1
        self.key = f"{self.run.hex()}-{self.shipped}"
        plugin = _shipment_plugin()(self.key, dict(
            sources=self.sources, tdict=self.entrants.table(self.tournament).to_dict(),
            settings=self.settings, isolate=self.in_own_process, listed=self.listed,
            identities=dict(self.identities)))
        self.client.register_plugin(plugin, name=plugin.name)
        self.plugin = plugin.name
        self.base, self.heard = len(self.entrants.pairs), {}
        self.known = dict(workers)
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
                try:
                    info = self._setup_result(future, addr)
                    if info is None:  # the worker left before setting up: no games go to it
                        self.known.pop(addr, None)
                        continue
                except WorkerError as exc:
                    raise ArenaError(str(exc)) from None
                except Exception as exc:  # noqa: BLE001 - a worker lost during setup: Dask retries
                    if type(exc).__name__ in ("KilledWorker", "CancelledError"):
                        continue
                    raise HarnessError(f"a worker failed to set up: {_one_line(exc)}",
                                       trace=_trace(exc)) from None
                self.heard[addr] = info["known"]
                if info["kdtourney"] != __version__:
                    raise ArenaError(f"worker {info['address']} runs kdtourney {info['kdtourney']}, "
                                     f"this machine {__version__}: install the same version on "
                                     "every machine")
                note = limits_note(info, self.cluster.limits_told, self.require_limits)
                if note is not None:
                    self.note(note)
        many = {a: n for a, n in workers.items() if n > 1}
        if many:
            addr, n = next(iter(many.items()))
            self.note(f"worker {addr} has {n} threads: games in threads of one process share the "
                      "GIL (timings, --move-time-limit); start workers with --nthreads 1")

    def unship(self):
        """The workers forget the last shipment, and stop the bot processes of its state."""
        if self.plugin is None:
            return
        name, self.plugin = self.plugin, None
        try:
            if self.client.status == "running":
                self.client.unregister_worker_plugin(name)
        except Exception:  # noqa: BLE001 - a broken connection: the worker's close tears it down
            pass

    def _setup_result(self, future, addr):
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

    # batches

    def batch_size(self, threads):
        size = max(1, min(MAX_BATCH, len(self.pending) // (4 * max(1, threads))))
        if self.game_seconds is None:
            return min(size, FIRST_BATCH)
        return max(1, min(size, int(TARGET_TASK_SECONDS / max(self.game_seconds, 1e-6))))

    def joined(self) -> tuple:
        """The entrants a task carries: (start, [(label, spec)], {label: identity}) from the
        fewest any worker said it knows (a worker that never said: those it was shipped)."""
        start = min((self.heard.get(addr, self.base) for addr in self.known), default=self.base)
        pairs = self.entrants.pairs[start:]
        return start, pairs, {label: self.identities[label] for label, _ in pairs}

    def refill(self, threads):
        size = self.batch_size(threads)
        joined = self.joined()
        while self.pending and len(self.inflight) < 2 * max(1, threads):
            batch = [self.pending.popleft()]
            if batch[0] not in self.isolate:
                while self.pending and len(batch) < size and self.pending[0] not in self.isolate:
                    batch.append(self.pending.popleft())
            for g in batch:
                self.sendings[g] = self.sendings.get(g, 0) + 1
            games = [(self.sent[g], self.policy.forced(g), self.sendings[g]) for g in batch]
            future = self.client.submit(
                play_batch, self.key, self.run, joined, games, pure=False,
                key=f"kdtourney-games-{batch[0]}+{len(batch)}-{uuid.uuid4().hex[:8]}")
            self.inflight[future] = batch
            self.kills_at[future] = self.kills

    def requeue(self, games):
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
            self.heard[addr] = known
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
            if len(games) > 1:
                self.isolate.update(games)
                self.note(f"games {games[0]}..{games[-1]} killed {ALLOWED_FAILURES + 1} workers; "
                          "playing them one by one")
                self.requeue(games)
            else:
                g = games[0]
                before = self.policy.losses[g]
                self.await_deaths(g, before)
                if g in self.specs and self.policy.losses[g] == before and not bystander:
                    # no nanny told of these deaths (none there, a machine lost), or the task
                    # only waited on workers another task killed, which Dask counts as well:
                    # one loss outside any bot call. Not when we killed workers (hung in other
                    # games) while it waited: the game is sent again, a new task
                    self.lost(g, -1, -1, f"was on {ALLOWED_FAILURES + 1} workers that died")
                if g in self.specs:
                    self.requeue([g])
            return True
        raise HarnessError(f"a worker failed: {_one_line(exc)}",
                           trace=_trace(exc, future.traceback()))

    # watching the workers

    def watch(self):
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

    def collect_deaths(self):
        """Ask the nannies where their dead workers were (`collect_deaths`), and blame those
        games as the local runner does."""
        try:
            reports = self.client.run(collect_deaths, self.run, nanny=True, on_error="return")
        except Exception:  # noqa: BLE001 - no nannies (or going away): the losses stay unknown
            return
        for deaths in reports.values():
            if isinstance(deaths, list):
                for game, seat, call in deaths:
                    if game in self.specs:
                        self.lost(game, seat, call, "died")

    def await_deaths(self, game, before):
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

    def hung(self, addr, game, seat, call, limit):
        self.losses += 1
        why = f"hung (no progress for {limit:g} s)"
        self.lost(game, seat, call, why, addr, hung=True)
        self.end_worker(addr)

    def end_worker(self, addr):
        """Make the worker `addr` exit (its nanny starts a new one), counted where it is called."""
        self.killed.add(addr)
        self.kills += 1
        try:
            self.client.run(_exit_now, workers=[addr], on_error="ignore")
        except Exception:  # noqa: BLE001 - it is gone, as wanted
            pass

    def lost(self, game, seat, call, why, addr=None, hung=False, times=1):
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


def _trace(exc, tb=None) -> str:
    """The traceback of an exception a Dask worker raised, as it was raised there (`tb`: the
    task's, where the exception does not carry it)."""
    import traceback

    return "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__))


def _one_line(exc) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[-1]}" if text else type(exc).__name__


__all__ = ["Cluster", "WorkerError", "play_batch", "setup_worker",
           "limits_note", "MISSING_EXTRA"]
