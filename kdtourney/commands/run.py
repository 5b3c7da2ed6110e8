"""Playing a command's games: the one driver loop every command runs, its setup, and `kdtourney
run`.

- Every command (`run`, `sprt`, `tune`, `ladder`) is a `Feed` run by one `Driver`: set up once
  per command (the folder's lock and a Dask cluster: `holding`; the bots' settings:
  `bot_settings`; TOML bots started once: `start_bots`; the entrants' identities and the check
  of the stored code: `entrant_identities`, `check_code`; the store opened, its play config and
  meta written once), then one loop: the feed queues blocks, the driver records them
  (`schedule_blocks`: every block is in the store before any of its games is played) and hands
  the games the store lacks to the game service, which hands each finished game back; the driver
  stores it in its own transaction (only this process writes SQLite) and tells the feed, which
  decides what comes next. So a re-run or `--resume` plays exactly what is missing.
- Where the games are played is the game service's business (kdtourney.service.local: local
  worker processes, or kdtourney.service.cluster's Dask service behind the same interface), opened
  once per command by `open_service`. `RunFeed` is the feed of `kdtourney run`: every block of
  the plan at once.
- Bots reach the workers as the parent's registry's sources (`BotRegistry.from_sources`): every
  worker plays with the code the parent checked. Their stderr goes to FOLDER/logs/<entrant>.log.
  With `sandbox` every entrant plays in its own process inside a sandbox
  (kdtourney.external.sandbox), and the store's seed secret keys the seeds.

Determinism: a game's bots, seeds and deal depend only on the tournament and the game's index, so
the store is the same whatever the number of workers and however often the run was interrupted
(timings and timeouts aside).
"""

from __future__ import annotations

import collections
import contextlib
import datetime
import os
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from kdtourney import interrupts
from kdtourney import store as _store
from kdtourney.service.cluster import Cluster, DaskService
from kdtourney.service.forfeit import failed_rows
from kdtourney.match.loop import MatchResult
from kdtourney.match.settings import CONFIG_KEY as PLAY_KEY
from kdtourney.match.settings import PlaySettings, settle, stored_settings
from kdtourney.tournament.blocks import games_of, of_plan, seated
from kdtourney.tournament.schedule import Plan
from kdtourney.service.local import DEFAULT_HANG_TIMEOUT, Finished, LocalService
from kdtourney.tournament.definition import ArenaError, Tournament, default_name, differences
from kdtourney.external import DEFAULT_STARTUP_TIMEOUT, ProcessSettings, Sandbox, SandboxError, StartupError
from kdtourney.external.sandbox import bwrap_path, missing_limits, weaker_limits_line


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
            cluster = Cluster(scheduler)
            stack.callback(cluster.close)
        try:
            stack.enter_context(_store.locked(folder))
        except _store.StoreError as exc:
            raise ArenaError(str(exc)) from None
        yield cluster


@contextlib.contextmanager
def holding_workers(folder, scheduler=None, workers: int | None = None):
    """`holding`, for the commands whose feeds size what they queue by the workers (sprt, tune,
    ladder): yields (the Cluster or None, the workers: the cluster's, else `workers` local
    processes, default one per core)."""
    workers = worker_count(workers)
    with holding(folder, scheduler) as cluster:
        if cluster is not None:
            workers = sum(cluster.wait_for_workers().values())
        yield cluster, workers


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


def rows_of(labels, spec, result: MatchResult) -> tuple[dict, list, list]:
    """The store rows (game, results, faults) of a played game; `labels`: the entrant label of
    each index the spec's seats hold."""
    game = dict(game=spec.game, block=spec.block, arrangement=spec.arrangement,
                n_players=spec.n_players, deal_seeds=list(spec.deal_seeds), status=result.status,
                duration=result.duration, moves=result.moves, error=result.error)
    results = []
    for seat in result.seats:
        row = dict(vars(seat))
        row.update(game=spec.game, entrant=labels[spec.seats[seat.seat]])
        results.append(row)
    faults = [dict(seat=f.seat, entrant=labels[spec.seats[f.seat]], kind=f.kind,
                   message=f.message, call=f.call, stderr=f.stderr) for f in result.faults]
    return game, results, faults


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
    other play settings (`record_play`), or is not a valid store. Opening an existing one records
    a session."""
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
        st.begin_session(meta.get("command"), tournament.games)
        return st, notes
    try:
        st = _store.Store.create(folder, tournament.to_dict(), dict(meta, sessions=1), identities)
    except _store.StoreError as exc:
        raise ArenaError(str(exc)) from None
    record_play(st, play or PlaySettings(), folder)
    return st, []


def record_play(st: _store.Store, play: PlaySettings, folder) -> None:
    """Check `play` against the play settings `st` records (ArenaError naming the first that
    differs, `kdtourney.match.settings.settle`) and record them (a store older than the record gets
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
    """{entrant label: `BotRegistry.identity`} of every entrant of `tournament`; ArenaError (one
    line) for a bot whose files cannot be read."""
    from kdtourney.registry import EntrantError

    registry.check(tournament.specs)  # sandboxed, the values of all asked at once
    try:
        return {label: registry.identity(spec)
                for label, spec in zip(tournament.entrants, tournament.specs)}
    except EntrantError as exc:
        raise ArenaError(str(exc)) from None


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
HARNESS_LOG = "harness.log"  # in LOGS: the traces of kdtourney's own errors


def record_harness_error(folder, exc: BaseException) -> Path:
    """Append the full trace of `exc`, an error of kdtourney's own while it played into `folder`
    (a HarnessError: the worker's trace first), to FOLDER/logs/harness.log with the time and the
    command line; returns the log's path."""
    import traceback

    from kdtourney import __version__

    path = Path(folder) / LOGS / HARNESS_LOG
    path.parent.mkdir(parents=True, exist_ok=True)
    worker = getattr(exc, "trace", "")
    with open(path, "a", encoding="utf-8") as log:
        log.write(f"==== {_store.now()} kdtourney {__version__}: "
                  f"{' '.join([Path(sys.argv[0]).name] + sys.argv[1:])}\n")
        if worker:
            log.write(f"in the worker:\n{worker.rstrip()}\nin the command's process:\n")
        log.write("".join(traceback.format_exception(exc)))
    return path


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
    from kdtourney.registry import EntrantError

    for spec in tournament.specs:
        try:
            registry.resolve(spec)
        except EntrantError as exc:
            raise ArenaError(f"{exc} (needed by the stored {what}; --bots-dir?)") from None


def bot_settings(tournament: Tournament, folder, play: PlaySettings | None,
                 startup_timeout: float = DEFAULT_STARTUP_TIMEOUT, scheduler=None,
                 require_limits: bool = False) -> ProcessSettings:
    """How the bots in their own process run for `tournament` in `folder` (its logs folder, the
    sandbox of the `play` settings); sandboxed, ArenaError without bwrap, and with
    `require_limits` when this machine (playing: no `scheduler`) cannot enforce every limit."""
    play = play or PlaySettings()
    sandbox = play.sandbox_for(folder)
    if sandbox is not None:
        check_sandbox()
        if scheduler is None:
            check_limits(require_limits)
    return ProcessSettings(tournament.time_control, play.margin, startup_timeout,
                           str(Path(folder) / LOGS), sandbox)


def open_service(tournament: Tournament, registry, cluster, workers: int, settings, play,
                 identities: dict, *, hang_timeout: float | None = None, warm: bool = True,
                 require_limits: bool = False, on_note=None):
    """The game service a command's feed hands its games to, for as long as it is open: local
    worker processes (`workers` of them), or the Dask `cluster` held by `holding`.
    settings: `bot_settings`; play: the PlaySettings; identities: {entrant: identity} as the store
    records them; on_note: called with each note of the service (a worker lost, ...)."""
    hang_timeout = hang_timeout or default_hang_timeout(
        tournament.time_control.longest_decision, settings.startup_timeout)
    play = play or PlaySettings()
    if cluster is not None:
        return DaskService(cluster, tournament, registry, hang_timeout=hang_timeout,
                           settings=replace(settings, log_dir=None), isolate=play.in_own_process,
                           identities=identities, require_limits=require_limits, on_note=on_note)
    return LocalService(tournament, registry, workers=workers, settings=settings,
                        isolate=play.in_own_process, identities=identities,
                        hang_timeout=hang_timeout, warm=warm, on_note=on_note)


def schedule_blocks(st: _store.Store, tournament: Tournament, blocks, secret: str | None,
                    planned=None) -> tuple[Tournament, dict]:
    """Record `blocks` (kdtourney.tournament.blocks: the records the store keeps, the ones recorded
    already left as they are) and make their games: (the table the service plays them on: the
    fixed settings of `tournament` with the entrants the blocks seat, {game: GameSpec} with seeds
    keyed by `secret` if given). Every command's feed hands its blocks to the service through
    this, so each block is in the store before any of its games is played. planned: their games
    as the tournament's plan made them (`blocks.games_of`)."""
    base = tuple(zip(tournament.entrants, tournament.specs))
    pairs, games = games_of(blocks, tournament.seed, tournament.dynasty, secret, base, planned)
    st.add_blocks(blocks)
    return seated(tournament, pairs), {g.game: g for g in games}


SPEED_GAMES = 256     # the driver's speed: over the last this many games stored
NOTES_KEPT = 100      # notes a run's outcome keeps (the newest); each goes to the reporter


class Feed:
    """What a command plays, as the one driver loop asks it (`Driver.run`): `run`'s plan, an
    SPRT's blocks until it decides, a tune's batches, a ladder's chosen tables. Every round of the
    loop the feed may queue blocks (`more`, through `Driver.queue`); it is told of every game
    stored (`took`); it says when it has nothing more to queue (`over`). The loop ends when the
    feed is over and nothing is queued or being played, or at Ctrl-C; then `stopped`."""

    over = False

    def more(self, driver: "Driver") -> None:
        """Queue what should be played next, if anything."""

    def idle(self, driver: "Driver") -> None:
        """Nothing is queued or being played and the feed is not over: a feed that waits for
        something (a ladder for its bots) waits here, a while; any other has a bug."""
        raise RuntimeError(f"{type(self).__name__} queued nothing and is not over")

    def took(self, spec, results: list) -> None:
        """A game stored: its GameSpec (seats index `Driver.labels`) and its result rows (none for
        a failed game)."""

    def stopped(self, driver: "Driver") -> None:
        """The loop ended (`driver.outcome.interrupted`: by Ctrl-C)."""


class Driver:
    """What every command does to play its feed's games, set up once per command: the folder it
    holds (`holding`) and its open store `st` (opened by the command: the play config and meta
    are written then, once), the bots' `settings` (`bot_settings`), the entrants' identities as
    the store records them, and the game service (`open_service`, opened with the first games
    queued). `table`: the fixed settings of every game, and the entrants known from the start.

    `queue` records blocks and hands their games to the service, new entrants joining its
    workers (their identities taken once each); `run` runs a feed until it is over, storing each
    finished game in its own transaction (only this process writes the store) and telling the
    reporter and the feed."""

    def __init__(self, stack, folder, st, table: Tournament, registry, *, cluster, workers: int,
                 settings, play: PlaySettings, identities: dict, hang_timeout=None,
                 warm: bool = True, require_limits: bool = False, reporter=None):
        self.stack, self.folder, self.st = stack, Path(folder), st
        self.table, self.registry = table, registry
        self.cluster, self.workers = cluster, workers
        self.settings, self.play = settings, play
        self.hang_timeout, self.warm, self.require_limits = hang_timeout, warm, require_limits
        self.reporter = reporter
        self.pairs = list(zip(table.entrants, table.specs))  # (label, spec) by the games' index
        self.labels = [label for label, _ in self.pairs]
        self.identities = dict(identities)  # {label: identity} of the entrants queued
        self.joined = 0  # pairs the service was given
        self.done = st.done_games()  # the games stored before this command
        # sandboxed from the start, the seeds are keyed with the store's secret (hidden from bots)
        self.secret = st.seed_secret(create=settings.sandbox is not None and not self.done)
        self.service = None
        self.outstanding = 0  # games handed to the service and not yet stored
        self.outcome = RunOutcome(folder=self.folder, total=0, stored_before=len(self.done),
                                  notes=collections.deque(maxlen=NOTES_KEPT))
        self.finish_times: collections.deque = collections.deque(maxlen=SPEED_GAMES)

    # what a feed calls

    def queue(self, blocks, planned=None) -> int:
        """Record `blocks` (kdtourney.tournament.blocks; the ones recorded already left as they are:
        `schedule_blocks`) and hand the games of theirs the store lacks to the service; returns
        how many. planned: their games as the tournament's plan made them."""
        table, specs = schedule_blocks(self.st, seated(self.table, self.pairs), blocks,
                                       self.secret, planned)
        new = list(zip(table.entrants, table.specs))[len(self.pairs):]
        if new:
            self.identities.update(entrant_identities(self.registry, seated(self.table, new)))
            self.pairs += new
            self.labels += [label for label, _ in new]
        todo = [specs[g] for g in sorted(specs) if g not in self.done]
        self.submit(todo)
        return len(todo)

    def submit(self, games) -> None:
        """Hand GameSpecs (seats indexing `pairs`) to the service, opening it with the first."""
        games = list(games)
        if not games:
            return
        table = seated(self.table, self.pairs)
        if self.service is None:
            self.service = self.stack.enter_context(open_service(
                table, self.registry, self.cluster, self.workers, self.settings, self.play,
                self.identities, hang_timeout=self.hang_timeout, warm=self.warm,
                require_limits=self.require_limits, on_note=self.note))
        elif self.joined < len(self.pairs):
            self.service.join(table, {label: self.identities[label]
                                      for label, _ in self.pairs[self.joined:]})
        self.joined = len(self.pairs)
        self.service.submit(games)
        self.outstanding += len(games)

    def reload(self, registry) -> None:
        """The bots' sources may have changed (a ladder's folders): play the games queued from now
        on with `registry`. When they did, the service must be idle: its workers are ended, and
        the next games start new ones, which know only the entrants queued from then on (an old
        version's label would not load its code from the new sources)."""
        self.registry = registry
        if self.service is None or not self.service.changed(registry):
            return
        if self.busy:
            raise RuntimeError("the bots' sources changed while games were being played")
        self.pairs = list(zip(self.table.entrants, self.table.specs))
        self.labels = [label for label, _ in self.pairs]
        self.identities = {label: self.identities[label] for label in self.labels}
        self.service.join(seated(self.table, self.pairs), self.identities, registry)
        self.joined = len(self.pairs)

    def cancel(self) -> list:
        """Take back the games no worker has taken yet; returns their GameSpecs."""
        dropped = self.service.cancel() if self.service is not None else []
        self.outstanding -= len(dropped)
        return dropped

    @property
    def busy(self) -> bool:
        """Games are queued or being played."""
        return self.service is not None and self.service.busy

    @property
    def queued(self) -> int:
        """Games handed to the service that no worker has taken yet."""
        return self.service.queued if self.service is not None else 0

    def games_per_second(self) -> float | None:
        """The speed of play over the last SPEED_GAMES games stored (None before 3)."""
        t = self.finish_times
        if len(t) < 3 or t[-1] <= t[0]:
            return None
        return (len(t) - 1) / (t[-1] - t[0])

    def note(self, text) -> None:
        self.outcome.notes.append(text)
        if self.reporter is not None:
            self.reporter.note(text)

    # the loop

    def run(self, feed: Feed) -> RunOutcome:
        """Run `feed` until it is over and its games are stored, or Ctrl-C (the outcome says
        interrupted); returns the outcome."""
        started = time.perf_counter()
        try:
            while True:
                interrupts.check()
                feed.more(self)
                if self.busy:
                    for finished in self.service.step():
                        self._take(finished, feed)
                elif feed.over:
                    break
                else:
                    feed.idle(self)
        except KeyboardInterrupt:
            self.outcome.interrupted = True
        finally:
            if self.service is not None:
                self.outcome.worker_losses = self.service.losses
            self.st.update_meta(games_stored=self.outcome.stored_before + self.outcome.played)
        self.outcome.seconds = time.perf_counter() - started
        feed.stopped(self)
        return self.outcome

    def _take(self, finished: Finished, feed: Feed) -> None:
        """Store what the service handed back (a played game, or one it could not finish: its
        failed rows, kdtourney.service.forfeit) and tell the reporter and the feed."""
        spec, outcome = finished.spec, self.outcome
        if finished.result is None:
            game, results, faults = failed_rows(spec, self.labels, finished.failed)
            outcome.failed += 1
        else:
            game, results, faults = rows_of(self.labels, spec, finished.result)
            outcome.faults += len(faults)
        self.st.add_game(game, results, faults)
        outcome.played += 1
        self.outstanding -= 1
        self.finish_times.append(time.perf_counter())
        if self.reporter is not None:
            self.reporter.game(spec, results, faults)
        feed.took(spec, results)


class RunFeed(Feed):
    """The feed of `kdtourney run`: every block of the plan at once."""

    def __init__(self, tournament: Tournament, plan: Plan):
        self.tournament, self.plan = tournament, plan

    def more(self, driver):
        if not self.over:
            self.over = True
            t = self.tournament
            driver.queue(of_plan(t.entrants, t.specs, self.plan.games), self.plan.games)


def run_tournament(tournament: Tournament, folder, registry, *, workers: int | None = None,
                   meta: dict | None = None, reporter=None, hang_timeout: float | None = None,
                   warm: bool = True, scheduler: str | None = None,
                   play: PlaySettings | None = None, startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
                   check_bots: bool = True, require_limits: bool = False) -> RunOutcome:
    """Play the games of `tournament` that `folder`'s store lacks; returns a RunOutcome.

    registry: the BotRegistry the entrants were checked against (its sources go to the workers).
    workers: processes (default: all cores). reporter: an object with start/game/note/stop (see
    kdtourney.terminal.progress), or None. Raises ArenaError for a store that is not this tournament's.
    scheduler: play on a Dask cluster instead of local processes (`workers` is then ignored):
    tcp://HOST:PORT, a scheduler file, or local:N (see kdtourney.service.cluster), or an open
    `Cluster` (left open).
    play: how the bots are played (kdtourney.match.settings: isolate, the margin beyond the clock,
    the sandbox and its memory limit; default PlaySettings()), recorded with a new store and
    checked against an existing one's. Sandboxed, every entrant (Python ones through `kdtourney
    serve`) plays in its own process inside a sandbox (kdtourney.external.sandbox);
    ArenaError when bwrap is not installed, and with `require_limits` when a machine that plays
    cannot enforce every limit (`check_limits`; on a cluster, each worker's).
    Bots in their own process (TOML bots; isolated or sandboxed, every bot, through `kdtourney
    serve`): `startup_timeout` seconds to answer hello; with `check_bots` each TOML bot is
    started once before anything else (ArenaError naming its file if one does not start); their
    stderr goes to FOLDER/logs/<entrant>.log.
    """
    play = play or PlaySettings()
    settings = bot_settings(tournament, folder, play, startup_timeout, scheduler, require_limits)
    workers = worker_count(workers)
    plan = tournament.plan()
    if check_bots:
        start_bots(registry, tournament, startup_timeout, settings.sandbox)
    identities = entrant_identities(registry, tournament)
    with contextlib.ExitStack() as stack:
        cluster = stack.enter_context(holding(folder, scheduler))
        st, notes = open_for(tournament, folder, meta or {}, identities, play)
        stack.callback(st.close)
        todo = len(plan.games) - len(st.done_games())
        if cluster is not None and todo:
            workers = sum(cluster.wait_for_workers().values())
        driver = Driver(stack, folder, st, tournament, registry, cluster=cluster,
                        workers=min(workers, max(1, todo)), settings=settings, play=play,
                        identities=identities, hang_timeout=hang_timeout, warm=warm,
                        require_limits=require_limits, reporter=reporter)
        driver.outcome.total = len(plan.games)
        driver.outcome.notes.extend(notes)
        if reporter is not None:
            stack.callback(reporter.stop)
            reporter.start(tournament, plan, st, workers=driver.workers)
            for note in notes:
                reporter.note(note)
        return driver.run(RunFeed(tournament, plan))


__all__ = ["run_tournament", "RunOutcome", "Driver", "Feed", "open_for", "session_meta",
           "rows_of", "default_hang_timeout", "asked_folder", "stored_seed", "new_folder",
           "load_tournament", "stored_bots_dirs", "check_entrants", "entrant_identities",
           "check_code", "start_bots", "check_sandbox", "check_limits", "open_service",
           "bot_settings", "schedule_blocks", "record_harness_error", "HARNESS_LOG"]
