"""Test configuration: the tests directory on sys.path (tests `import naive` and the *_support
modules), the `browser` and `page` fixtures (browser_support.py), every test in a folder of its
own, and Numba's cache filled before the first test of a session that plays the built-in bots at
length (compile_kernels.py says how). The markers are registered in pyproject.toml and described
in docs/contributing.md."""

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


def warms_up(items) -> bool:
    """Whether a session running `items` fills Numba's whole cache first: when one of them is a
    slow test that starts processes (the full suite has dozens). Those play the built-in bots in
    worker and bot processes, and on a fresh clone two processes compiling every kernel at once
    take half the time of the tests compiling them one after another. The fast tier, or a file of
    fast tests, only loads (or compiles) the kernels its tests call, as they call them."""
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":  # nothing is compiled
        return False
    return any(item.get_closest_marker("slow") and item.get_closest_marker("process")
               for item in items)


def compile_slots() -> tuple[int, ...]:
    """The slots of compile_kernels.py this process runs: both of them in a session of one
    process; under pytest-xdist, each test process its own (gw0 slot 0, gw1 slot 1, ...), all at
    once before their first tests."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None or os.environ.get("PYTEST_XDIST_WORKER_COUNT") == "1":
        return (0, 1)
    return (int(worker.removeprefix("gw")),)


def pytest_collection_finish(session):
    """Fill Numba's cache once the session's tests are known (after -m and -k), if they need it
    (`warms_up`)."""
    if session.config.option.collectonly or not warms_up(session.items):
        return
    compiling = [subprocess.Popen([sys.executable, str(TESTS_DIR / "compile_kernels.py"),
                                   str(slot)]) for slot in compile_slots()]
    for process in compiling:  # a kernel that fails to compile fails the tests that use it
        process.wait()


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one test process more than the cores, at most four. Many tests spend most of
    their time waiting for processes they start (bots, workers, sandboxes, clocks running out),
    so a third process keeps two cores busy; more would crowd the tests that start a worker per
    core of their own."""
    return max(1, min(4, (os.cpu_count() or 1) + 1))


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
    """Every test runs in a fresh folder and sees no KDTOURNEY_BOTS_DIR from outside: the folder
    the tests are run from may hold a reader's ./bots (kdtourney's default bots folder, where the
    README's five-minute path writes a bot) and reports/, and the reader's environment may name
    other bots folders, which no test may read or write."""
    monkeypatch.delenv("KDTOURNEY_BOTS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
