"""Test configuration: put the tests directory on sys.path so tests can `import naive`, and fill
Numba's cache in two processes before the first test (compile_kernels.py says why)."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

pytest_plugins = ["browser_support"]  # the `browser` and `page` fixtures


def pytest_sessionstart(session):
    # under pytest-xdist the controller compiles once, before it starts the test processes
    if os.environ.get("NUMBA_DISABLE_JIT") == "1" or "PYTEST_XDIST_WORKER" in os.environ:
        return
    compiling = [subprocess.Popen([sys.executable, str(TESTS_DIR / "compile_kernels.py"),
                                   str(slot)]) for slot in (0, 1)]
    for process in compiling:  # a kernel that fails to compile fails the tests that use it
        process.wait()


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one test process per core, at most four, since many tests start a worker per
    core of their own."""
    return max(1, min(4, os.cpu_count() or 1))


@pytest.fixture(autouse=True)
def _ctrl_c_handler_left_as_found():
    """A test that leaves SIGINT to another handler breaks every later test of Ctrl-C (and a
    user's Ctrl-C in the code it stands for): fail the test that does it, not the next one."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    assert after is before, f"the test left SIGINT's handler at {after!r} (found {before!r})"


@pytest.fixture(autouse=True)
def _in_a_folder_of_its_own(tmp_path, monkeypatch):
    """Every test runs in a fresh folder: the folder the tests are run from may hold a reader's
    ./bots (kdtourney's default bots folder, where the README's five-minute path writes a bot)
    and reports/, which no test may read or write."""
    monkeypatch.chdir(tmp_path)
