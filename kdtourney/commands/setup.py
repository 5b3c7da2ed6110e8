"""The one setup of every command that plays (run, sprt, tune, ladder, play).

    with setup(table, folder, registry, open_folder, Options(...)) as s: ...

in this order: the bots' settings checked (`bot_settings`), the TOML bots started once
(`start_bots`), the entrants' identities taken (`entrant_identities`), the Dask cluster connected
and the folder's lock held (`holding`), the folder's store made or checked by the command
(`open_folder(identities)` -> notes) and opened; the game service (`open_service`: local worker
processes or the cluster) opens with the first games queued (`Setup.open_service`) and ends with
the block. Yields a `Setup`, what a Driver (kdtourney.commands.driver) plays with.

Raises ArenaError (one line) for what cannot be played: no bwrap, limits a machine cannot
enforce (--require-limits), a bot that does not start, a folder in use, a bad scheduler address.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from kdtourney import store
from kdtourney.commands.folders import LOGS
from kdtourney.external import (
    DEFAULT_STARTUP_TIMEOUT,
    ProcessSettings,
    Sandbox,
    SandboxError,
    StartupError,
)
from kdtourney.external.sandbox import bwrap_path, missing_limits, weaker_limits_line
from kdtourney.match.settings import PlaySettings
from kdtourney.registry import EntrantError
from kdtourney.service.backend import DEFAULT_HANG_TIMEOUT
from kdtourney.service.cluster import Cluster
from kdtourney.service.dask_service import DaskService
from kdtourney.service.local import LocalService
from kdtourney.tournament.definition import ArenaError, Tournament


@dataclass
class Options:
    """How and where a command plays its games.

    workers: local processes (default: one per core); scheduler: a Dask cluster instead
    (tcp://HOST:PORT, a scheduler file, local:N, or an open `Cluster`, left open); hang_timeout:
    seconds without progress after which a worker is replaced (`default_hang_timeout`); play: how
    the bots are played (kdtourney.match.settings.PlaySettings); startup_timeout: seconds a bot in
    its own process has to answer hello; require_limits: sandboxed, refuse a machine that cannot
    enforce every limit; warm: workers warm up before their first game; check_bots: start every
    TOML bot once before anything else."""

    workers: int | None = None
    scheduler: object = None
    hang_timeout: float | None = None
    play: PlaySettings = field(default_factory=PlaySettings)
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    require_limits: bool = False
    warm: bool = True
    check_bots: bool = True

    def __post_init__(self):  # None given: the default
        self.play = self.play or PlaySettings()
        self.startup_timeout = self.startup_timeout or DEFAULT_STARTUP_TIMEOUT


@dataclass
class Setup:
    """What a command plays with, for as long as its `setup` block runs: its folder and open
    store `st`, the fixed settings of every game and the entrants known from the start (`table`),
    the registry, the Dask `cluster` (None: local processes), the bots' process `settings`
    (`bot_settings`), the entrants' `identities` as the store records them, the notes of the
    folder's checks, the `options`, and the ExitStack that ends it all (`stack`)."""

    folder: Path
    st: store.Store
    table: Tournament
    registry: object
    cluster: Cluster | None
    settings: ProcessSettings
    options: Options
    identities: dict
    notes: list
    stack: contextlib.ExitStack

    @property
    def play(self) -> PlaySettings:
        return self.options.play

    @functools.cached_property
    def workers(self) -> int:
        """The workers that play: the cluster's (waiting for the first to join), else the local
        processes asked for."""
        if self.cluster is not None:
            return sum(self.cluster.wait_for_workers().values())
        return worker_count(self.options.workers)

    def show(self, display, *begin) -> None:
        """Start `display` (if any): `display.begin(*begin, workers)`, its end when the setup ends,
        then the setup's notes."""
        if display is None:
            return
        display.begin(*begin, self.workers)
        self.stack.callback(display.end)
        for note in self.notes:
            display.note(note)

    def open_service(self, table: Tournament, registry, workers: int, identities: dict,
                     on_note=None):
        """The game service for `table`'s games, open until the setup ends."""
        o = self.options
        return self.stack.enter_context(open_service(
            table, registry, self.cluster, workers, self.settings, o.play, identities,
            hang_timeout=o.hang_timeout, warm=o.warm, require_limits=o.require_limits,
            on_note=on_note))


@contextlib.contextmanager
def setup(table: Tournament, folder, registry, open_folder: Callable[[dict], list],
          options: Options) -> Iterator[Setup]:
    """Set up a command to play `table` into `folder` (see the module's docstring); the
    command's `open_folder(identities)` makes or checks the folder's store and returns notes for
    the user."""
    folder = Path(folder)
    settings = bot_settings(table, folder, options.play, options.startup_timeout,
                            options.scheduler, options.require_limits)
    worker_count(options.workers)  # refused before anything is started or written
    if options.check_bots:
        start_bots(registry, table, options.startup_timeout, settings.sandbox)
    identities = entrant_identities(registry, table)
    with contextlib.ExitStack() as stack:
        cluster = stack.enter_context(holding(folder, options.scheduler))
        notes = open_folder(identities)
        st = stack.enter_context(store.open_store(folder))
        yield Setup(folder, st, table, registry, cluster, settings, options, identities, notes,
                    stack)


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
def holding(folder, scheduler=None) -> Iterator[Cluster | None]:
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
            stack.enter_context(store.locked(folder))
        except store.StoreError as exc:
            raise ArenaError(str(exc)) from None
        yield cluster


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
    line = weaker_limits_line(f"this machine ({platform.node()})", missing)
    if require:
        raise ArenaError(f"--require-limits: {line}")
    return line


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


def start_bots(registry, tournament: Tournament, startup_timeout: float | None = None,
               sandbox: Sandbox | None = None) -> None:
    """Start every TOML bot of `tournament` once (in its `sandbox`, if any) and exchange hello (its
    answer goes into the bot's identity); ArenaError naming the file of a bot that does not start
    or answer within `startup_timeout` seconds."""
    if not tournament.specs:
        return
    settings = ProcessSettings(startup_timeout=startup_timeout or DEFAULT_STARTUP_TIMEOUT,
                               sandbox=sandbox)
    try:
        registry.start_check(tournament.specs, settings)
    except StartupError as exc:
        raise ArenaError(str(exc)) from None


def entrant_identities(registry, tournament: Tournament) -> dict:
    """{entrant label: `BotRegistry.identity`} of every entrant of `tournament`; ArenaError (one
    line) for a bot whose files cannot be read."""
    if not tournament.specs:
        return {}
    registry.check(tournament.specs)  # sandboxed, the values of all asked at once
    try:
        return {label: registry.identity(spec)
                for label, spec in zip(tournament.entrants, tournament.specs)}
    except EntrantError as exc:
        raise ArenaError(str(exc)) from None


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


__all__ = ["Options", "Setup", "setup", "default_hang_timeout", "available_cores",
           "worker_count", "holding", "check_sandbox", "check_limits", "bot_settings",
           "start_bots", "entrant_identities", "open_service"]
