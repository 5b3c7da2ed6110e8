"""Playing a tournament on local worker processes, every finished game committed to the store.

Parent and workers
------------------
- The parent plans the games (`Tournament.plan`), opens or creates the store, and plays exactly
  the games the store lacks (so a re-run or `--resume` finishes an interrupted tournament). Only the
  parent writes to SQLite: one transaction per finished game.
- Workers are started with the 'spawn' context (never fork after Numba threads). Before its first
  game, every worker loads, or on a fresh install compiles, the kernels of the games: the engine's,
  and a few decisions of each entrant's bot (`workers.warm_up`), so no bot's call is charged with
  it. Workers warming up together compile each kernel once between them, each starting on other
  kernels (Numba caches on disk; one process compiles a kernel while the others wait to load it).
- Bots reach the workers as the parent's registry's sources (`BotRegistry.from_sources`): every
  worker plays with the code the parent checked.
- Games go to workers in batches over one pipe per worker (guided: a batch is about a quarter of
  each worker's share of the games left, at most 32, so batches shrink towards the end; a worker
  holds at most two); results come back per game, and the parent commits each as it arrives.
  A shared array tells the parent which game, seat and bot call each worker is in, and since when.

Bots in their own process
-------------------------
TOML bots (and, with `isolate`, every Python entrant, through `kdtourney serve`) play in processes
of a `ProcessPool` per worker (kdtourney.bots.external), started once each before the run
(`BotRegistry.start_check`). A worker records its bots' process groups in a shared array: if it
dies, the parent kills them (the bots themselves die with it by PR_SET_PDEATHSIG, what they
started would not); if the parent dies, the worker gets SIGTERM and kills them. Their stderr goes
to FOLDER/logs/<entrant>.log. With `sandbox` every entrant plays so, each process inside a sandbox
(kdtourney.bots.external.sandbox); a worker then does not run the bot modules but takes what they
define from the parent's registry (`BotRegistry.listings`), and the store's seed secret keys the
seeds.

Dead and hung workers
---------------------
A worker that dies (os._exit, a segfault, the OOM killer) or hangs (a single call into a bot, or
the harness, making no progress for `hang_timeout` seconds, or for a decision of an in-process
bot under a clock, for what the clock allows it plus its margin and HANG_GRACE: then the worker is
killed, kdtourney.arena.forfeit.hang_limit) is replaced and its unfinished games are played again. The shared array tells which game, seat and bot call it
was in; kdtourney.arena.forfeit decides, as for a Dask cluster, whether the game is played again
as it was, with that seat's bot forfeiting at that call, or stored as a failed game.

Determinism: a game's bots, seeds and deal depend only on the tournament and the game's index, so
the store is the same whatever the number of workers and however often the run was interrupted
(timings and timeouts aside).
"""

from __future__ import annotations

import collections
import contextlib
import datetime
import multiprocessing as mp
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field, replace
from multiprocessing.connection import wait
from pathlib import Path

from kdtourney import interrupts
from kdtourney.arena import store as _store
from kdtourney.arena.forfeit import FAIL, ForfeitPolicy, failed_rows, hang_limit
from kdtourney.arena.match import MatchResult, play_match
from kdtourney.arena.play import CONFIG_KEY as PLAY_KEY
from kdtourney.arena.play import PlaySettings, settle, stored_settings
from kdtourney.arena.schedule import keyed
from kdtourney.arena.tournament import ArenaError, Tournament, default_name, differences
from kdtourney.arena.workers import bot_factories, check_loaded, main_module_hidden, warm_up
from kdtourney.bots.external import (DEFAULT_STARTUP_TIMEOUT, QUIT_GRACE, ProcessPool,
                                     ProcessSettings, Sandbox, SandboxError, StartupError,
                                     die_with_parent, kill_group)
from kdtourney.bots.external.sandbox import bwrap_path, missing_limits, weaker_limits_line

MAX_BATCH = 32            # games per task at most
DEFAULT_HANG_TIMEOUT = 600.0
_SLOT = 5                 # status array per worker: game, seat, call, monotonic time of the last
                          # step, what that call may take (a clocked in-process decision; else -1)
_GROUPS = 64              # bot process groups recorded per worker


def default_hang_timeout(move_time_limit: float | None,
                         startup_timeout: float = DEFAULT_STARTUP_TIMEOUT) -> float:
    """Seconds without progress after which a worker counts as hung: 600, or with a move time limit
    max(30, 10 x the limit); at least 10 s more than a bot in its own process may take to start.
    (A clocked decision of an in-process bot counts as hung sooner: forfeit.hang_limit.)"""
    if move_time_limit is None:
        return max(DEFAULT_HANG_TIMEOUT, startup_timeout + 10.0)
    return max(30.0, 10.0 * move_time_limit, startup_timeout + 10.0)


def available_cores() -> int:
    """The cores this process may run on (the default number of workers)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(workers: int | None) -> int:
    """The local worker processes asked for (None: every core); ArenaError below one."""
    workers = workers or available_cores()
    if workers < 1:
        raise ArenaError(f"--workers must be at least 1, not {workers}")
    return workers


@contextlib.contextmanager
def holding(folder, scheduler=None):
    """Hold `folder`'s lock (ArenaError when another command holds it) and, for a scheduler
    address, a connection to its Dask cluster, opened first so that a bad address leaves the store
    untouched; yields the Cluster (an open one given as `scheduler` is used and left open), or
    None to play on local processes. Both are let go when the block ends."""
    with contextlib.ExitStack() as stack:
        cluster = scheduler
        if isinstance(scheduler, str):
            from kdtourney.arena.cluster import Cluster

            cluster = Cluster(scheduler)
            stack.callback(cluster.close)
        try:
            stack.enter_context(_store.locked(folder))
        except _store.StoreError as exc:
            raise ArenaError(str(exc)) from None
        yield cluster



@contextlib.contextmanager
def holding_workers(folder, scheduler=None, workers: int | None = None):
    """`holding`, for the commands that call run_tournament chunk after chunk (sprt, tune, ladder):
    yields (the Cluster or None, the workers to size chunks for: the cluster's, else `workers`
    local processes, default one per core)."""
    workers = worker_count(workers)
    with holding(folder, scheduler) as cluster:
        if cluster is not None:
            workers = sum(cluster.wait_for_workers().values())
        yield cluster, workers

# --- the worker process ------------------------------------------------------------------------

def _worker_main(slot, conn, status, groups, sources, tournament_dict, warm, settings, isolate,
                 identities, listed):
    """A worker: receives batches [(game spec, forced faults)], sends ('game', index, MatchResult)
    per game. Its bots in their own process are recorded in `groups` (their process groups, which
    the parent kills should this worker die) and stopped when it ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business
    pool = ProcessPool(settings, track=lambda pids: _record_groups(groups, slot, pids))
    _exit_with_parent(pool)
    try:
        _work(slot, conn, status, pool, sources, tournament_dict, warm, isolate, identities,
              listed)
    finally:
        pool.close()
    _quick_exit(conn)


def _work(slot, conn, status, pool, sources, tournament_dict, warm, isolate, identities, listed):
    base = slot * _SLOT
    try:
        import platform

        from kdtourney.bots.registry import BotRegistry
        from kdtourney.engine import warm_up as warm_up_engine

        tournament = Tournament.from_dict(tournament_dict)
        # sandboxed, a bot module runs in its sandbox only: here it is what the parent listed
        registry = BotRegistry.from_sources(sources, listed=listed)
        try:
            check_loaded(registry, tournament, identities, f"{platform.node()} (worker {slot})",
                         local=True)
        except ArenaError as exc:
            conn.send(("refused", str(exc)))
            return
        factories = bot_factories(registry, tournament, pool, isolate)
        rules = {p: tournament.rules_for(p) for p in tournament.players}

        def touch():
            status[base + 3] = time.monotonic()
            status[base + 4] = -1.0
            status[base] = -2  # warming up

        # Loading the engine's kernels takes a fresh process a good part of a second (several on a
        # loaded machine): in the first game it would count against the seat called last.
        if warm:
            warm_up(tournament, registry, touch, builtin_only=pool.settings.sandbox is not None,
                    isolate=isolate, first=slot)
        else:
            touch()
            warm_up_engine()
        status[base] = -1
        conn.send(("ready",))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which stops
        conn.send(("fatal", "".join(traceback.format_exception_only(type(exc), exc)).strip()))
        return
    current = [-1]

    def monitor(seat, call, limit=None):
        status[base + 1] = seat
        status[base + 2] = call
        status[base + 4] = -1.0 if limit is None else limit
        status[base + 3] = time.monotonic()
        if seat == -1 and call == -1:
            status[base] = -1

    while True:
        try:
            batch = conn.recv()
        except EOFError:
            batch = None
        if batch is None:
            return
        for spec, forced in batch:
            current[0] = spec.game
            status[base] = spec.game
            pool.new_game(spec.game, spec.deal_seeds)
            monitor(-1, 0)
            try:
                result = play_match(
                    rules[spec.n_players], spec.deal_seeds, spec.bot_seeds,
                    [factories[e] for e in spec.seats],
                    clock=tournament.time_control, margin=pool.settings.margin, forced=forced,
                    monitor=monitor)
            except BaseException:  # noqa: BLE001 - a harness bug: the parent stops the tournament
                conn.send(("fatal", f"game {spec.game}: " + traceback.format_exc()))
                return
            conn.send(("game", spec.game, result))


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
    parent = mp.parent_process()
    die_with_parent(signal.SIGTERM, parent.pid if parent is not None else None)


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


# --- the parent --------------------------------------------------------------------------------

@dataclass
class RunOutcome:
    """What a run did: the folder, games in the plan, stored before, played now, forfeits now,
    games that could not be finished now, worker deaths and hangs, seconds, whether Ctrl-C
    stopped it."""

    folder: Path
    total: int
    stored_before: int
    played: int = 0
    faults: int = 0
    failed: int = 0
    worker_losses: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    notes: list = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.stored_before + self.played >= self.total


class _Worker:
    def __init__(self, slot, process, conn):
        self.slot = slot
        self.process = process
        self.conn = conn
        self.inflight: list[int] = []  # game indexes sent, in the order the worker plays them
        self.ready = False


def rows_of(tournament: Tournament, spec, result: MatchResult) -> tuple[dict, list, list]:
    """The store rows (game, results, faults) of a played game."""
    game = dict(game=spec.game, block=spec.block, arrangement=spec.arrangement,
                n_players=spec.n_players, deal_seeds=list(spec.deal_seeds), status=result.status,
                duration=result.duration, moves=result.moves, error=result.error)
    results = []
    for seat in result.seats:
        row = dict(vars(seat))
        row.update(game=spec.game, entrant=tournament.entrants[spec.seats[seat.seat]])
        results.append(row)
    faults = [dict(seat=f.seat, entrant=tournament.entrants[spec.seats[f.seat]], kind=f.kind,
                   message=f.message, call=f.call, stderr=f.stderr) for f in result.faults]
    return game, results, faults


class _Sink:
    """Where finished games go, whichever backend played them: one store transaction per game, the
    outcome's counts and the reporter. Only the parent process writes the store."""

    def __init__(self, tournament, specs, st, outcome, reporter):
        self.tournament, self.specs, self.st = tournament, specs, st
        self.outcome, self.reporter = outcome, reporter

    def commit(self, game_index, result):
        """Store a played game (a MatchResult)."""
        spec = self.specs[game_index]
        game, results, faults = rows_of(self.tournament, spec, result)
        self.st.add_game(game, results, faults)
        self.outcome.played += 1
        self.outcome.faults += len(faults)
        if self.reporter is not None:
            self.reporter.game(spec, results, faults)

    def fail(self, game_index, message):
        """Store a game that could not be finished (kdtourney.arena.forfeit.failed_rows)."""
        spec = self.specs[game_index]
        game, results, faults = failed_rows(spec, self.tournament.entrants, message)
        self.st.add_game(game, results, faults)
        self.outcome.played += 1
        self.outcome.failed += 1
        if self.reporter is not None:
            self.reporter.game(spec, results, faults)


def session_meta(name: str, registry_dirs=()) -> dict:
    """What the store keeps about the run besides the tournament and the play settings: name,
    command line, versions, platform, the bot folders (absolute; --resume reuses them)."""
    import platform

    import numba
    import numpy

    from kdtourney import __version__

    return dict(name=name, command=" ".join([Path(sys.argv[0]).name] + sys.argv[1:]),
                kdtourney=__version__, python=platform.python_version(), numba=numba.__version__,
                numpy=numpy.__version__, platform=platform.platform(),
                bots_dirs=[str(Path(d).resolve()) for d in registry_dirs], created=_store.now())


def open_for(tournament: Tournament, folder, meta: dict, identities: dict | None = None,
             play: PlaySettings | None = None) -> tuple[_store.Store, list[str]]:
    """The store of `folder` for this tournament and notes for the user: created (with the
    entrants' `identities` and the `play` settings) if the folder has none; refused (ArenaError)
    if it holds another tournament, another entrant's code (`check_code`), games played under
    other play settings (`record_play`), or is not a valid store."""
    folder = Path(folder)
    if _store.exists(folder):
        try:
            st = _store.open_store(folder)
        except _store.StoreError as exc:
            raise ArenaError(str(exc)) from None
        try:
            diff = differences(st.tournament, tournament.to_dict())
            if diff:
                more = f" (and {len(diff) - 1} more)" if len(diff) > 1 else ""
                raise ArenaError(f"{folder} holds another tournament: {diff[0]}{more}; choose a "
                                 f"new --out, or finish that one with {resume_command(folder)}")
            notes = check_code(st, identities, folder) if identities is not None else []
            record_play(st, play or PlaySettings(), folder)
        except BaseException:
            st.close()
            raise
        sessions = st.meta.get("sessions", 0)
        st.update_meta(sessions=sessions + 1, last_command=meta.get("command"))
        return st, notes
    try:
        st = _store.Store.create(folder, tournament.to_dict(), dict(meta, sessions=1), identities)
    except _store.StoreError as exc:
        raise ArenaError(str(exc)) from None
    record_play(st, play or PlaySettings(), folder)
    return st, []


def record_play(st: _store.Store, play: PlaySettings, folder) -> None:
    """Check `play` against the play settings `st` records (ArenaError naming the first that
    differs, `kdtourney.arena.play.settle`) and record them (a store older than the record gets
    it now)."""
    settle(stored_settings(st.config(), played=st.count_games() > 0), play.to_dict(), folder)
    st.set_config(PLAY_KEY, play.to_dict())


def check_sandbox() -> None:
    """ArenaError naming the package to install when this machine has no bwrap."""
    try:
        bwrap_path()
    except SandboxError as exc:
        raise ArenaError(str(exc)) from None


def check_limits(require: bool = False) -> str | None:
    """The line saying which limits of a sandboxed bot this machine cannot enforce (None: it
    enforces all); with `require`, ArenaError instead."""
    missing = missing_limits()
    if not missing:
        return None
    import platform

    line = weaker_limits_line(f"this machine ({platform.node()})", missing)
    if require:
        raise ArenaError(f"--require-limits: {line}")
    return line


def start_bots(registry, tournament: Tournament, startup_timeout: float | None = None,
               sandbox: Sandbox | None = None):
    """Start every TOML bot of `tournament` once (in its `sandbox`, if any) and exchange hello (its
    answer goes into the bot's identity); ArenaError naming the file of a bot that does not start
    or answer within `startup_timeout` seconds."""
    if sandbox is not None:
        check_sandbox()
    settings = ProcessSettings(startup_timeout=startup_timeout or DEFAULT_STARTUP_TIMEOUT,
                               sandbox=sandbox)
    try:
        registry.start_check(tournament.specs, settings)
    except StartupError as exc:
        raise ArenaError(str(exc)) from None


def entrant_identities(registry, tournament: Tournament) -> dict:
    """{entrant label: `BotRegistry.identity`} of every entrant of `tournament`."""
    registry.check(tournament.specs)  # sandboxed, the values of all asked at once
    return {label: registry.identity(spec)
            for label, spec in zip(tournament.entrants, tournament.specs)}


def check_code(st: _store.Store, identities: dict, folder) -> list[str]:
    """Check that every entrant's code is the code its stored games were played with: ArenaError
    (one line naming the entrant and what changed) if not, so old and new games never mix. A store
    made before identities were recorded gets them now; returns a note saying so."""
    stored = st.entrants()
    if stored is None:
        done = st.count_games()
        st.record_entrants(identities)
        st.update_meta(entrants_recorded_after=done)
        return [f"{folder} is older than kdtourney's record of what code plays: the code of its "
                f"{done} stored games is unknown; the entrants' code is recorded from now on"]
    for entrant, now in identities.items():
        before = stored.get(entrant)
        if before is not None and before.get("digest") != now["digest"]:
            changed = [k for k in sorted(set(before) | set(now))
                       if k not in ("digest", "origin") and before.get(k) != now.get(k)]
            what = "; ".join(f"{k} {_short(before.get(k))} (stored) vs {_short(now.get(k))} (now)"
                             for k in changed)
            raise ArenaError(f"{entrant} ({now.get('origin', now['kind'])}): its code changed "
                             f"since the games stored in {folder} ({what}); play the new code "
                             "under a new --out, or restore the code that played")
    return []


def _short(value) -> str:
    """A hash cut to 12 characters; anything else as it is."""
    text = str(value)
    return text[:12] if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else text


REPORTS = Path("reports")  # where new tournament folders go (relative to the working directory)
LOGS = "logs"              # the entrants' stderr logs, in the tournament folder


def asked_folder(out=None, name=None) -> Path | None:
    """The folder a run was given: `out`, else reports/<name>, else None (then `new_folder` once
    the tournament is known). ArenaError for a name that is a path (--out takes those)."""
    if out:
        return Path(out)
    if name:
        if name in (".", "..") or "/" in name or os.sep in name:
            raise ArenaError(f"--name {name!r} names a folder of {REPORTS}/, not a path: give a "
                             "name without '/' (or --out DIR)")
        return REPORTS / name
    return None


def stored_seed(folder) -> int | None:
    """The seed of the tournament stored in `folder`, None if it holds none (or is None): the
    same command without --seed on the same folder plays the same games."""
    if folder is not None and _store.exists(folder):
        return _store.load_config(folder)["tournament"]["seed"]
    return None


def new_folder(tournament: Tournament, prefix: str = "", stamp: str | None = None) -> Path:
    """A folder not yet taken, reports/<prefix><bots>-<stamp> (`default_name`; stamp: now, to the
    second), with -2, -3, ... appended if needed (two runs in one second get two folders)."""
    if stamp is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = base = REPORTS / f"{prefix}{default_name(tournament, stamp)}"
    for i in range(2, 1000):
        if not folder.exists():
            break
        folder = base.with_name(f"{base.name}-{i}")
    return folder


def resume_command(folder) -> str:
    """The command that continues what `folder` holds: kdtourney run, sprt, tune or ladder
    --resume FOLDER."""
    try:
        config = _store.load_config(folder)
    except _store.StoreError:
        config = {}
    kind = next((k for k in ("sprt", "tune", "ladder") if k in config), "run")
    return f"kdtourney {kind} --resume {folder}"


def load_tournament(folder) -> tuple[Tournament, dict]:
    """The stored tournament and meta of a tournament folder (for --resume); ArenaError if the
    folder holds none, or holds an SPRT, a tune or a ladder (their games are made as they go:
    only their own command continues them)."""
    try:
        config = _store.load_config(folder)
    except _store.StoreError as exc:
        raise ArenaError(str(exc)) from None
    # an SPRT's, a tune's or a ladder's games are made as it goes: only its command continues it
    for kind, what in (("sprt", "an SPRT"), ("tune", "a tune"), ("ladder", "a ladder")):
        if kind in config:
            raise ArenaError(f"{folder} holds {what}: continue it with {resume_command(folder)}")
    return Tournament.from_dict(config["tournament"]), config.get("meta", {})


def stored_bots_dirs(meta: dict) -> list[str]:
    """The bot folders of a stored run (`session_meta`) that still exist: a resumed run given no
    bot folders uses them."""
    return [d for d in meta.get("bots_dirs", []) if Path(d).is_dir()]


def check_entrants(registry, tournament: Tournament, what: str = "tournament") -> None:
    """Every entrant of a stored tournament (or test: `what`) resolves in `registry`, bot and
    parameters; ArenaError for the first one that does not."""
    from kdtourney.bots.registry import EntrantError

    for spec in tournament.specs:
        try:
            registry.resolve(spec)
        except EntrantError as exc:
            raise ArenaError(f"{exc} (needed by the stored {what}; --bots-dir?)") from None


def run_tournament(tournament: Tournament, folder, registry, *, workers: int | None = None,
                   meta: dict | None = None, reporter=None, hang_timeout: float | None = None,
                   warm: bool = True, scheduler: str | None = None,
                   play: PlaySettings | None = None, startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
                   check_bots: bool = True, require_limits: bool = False) -> RunOutcome:
    """Play the games of `tournament` that `folder`'s store lacks; returns a RunOutcome.

    registry: the BotRegistry the entrants were checked against (its sources go to the workers).
    workers: processes (default: all cores). reporter: an object with start/game/note/stop (see
    kdtourney.arena.progress), or None. Raises ArenaError for a store that is not this tournament's.
    scheduler: play on a Dask cluster instead of local processes (`workers` is then ignored):
    tcp://HOST:PORT, a scheduler file, or local:N (see kdtourney.arena.cluster), or an open
    `Cluster` (left open: an SPRT plays its chunks on one).
    play: how the bots are played (kdtourney.arena.play: isolate, the margin beyond the clock,
    the sandbox and its memory limit; default PlaySettings()), recorded with a new store and
    checked against an existing one's. Sandboxed, every entrant (Python ones through `kdtourney
    serve`) plays in its own process inside a sandbox (kdtourney.bots.external.sandbox);
    ArenaError when bwrap is not installed, and with `require_limits` when a machine that plays
    cannot enforce every limit (`check_limits`; on a cluster, each worker's).
    Bots in their own process (TOML bots; isolated or sandboxed, every bot, through `kdtourney
    serve`): `startup_timeout` seconds to answer hello; with `check_bots` each TOML bot is
    started once before anything else (ArenaError naming its file if one does not start); their
    stderr goes to FOLDER/logs/<entrant>.log.
    """
    started = time.perf_counter()
    play = play or PlaySettings()
    sandbox = play.sandbox_for(folder)
    if sandbox is not None:
        check_sandbox()
        if scheduler is None:
            check_limits(require_limits)
    workers = worker_count(workers)
    settings = ProcessSettings(tournament.time_control, play.margin, startup_timeout,
                               str(Path(folder) / LOGS), sandbox)
    if check_bots:
        start_bots(registry, tournament, startup_timeout, sandbox)
    plan = tournament.plan()
    specs = plan.games
    identities = entrant_identities(registry, tournament)
    with contextlib.ExitStack() as stack:
        cluster = stack.enter_context(holding(folder, scheduler))
        st, notes = open_for(tournament, folder, meta or {}, identities, play)
        stack.callback(st.close)
        done = st.done_games()
        # sandboxed from the start, the seeds are keyed with the store's secret (hidden from bots)
        secret = st.seed_secret(create=sandbox is not None and not done)
        if secret is not None:
            specs = [None if spec is None else keyed(spec, secret) for spec in specs]
        if reporter is not None:
            stack.callback(reporter.stop)
        # a plan may leave games out (None: a ladder plays the blocks it chose, not all before)
        pending = collections.deque(g for g in range(len(specs))
                                    if g not in done and specs[g] is not None)
        outcome = RunOutcome(folder=Path(folder), total=len(specs), stored_before=len(done),
                             notes=list(notes))
        hang_timeout = hang_timeout or default_hang_timeout(
            tournament.time_control.longest_decision, startup_timeout)
        if cluster is not None and pending:
            workers = sum(cluster.wait_for_workers().values())
        if reporter is not None:
            reporter.start(tournament, plan, st, workers=min(workers, max(1, len(pending))))
            for note in notes:
                reporter.note(note)
        if pending:
            try:
                if cluster is not None:
                    cluster.play(tournament, specs, pending, _Sink(tournament, specs, st, outcome,
                                                                   reporter),
                                 registry, outcome, reporter, hang_timeout,
                                 replace(settings, log_dir=None), play.in_own_process,
                                 identities, require_limits=require_limits)
                else:
                    _play(tournament, specs, pending, st, registry, min(workers, len(pending)),
                          outcome, reporter, hang_timeout, warm, settings, play.in_own_process,
                          identities)
            except KeyboardInterrupt:
                outcome.interrupted = True
        outcome.seconds = time.perf_counter() - started
        st.update_meta(games_stored=outcome.stored_before + outcome.played)
    return outcome


def _play(tournament, specs, pending, st, registry, n_workers, outcome, reporter, hang_timeout,
          warm, settings, isolate, identities):
    ctx = mp.get_context("spawn")
    status = ctx.RawArray("d", _SLOT * n_workers)
    for i in range(len(status)):
        status[i] = -1.0
    groups = ctx.RawArray("q", _GROUPS * n_workers)
    sources = registry.source_files()
    listed = None if settings.sandbox is None else registry.listings()
    tdict = tournament.to_dict()
    policy = ForfeitPolicy(specs, tournament.entrants)
    failed_starts = 0

    def spawn(slot, warm_first):
        parent_conn, child_conn = ctx.Pipe(duplex=True)
        process = ctx.Process(target=_worker_main, name=f"kdtourney-worker-{slot}", daemon=True,
                              args=(slot, child_conn, status, groups, sources, tdict, warm_first,
                                    settings, isolate, identities, listed))
        with main_module_hidden():
            process.start()
        child_conn.close()
        return _Worker(slot, process, parent_conn)

    pool = [spawn(slot, warm) for slot in range(n_workers)]  # they share the compiling out

    sink = _Sink(tournament, specs, st, outcome, reporter)
    commit = sink.commit

    def handle(worker, message):
        kind = message[0]
        if kind == "game":
            _, game_index, result = message
            if game_index in worker.inflight:
                worker.inflight.remove(game_index)
                commit(game_index, result)
        elif kind == "ready":
            worker.ready = True
        elif kind == "fatal":
            raise ArenaError(f"a worker failed: {message[1].strip().splitlines()[-1]}")
        elif kind == "refused":  # it did not load what the store recorded
            raise ArenaError(message[1])

    def drain(worker):
        """Read whatever a (possibly dead) worker has sent."""
        try:
            while worker.conn.poll():
                handle(worker, worker.conn.recv())
        except (EOFError, OSError):
            pass

    def lose(worker, why):
        """The worker died or hung: replace it and requeue its games, blaming the current one."""
        nonlocal failed_starts
        outcome.worker_losses += 1
        drain(worker)
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join(5)
        worker.conn.close()
        _kill_groups(groups, worker.slot)  # its bots died with it; what they started goes now
        if not worker.ready:
            failed_starts += 1
            if failed_starts > 3:
                raise ArenaError(f"worker processes keep failing to start (last: {why})")
        base = worker.slot * _SLOT
        current = int(status[base])
        seat, call = int(status[base + 1]), int(status[base + 2])
        if current == -1 and worker.inflight:  # between games: the oldest unsent one was lost
            current, seat, call = worker.inflight[0], -1, -1
        requeue = list(worker.inflight)
        if current in worker.inflight:
            action, what = policy.lost(current, seat, call, why, hung=why.startswith("hung"))
            if action == FAIL:
                requeue.remove(current)
                sink.fail(current, policy.failed_message(current))
            note = f"worker {worker.slot} {why} in game {current}; {what}"
            outcome.notes.append(note)
            if reporter is not None:
                reporter.note(note)
        for g in reversed(requeue):
            pending.appendleft(g)
        for i in range(_SLOT):
            status[base + i] = -1.0
        replacement = spawn(worker.slot, False)
        pool[pool.index(worker)] = replacement

    def feed(worker):
        # guided scheduling: batches shrink as the games run out, so no worker is left with a
        # long queue while the others are idle at the end; a worker holds at most two batches
        size = max(1, min(MAX_BATCH, len(pending) // (4 * len(pool))))
        while pending and len(worker.inflight) < 2 * size:
            batch = []
            while pending and len(batch) < size:
                g = pending.popleft()
                batch.append((specs[g], policy.forced(g)))
            try:
                worker.conn.send(batch)
            except (BrokenPipeError, OSError):
                for spec, _ in reversed(batch):
                    pending.appendleft(spec.game)
                return
            worker.inflight += [spec.game for spec, _ in batch]

    try:
        while pending or any(w.inflight for w in pool):
            interrupts.check()
            for worker in pool:
                feed(worker)
            waitables = {}
            for worker in pool:
                waitables[worker.conn] = worker
                waitables[worker.process.sentinel] = worker
            for ready in wait(list(waitables), timeout=0.5):
                worker = waitables[ready]
                if worker not in pool:
                    continue  # already replaced in this round
                if ready is worker.conn:
                    try:
                        while worker.conn.poll():
                            handle(worker, worker.conn.recv())
                    except (EOFError, OSError):
                        lose(worker, f"died (exit code {_exit_code(worker.process)})")
                elif not worker.process.is_alive() or worker.process.exitcode is not None:
                    lose(worker, f"died (exit code {_exit_code(worker.process)})")
            now = time.monotonic()
            for worker in list(pool):
                base = worker.slot * _SLOT
                warming_up = status[base] == -2
                busy = status[base] >= 0 and worker.inflight or warming_up
                # Warming up may compile bot kernels (tens of seconds on a fresh install).
                limit = max(hang_timeout, DEFAULT_HANG_TIMEOUT) if warming_up else hang_limit(
                    hang_timeout, status[base + 4] if status[base + 4] >= 0 else None)
                if busy and now - status[base + 3] > limit:
                    lose(worker, f"hung (no progress for {limit:g} s)")
    finally:
        for worker in pool:
            try:
                worker.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 2.0 + QUIT_GRACE  # a worker quits its bots first
        for worker in pool:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(2)
            worker.conn.close()
            _kill_groups(groups, worker.slot)


def _exit_code(process) -> str:
    process.join(1)
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return f"{code}, {signal.Signals(-code).name}"
        except ValueError:
            return str(code)
    return str(code)


__all__ = ["run_tournament", "RunOutcome", "open_for", "session_meta", "rows_of",
           "default_hang_timeout", "asked_folder", "stored_seed", "new_folder", "load_tournament",
           "stored_bots_dirs", "check_entrants", "entrant_identities", "check_code", "start_bots",
           "check_sandbox", "check_limits"]
