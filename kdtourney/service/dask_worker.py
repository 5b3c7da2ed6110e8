"""What runs on a Dask worker for kdtourney.service.dask_service: tasks, the shipment, the trace.

    setup_worker(key) -> dict           task: build and warm up the state of the command `key`
    play_batch(key, run, joined, batch) task: play [(GameSpec, forced faults, sending)]
    progress() -> tuple                 client.run: where this worker is (game, seat, call, age,
                                        limit, sending), for the client's watchdog
    collect_deaths(run) -> list         client.run on a nanny: where its dead workers were
    exit_now()                          client.run: end a hung worker, its loss counted
    Shipment                            the worker plugin carrying what the state is built from
                                        (made on first use: shipment_plugin(); by name here)
    SHIPMENTS, STATES                   a command's key -> its shipment, this worker's state
    WorkerError                         a worker cannot play the tournament (one line)
"""

from __future__ import annotations

import atexit
import functools
import glob
import os
import platform
import struct
import tempfile
import threading
import time
import uuid

from kdtourney import __version__
from kdtourney.errors import UserError
from kdtourney.external import ProcessPool
from kdtourney.external.sandbox import missing_limits
from kdtourney.service.worker import WorkerState
from kdtourney.tournament.definition import ArenaError, HarnessError


class WorkerError(UserError):
    """A worker cannot play this tournament (a bot missing there, another version): one line."""


SHIPMENTS: dict = {}           # a command's key -> what its workers build their state from
STATES: dict = {}              # ... -> this worker's WorkerState (one command's at a time)
_STATE_LOCK = threading.Lock()
# game (-1 none, -2 setting up), seat, bot call, monotonic time, what the call may take
# (match.play_match's limit), which of the client's sendings of the game this is
_PROGRESS: list = [-1, -1, -1, 0.0, None, 0]
# game, seat, call and the run (16 bytes): a worker's last step, in a file that outlives it
TRACE = struct.Struct("<3q16s")
_TRACE_FD: list[int | None] = [None]
_TRACE_NAME = "kdtourney-trace-"  # + nanny pid + "-" + worker pid


def worker_address() -> str:
    """This Dask worker's address ('?' outside one)."""
    try:
        from distributed import get_worker  # the dask extra: present on a worker

        return get_worker().address
    except (ImportError, ValueError):
        return "?"


def state_for(key) -> WorkerState:
    """This worker's state for the command `key`, built from its shipment (`Shipment`) and
    warmed up on first use (setup_worker; a worker started since, in its first batch); building
    it stops the bot processes of another command's state. WorkerError (one line) for a worker
    that cannot play the command's entrants."""
    with _STATE_LOCK:
        state = STATES.get(key)
        if state is not None:
            return state
        shipment = SHIPMENTS.get(key)
        if shipment is None:  # registered before any task: only a bug of ours gets here
            raise HarnessError(f"worker {worker_address()} has no shipment {key}")
        close_states()  # one command at a time per worker process
        beat = DaskBeat()
        pool = ProcessPool(shipment["settings"])
        try:
            state = WorkerState(shipment["sources"], shipment["tdict"], shipment["isolate"],
                                shipment["listed"], shipment["identities"], pool, beat,
                                machine=f"worker {worker_address()}", local=False)
        except ArenaError as exc:
            pool.close()
            raise WorkerError(str(exc)) from None
        except BaseException:
            pool.close()
            raise
        finally:
            beat.idle()
        STATES[key] = state
        return state


def close_states(key=None):
    """Stop the bot processes of the command `key`'s state (default: of every command's)."""
    for k in [key] if key is not None else list(STATES):
        state = STATES.pop(k, None)
        if state is not None:
            state.close()


@functools.cache
def shipment_plugin():
    """The worker plugin class `Shipment`. Made on first use: distributed takes a fifth of a
    second to import, which every command would pay (the commands import this module through
    dask_service, and only a Dask run needs it); workers unpickling the plugin find it by name
    through the module's `__getattr__`."""
    from distributed.diagnostics.plugin import WorkerPlugin  # the dask extra; a fifth of a second

    class Shipment(WorkerPlugin):
        """What the workers of the command `key` build their state from (`shipment`: the bot
        sources, the table, how bots run, their identities), sent once to every worker, those
        that join later included. Its teardown, when the command is done with the cluster
        (unregistered) or the worker closes, stops the state's bot processes."""

        def __init__(self, key: str, shipment: dict):
            self.key, self.shipment = key, shipment
            self.name = f"kdtourney-{key}"

        def setup(self, worker):
            SHIPMENTS[self.key] = self.shipment

        def teardown(self, worker):
            with _STATE_LOCK:
                SHIPMENTS.pop(self.key, None)
                close_states(self.key)

    Shipment.__qualname__ = "Shipment"
    return Shipment


def __getattr__(name):
    if name == "Shipment":
        return shipment_plugin()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def setup_worker(key) -> dict:
    """Task: build and warm up this worker's state for the command `key`; returns what the client
    checks (sandboxed: the limits this worker's machine cannot enforce) and how many entrants the
    worker knows."""
    state = state_for(key)
    missing = missing_limits() if state.sandboxed else []
    return dict(address=worker_address(), kdtourney=__version__, host=platform.node(),
                missing=missing, known=len(state.pairs))


def trace_prefix(nanny_pid: int) -> str:
    """The start of the paths of the trace files of the workers of the nanny `nanny_pid`."""
    return os.path.join(tempfile.gettempdir(), f"{_TRACE_NAME}{nanny_pid}-")


def publish(game: int, seat: int, call: int, limit: float | None = None, run: bytes = b"",
            sending: int = 0) -> None:
    """Record where this worker is: in memory (for `progress`) and in its trace file, which its
    nanny (the parent process, which outlives it) reads if it dies (`collect_deaths`); `run`: the
    client's run whose game it is, `sending`: which sending of the game."""
    _PROGRESS[:] = [game, seat, call, time.monotonic(), limit, sending]
    fd = _TRACE_FD[0]
    if fd is None:
        path = f"{trace_prefix(os.getppid())}{os.getpid()}"
        fd = _TRACE_FD[0] = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        atexit.register(_remove, path)
    os.pwrite(fd, TRACE.pack(game, seat, call, run), 0)


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


class DaskBeat:
    """Where a Dask worker is (a WorkerState's beat, as kdtourney.service.heartbeat.Heartbeat for
    a local worker): in memory, for `progress`, one list assigned whole, and while it plays a game
    of the client's run `run`, in its trace file, for `collect_deaths`."""

    def __init__(self, run: bytes = b""):
        self.run, self.game_index, self.sending = run, -1, 0

    def warming(self) -> None:
        _PROGRESS[:] = [-2, -1, -1, time.monotonic(), None, 0]

    def game(self, game: int) -> None:
        self.game_index = game
        publish(game, -1, -1, run=self.run, sending=self.sending)

    def __call__(self, seat: int, call: int, limit: float | None = None) -> None:
        publish(self.game_index, seat, call, limit, self.run, self.sending)

    def idle(self) -> None:
        publish(-1, -1, -1)


def play_batch(key, run, joined, batch) -> tuple:
    """Task: play [(GameSpec, forced faults, sending)] of the client's run `run` (of the command
    `key`; sending: which of the client's sendings of the game, for `progress`);
    joined: (start, [(label, spec)], {label: identity}), the command's entrants from index
    `start` on, those this worker does not know join it first. Returns (this worker's address,
    how many entrants it knows, [(game index, MatchResult)]); the results are None, and nothing
    played, when the worker knows fewer than `start` entrants (it started since, or played none
    of the client's last tasks): the client sends the batch again with more entrants."""
    state = state_for(key)
    start, pairs, identities = joined
    with _STATE_LOCK:
        known = len(state.pairs)
        if known < start:
            return worker_address(), known, None
        if known < start + len(pairs):
            try:
                state.join(pairs[known - start:], identities)
            except ArenaError as exc:
                raise WorkerError(str(exc)) from None
            finally:
                state.beat.idle()
    beat = DaskBeat(run)
    out = []
    try:
        for spec, forced, beat.sending in batch:
            out.append((spec.game, state.play(spec, forced, beat)))
    finally:
        beat.idle()
    return worker_address(), len(state.pairs), out


def collect_deaths(run: bytes) -> list:
    """Run on a nanny (client.run(..., nanny=True)): [(game, seat, bot call)] where each of its
    worker processes that has died since in a game of `run` (the asking client's) was; each dead
    worker's trace is read once. The trace of a death in another run's game is left to that run:
    on a long-lived cluster it may be an earlier run's, whose game of the same index is not this
    run's."""
    import psutil  # the dask extra's (distributed needs it)

    def alive(pid):
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    out = []
    mine = trace_prefix(os.getpid())
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
                data = f.read(TRACE.size)
        except OSError:
            continue
        game, seat, call, of_run = (TRACE.unpack(data) if len(data) == TRACE.size
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


def exit_now():
    """Run on a hung worker: end it, its loss already counted (so its trace reports nothing)."""
    if _TRACE_FD[0] is not None:
        os.pwrite(_TRACE_FD[0], TRACE.pack(-1, -1, -1, b""), 0)
    for state in STATES.values():
        state.kill_all()  # the bots first: os._exit runs no cleanup
    os._exit(1)


__all__ = ["setup_worker", "play_batch", "progress", "collect_deaths", "exit_now",
           "shipment_plugin", "state_for", "close_states", "trace_prefix", "publish", "DaskBeat",
           "WorkerError", "SHIPMENTS", "STATES", "TRACE"]
