"""The fork server that the local workers start from: multiprocessing's 'forkserver', which has
loaded kdtourney.service.preload once (never a fork of a parent that may run threads).

Light on purpose (multiprocessing only): a command starts the server first thing, before its own
imports (the arena, pandas and Numba take it about a second), so the server's imports run beside
them and the command's first workers fork as soon as it asks for them.
"""

import multiprocessing as mp
import os
from multiprocessing import forkserver

NUMBA_QUIET = "KDTOURNEY_NUMBA_QUIET"  # engine/numba_version.py's QUIET (importing it is not light)


def worker_context():
    """The multiprocessing context of the workers."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["kdtourney.service.preload"])
    return ctx


def start() -> None:
    """Start the fork server now, without waiting for it (it ends with this process)."""
    worker_context()
    os.environ[NUMBA_QUIET] = "1"  # its imports check Numba too: the command warns for both
    try:
        forkserver.ensure_running()
    finally:
        del os.environ[NUMBA_QUIET]
