"""A connection to a Dask scheduler for `--scheduler ADDRESS` (the `dask` extra).

    Cluster(address)    tcp://HOST:PORT (or anything distributed.Client takes), a scheduler file,
                        or local:N (a LocalCluster of N worker processes for this run); workers(),
                        wait_for_workers(), threads(), close(); ArenaError, one line, when the
                        scheduler cannot be reached or the address is not one
    distributed_module()    distributed, or ArenaError(MISSING_EXTRA) without the extra
    limits_note(info, told, require)    the note for a worker's machine that cannot enforce every
                        limit of a sandboxed bot (once per host), or ArenaError with `require`

The games are played there by kdtourney.service.dask_service; docs/clusters.md tells how.
"""

from __future__ import annotations

import inspect
import logging
import os
import socket
import time

from kdtourney.external.sandbox import weaker_limits_line
from kdtourney.service.worker import main_module_hidden
from kdtourney.tournament.definition import ArenaError

CONNECT_TIMEOUT = 10.0       # seconds to reach the scheduler
WORKERS_TIMEOUT = 60.0       # seconds to wait for a first worker (or a new one after all are lost)
MAX_LOCAL_PER_CORE = 4       # local:N workers per core (each is a process with its own engine)
ALLOWED_FAILURES = 3         # worker deaths a task may cause before KilledWorker (local:N)
# local:N runs beside the client on its cores: Dask's own clockwork there (an idle cluster of 2
# workers took 8% of a core, 1% so) is eased where it only measures and profiles
LOCAL_QUIET = {"distributed.admin.tick.interval": "1s",
               "distributed.admin.system-monitor.interval": "5s",
               "distributed.worker.profile.enabled": False,
               "distributed.worker.memory.monitor-interval": "1s"}
MISSING_EXTRA = "--scheduler needs the dask extra: pip install 'kdtourney[dask]'"


def distributed_module():
    """The `distributed` package (imported on first use: a fifth of a second every command would
    pay otherwise), or ArenaError without the dask extra."""
    try:
        import distributed  # the dask extra, optional
    except ImportError:
        raise ArenaError(MISSING_EXTRA) from None
    return distributed


class Cluster:
    """A connection to a Dask scheduler (and the LocalCluster behind it for `local:N`)."""

    def __init__(self, address: str):
        distributed = distributed_module()
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
        import dask  # the dask extra, as distributed

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
    from distributed.comm import parse_address, parse_host_port  # the dask extra

    scheme, location = parse_address(address)
    if scheme != "tcp":
        return
    host, port = parse_host_port(location)
    with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT):
        pass


def _takes_n_workers(client) -> bool:
    return "n_workers" in inspect.signature(client.scheduler_info).parameters


__all__ = ["Cluster", "distributed_module", "limits_note", "MISSING_EXTRA", "ALLOWED_FAILURES",
           "CONNECT_TIMEOUT", "WORKERS_TIMEOUT"]
