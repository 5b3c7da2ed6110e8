"""Work beside play: one process at the lowest priority (nice 19, and SCHED_IDLE where the kernel
has it) for what must never hold up the games, such as a ladder's page and its looks at the bot
folders. On two cores any CPU such work took would be a clocked bot's; what it starts (a bot
started for `hello`) inherits its priority."""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import signal

from kdtourney.external.launch import die_with_parent


def lowest_priority(parent: int | None = None) -> None:
    """Make this process one whose CPU comes only from what the games leave, and one that dies
    with its `parent` (a pid), however that ends (SIGKILL or SIGTERM included). Ctrl-C is the
    parent's business."""
    die_with_parent(signal.SIGKILL, parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(19)
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        pass


@contextlib.contextmanager
def beside_play():
    """A ProcessPoolExecutor of one such process, ended at once at the end with what it was doing
    (a look at the folders, a page) and what it was still to do: all of it would be thrown away,
    and at the lowest priority it may get no CPU for as long as other work keeps the cores busy,
    so waiting for it could wait for ever. Whatever it makes, the caller writes; it writes
    nothing that a kill could leave half done."""
    executor = concurrent.futures.ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn"), initializer=lowest_priority,
        initargs=(os.getpid(),))
    try:
        yield executor
    finally:
        end_now(executor)
        executor.shutdown(wait=True, cancel_futures=True)


def end_now(executor: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kill the executor's process (Python 3.14's `terminate_workers`, which 3.11 lacks)."""
    if hasattr(executor, "kill_workers"):
        executor.kill_workers()
        return
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        process.kill()
