"""Ctrl-C is never lost: a KeyboardInterrupt Python drops (raised inside a weakref callback or a
__del__, printed as "Exception ignored") still stops a run at its next wait."""

import signal
import weakref

import pytest

from kdtourney import interrupts
from kdtourney.commands.run import run_tournament
from kdtourney.registry import BotRegistry
from kdtourney.store import load_games
from kdtourney.tournament.definition import prepare

# the dropped KeyboardInterrupt is what these tests make: pytest would warn of it
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(autouse=True)
def pythons_own_sigint_handler():
    """caught() works over Python's own SIGINT handler, which a command typed at a terminal starts
    with; tests started in the background by a shell without job control inherit SIGINT ignored
    (a CI run so failed both tests), so each test puts Python's in place, then what was there."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def ctrl_c_dropped():
    """A real SIGINT whose KeyboardInterrupt lands in a weakref callback, where Python drops it."""
    # only over Python's own handler does caught() remember a Ctrl-C: say so if another is left
    assert signal.getsignal(signal.SIGINT) is interrupts._on_sigint, (
        f"caught() is not in force: SIGINT's handler is {signal.getsignal(signal.SIGINT)!r}")
    class Thing:
        pass

    def callback(_):
        # raise_signal sends it to this thread, so the handler runs here, inside the callback;
        # os.kill would send it to the process, and another thread (a test's pool reader) could
        # take it and be scheduled too late
        signal.raise_signal(signal.SIGINT)
        for _ in range(1000):
            pass

    thing = Thing()
    ref = weakref.ref(thing, callback)
    del thing  # the callback runs, its KeyboardInterrupt is printed and dropped
    return ref


def test_check_raises_a_ctrl_c_python_dropped_and_only_inside_caught():
    with interrupts.caught():
        ctrl_c_dropped()  # no KeyboardInterrupt here: Python dropped it
        with pytest.raises(KeyboardInterrupt):
            interrupts.check()
    interrupts.check()  # forgotten at the end of the block
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.process
def test_a_dropped_ctrl_c_stops_a_run_and_what_was_played_is_kept(tmp_path):
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    t = prepare(registry, bots="random,greedy", games=40, seed=5)
    with interrupts.caught():
        ctrl_c_dropped()
        out = run_tournament(t, tmp_path / "t", registry, workers=1)
    assert out.interrupted and not out.complete
    assert len(load_games(tmp_path / "t")) == out.played < 40
    again = run_tournament(t, tmp_path / "t", registry, workers=1)  # and it resumes
    assert again.complete and again.stored_before + again.played == 40
