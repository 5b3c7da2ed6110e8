"""A local worker process: what kdtourney.service.local starts (from its fork server) and talks to.

    worker_main(slot, conn, status, groups, ...)    the process's target: receives batches
        [(GameSpec, forced faults)] and ('entrants', pairs, identities) on `conn`, sends
        ('ready',), ('game', index, MatchResult) per game, ('tired',) once it should be recycled,
        ('refused', line) or ('fatal', trace); publishes its steps in `status` (Heartbeat)
    kill_groups(groups, slot)       the parent kills the bot process groups a lost worker recorded
    resident_mib()                  a process's resident memory
    GROUPS                          bot process groups recorded per worker
"""

from __future__ import annotations

import multiprocessing as mp
import os
import platform
import signal
import sys
import traceback

from kdtourney.external import ProcessPool, die_with_parent, kill_group
from kdtourney.service.heartbeat import Heartbeat
from kdtourney.service.worker import WorkerState
from kdtourney.tournament.definition import ArenaError, HarnessError

GROUPS = 64  # bot process groups recorded per worker


def worker_main(slot, conn, status, groups, sources, tournament_dict, warm, settings, isolate,
                identities, listed, recycle, hang_timeout, environ):
    """A worker (see the module docstring); `recycle`: (games, MiB) past which it is tired. Its
    bots in their own process are recorded in `groups` (their process groups, which the parent
    kills should this worker die) and stopped when it ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business
    os.environ.clear()  # the parent's environment now, not the fork server's at its start
    os.environ.update(environ)
    pool = ProcessPool(settings, track=lambda pids: record_groups(groups, slot, pids))
    exit_with_parent(pool)
    beat = Heartbeat(status, slot, hang_timeout)
    try:
        state = start(slot, conn, beat, pool, sources, tournament_dict, warm, isolate,
                      identities, listed)
        if state is not None:
            serve(conn, state, beat, recycle)
    finally:
        pool.close()
    quick_exit(conn)


def start(slot, conn, beat, pool, sources, tournament_dict, warm, isolate, identities, listed):
    """The worker's state, built and warmed up, and ('ready',) sent; None when it could not be
    built (what went wrong sent)."""
    try:
        state = WorkerState(sources, tournament_dict, isolate, listed, identities, pool, beat,
                            machine=f"{platform.node()} (worker {slot})", local=True, warm=warm,
                            first=slot)
    except ArenaError as exc:  # it did not load what the store recorded
        conn.send(("refused", str(exc)))
        return None
    except BaseException:  # noqa: BLE001 - reported to the parent, which stops
        conn.send(("fatal", traceback.format_exc()))
        return None
    beat.idle()
    conn.send(("ready",))
    return state


def serve(conn, state: WorkerState, beat: Heartbeat, recycle: tuple) -> None:
    """Play the batches and take in the entrants `conn` brings until it brings None or closes."""
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


def record_groups(groups, slot, pids):
    """Write a worker's bot process groups to its part of the shared array (0: none). A pool
    holds at most its idle bound plus a table's seats, far fewer than the slots."""
    if len(pids) > GROUPS:
        raise HarnessError(f"{len(pids)} bot processes in one worker, more than the {GROUPS} "
                           "it can record for cleanup")
    base = slot * GROUPS
    for i in range(GROUPS):
        groups[base + i] = pids[i] if i < len(pids) else 0


def kill_groups(groups, slot):
    """Kill the recorded bot process groups of a worker (dead, or gone past its time to exit)."""
    base = slot * GROUPS
    for i in range(GROUPS):
        if groups[base + i] > 0:
            kill_group(int(groups[base + i]))
            groups[base + i] = 0


def exit_with_parent(pool):
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


def quick_exit(conn):
    """End the worker at once: its results are sent and it owns nothing else; the interpreter's
    normal exit (finalizers of Numba and friends) takes about a second."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    conn.close()
    os._exit(0)


__all__ = ["worker_main", "start", "serve", "kill_groups", "record_groups", "resident_mib",
           "exit_with_parent", "quick_exit", "GROUPS"]
