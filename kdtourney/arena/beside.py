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


def lowest_priority() -> None:
    """Make this process one whose CPU comes only from what the games leave. Ctrl-C is the
    parent's business."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(19)
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        pass


@contextlib.contextmanager
def beside_play(finish: bool = True):
    """A ProcessPoolExecutor of one such process. At the end, with `finish`, what it is doing is
    finished (a page being written is not left to overwrite the last one) and what it was still
    to do is dropped; without, it is ended at once (a look at the folders that would only be
    thrown away, with the bots it started)."""
    executor = concurrent.futures.ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn"), initializer=lowest_priority)
    try:
        yield executor
    finally:
        if not finish:
            end_now(executor)
        executor.shutdown(wait=True, cancel_futures=True)


def end_now(executor: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kill the executor's process (Python 3.14's `terminate_workers`, which 3.11 lacks)."""
    if hasattr(executor, "kill_workers"):
        executor.kill_workers()
        return
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        process.kill()
