"""A bug of kdtourney's own while a command plays (in a worker or in the command's process) is not
bad input: its full trace goes to DIR/logs/harness.log, the error line names that log, the exit
status is 70 (EX_SOFTWARE), and the games stored before it stay stored (a resume finishes them).
The fault is injected in every Python process of the command (its fork server's, its workers')
by a sitecustomize module."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kdtourney import store

KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")

# KDTOURNEY_FAULT=worker: a worker's play_match raises KeyError(3) at its 4th game; =main: the
# command's process fails as it stores the 3rd game
_FAULT = """
import os

where = os.environ.get("KDTOURNEY_FAULT")
if where:
    from kdtourney.commands import driver
    from kdtourney.service import worker as workers

    calls = [0]

    def faulty(real, after):
        def call(*args, **kwargs):
            calls[0] += 1
            if calls[0] > after:
                raise KeyError(3)
            return real(*args, **kwargs)
        return call

    if where == "worker":  # a local worker's or a Dask worker's (WorkerState.play)
        workers.play_match = faulty(workers.play_match, 3)
    else:
        driver.rows_of = faulty(driver.rows_of, 2)
"""

COMMANDS = {
    "run": ["run", "--bots", "random,greedy", "--games", "8"],
    "sprt": ["sprt", "--candidate", "greedy", "--baseline", "random", "--max-games", "40"],
    "tune": ["tune", "mce", "--param", "iterations=6,2,10,2", "--iterations", "4"],
    "ladder": ["ladder", "--bots", "random,greedy", "--games", "40"],
}
ONE_WORKER = ["--workers", "1"]


def kdtourney(args, tmp_path, fault=None):
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_FAULT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        str(site), os.environ.get("PYTHONPATH")])))
    env.pop("KDTOURNEY_FAULT", None)
    if fault:
        env["KDTOURNEY_FAULT"] = fault
    return subprocess.run([KDTOURNEY, *args], capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.dask
@pytest.mark.parametrize("command, fault, workers", [
    ("run", "worker", ONE_WORKER), ("sprt", "main", ONE_WORKER), ("tune", "worker", ONE_WORKER),
    ("ladder", "main", ONE_WORKER), ("run", "worker", ["--scheduler", "local:1"])])
def test_a_harness_error_is_logged_named_and_exits_70(tmp_path, command, fault, workers):
    folder = tmp_path / "out"
    args = [*COMMANDS[command], *workers, "--seed", "1", "--quiet", "--no-report", "--out",
            str(folder)]
    done = kdtourney(args, tmp_path, fault)
    log = folder / "logs" / "harness.log"
    what = "a worker failed: KeyError: 3" if fault == "worker" else \
        "kdtourney failed: KeyError: 3"
    assert done.returncode == 70, done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"Error: {what} (full trace in {log})"
    assert "Traceback (most recent call last)" not in done.stderr  # (a local Dask worker logs)
    trace = log.read_text()
    assert args[0] in trace.splitlines()[0]  # the command line
    if fault == "worker":  # the worker's trace, where it raised, then the command's
        assert trace.index("in serve" if workers == ONE_WORKER else "in play_batch") \
            < trace.index("raise KeyError(3)") \
            < trace.index("in the command's process") \
            < trace.index("HarnessError: a worker failed: KeyError: 3")
    else:
        assert "in _take" in trace and "raise KeyError(3)" in trace \
            and trace.rstrip().endswith("KeyError: 3")
    if workers != ONE_WORKER:  # on Dask a batch's games come back together, or not at all
        return
    stored = store.load_games(folder, ["game"])
    assert len(stored) == (3 if fault == "worker" else 2)  # every game finished before it
    if command == "run":  # and a resume plays the rest
        again = kdtourney(["run", "--resume", str(folder), "--quiet", "--no-report"], tmp_path)
        assert again.returncode == 0, again.stderr
        assert len(store.load_games(folder, ["game"])) == 8
