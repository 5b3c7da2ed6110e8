"""Tournaments on a Dask cluster: a real scheduler and workers started as separate processes on
127.0.0.1 (`dask scheduler`, `dask worker --nthreads 1`), `kdtourney run --scheduler`."""

import json
import os
import pickle
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import deque
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

distributed = pytest.importorskip(
    "distributed", reason="the dask extra is not installed (pip install 'kdtourney[dask]')")

from arena_support import assert_same_store, stored, wait_stored, write_faulty_bots  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from distributed.diagnostics.plugin import WorkerPlugin  # noqa: E402
from kdtp_support import SANDBOX_ALLOW, left_behind, new_marker, write_fake_bots  # noqa: E402

from kdtourney import store  # noqa: E402
from kdtourney.cli import main  # noqa: E402
from kdtourney.commands.run import run_tournament  # noqa: E402
from kdtourney.external import ProcessSettings, cgroups  # noqa: E402
from kdtourney.match.settings import PlaySettings  # noqa: E402
from kdtourney.registry import BotRegistry  # noqa: E402
from kdtourney.service import cluster, dask_service, dask_worker  # noqa: E402
from kdtourney.service import worker as workers  # noqa: E402
from kdtourney.service.backend import Entrants  # noqa: E402
from kdtourney.service.dask_service import Shipping  # noqa: E402
from kdtourney.service.forfeit import ForfeitPolicy  # noqa: E402
from kdtourney.store import load_faults, load_games, load_results  # noqa: E402
from kdtourney.tournament.definition import ArenaError, prepare  # noqa: E402

pytestmark = pytest.mark.dask

BIN = Path(sys.executable).parent
DASK, KDTOURNEY = str(BIN / "dask"), str(BIN / "kdtourney")

# a bot folder: `middle` (optionally sleeping per decision, to make a run last) reaches the workers
# only as shipped source; `clientonly` imports on the client but not on the test's workers (as an
# entry-point bot installed on one machine only would be missing on the others)
BOTS = {
    "shipped.py": textwrap.dedent('''
        import time

        from kdtourney.bots.base import Bot


        class Middle(Bot):
            """Plays the middle legal action; sleeps `delay` seconds per decision."""
            name = "middle"

            def __init__(self, delay=0.0):
                self.delay = delay

            def act(self, view):
                if self.delay:
                    time.sleep(self.delay)
                legal = view.legal_actions()
                return legal[len(legal) // 2]
    '''),
    "clientonly.py": textwrap.dedent('''
        import os

        from kdtourney.bots.base import Bot

        if os.environ.get("KDTOURNEY_TEST_DASK_WORKER"):
            raise ImportError("not installed on this machine")


        class ClientOnly(Bot):
            """Plays the first legal action."""
            name = "clientonly"

            def act(self, view):
                return view.legal_actions()[0]
    '''),
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaskProcesses:
    """A scheduler and workers as separate process groups, killed for sure at the end."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.procs = []
        self.workers = []
        self.started = 0  # workers started, for unique names
        self.env = dict(os.environ, KDTOURNEY_TEST_DASK_WORKER="1", PYTHONWARNINGS="ignore")
        self.env.pop("KDTOURNEY_BOTS_DIR", None)

    def _start(self, *args, name):
        log = open(self.folder / f"{name}.log", "wb")
        proc = subprocess.Popen([DASK, *args], stdout=log, stderr=subprocess.STDOUT,
                                cwd=self.folder, env=self.env, start_new_session=True)
        log.close()
        self.procs.append(proc)
        return proc

    def start_scheduler(self):
        file = self.folder / "scheduler.json"
        self.scheduler = self._start("scheduler", "--host", "127.0.0.1", "--port", "0",
                                     "--no-dashboard", "--scheduler-file", str(file),
                                     name="scheduler")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if file.exists():
                try:
                    self.address = json.loads(file.read_text())["address"]
                    return self.address
                except (ValueError, KeyError):
                    pass
            assert self.scheduler.poll() is None, (self.folder / "scheduler.log").read_text()
            time.sleep(0.1)
        raise AssertionError("the scheduler did not start")

    def start_worker(self):
        i = self.started
        self.started += 1
        proc = self._start("worker", self.address, "--nthreads", "1", "--nworkers", "1",
                           "--host", "127.0.0.1", "--no-dashboard", "--name", f"w{i}",
                           "--local-directory", str(self.folder / f"w{i}"), name=f"worker{i}")
        proc.name = f"w{i}"
        self.workers.append(proc)
        return proc

    def wait_for_workers(self, n):
        with distributed.Client(self.address, timeout=30) as client:
            client.wait_for_workers(n, timeout=90)

    def replace_killed_workers(self):
        """Starts a worker for each one killed, then waits until the scheduler lists the live
        ones and only them (it notices a killed one late: counting two could count it)."""
        self.workers = [proc for proc in self.workers if proc.poll() is None]
        while len(self.workers) < 2:
            self.start_worker()
        live = sorted(proc.name for proc in self.workers)
        with distributed.Client(self.address, timeout=30) as client:
            deadline = time.monotonic() + 90
            while sorted(w["name"] for w in client.scheduler_info()["workers"].values()) != live:
                assert time.monotonic() < deadline, "the cluster did not get back to two workers"
                time.sleep(0.1)

    def kill(self, proc):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)

    def close(self):
        for proc in reversed(self.procs):
            self.kill(proc)


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """One scheduler and two workers for the module's tests: starting them costs seconds."""
    cluster = DaskProcesses(tmp_path_factory.mktemp("dask"))
    try:
        cluster.start_scheduler()
        cluster.start_worker()
        cluster.start_worker()
        cluster.wait_for_workers(2)
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def dask_processes(dask_cluster):
    """The module's cluster with two live workers; a worker a test killed is replaced after it."""
    yield dask_cluster
    dask_cluster.replace_killed_workers()


@pytest.fixture
def bots_folder(tmp_path):
    folder = tmp_path / "bots"
    folder.mkdir()
    for name, text in BOTS.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.slow
@pytest.mark.process
def test_same_store_as_a_local_run_with_shipped_bots(tmp_path, dask_processes, bots_folder):
    registry = BotRegistry([bots_folder], env=False, cwd=False, entry_points=False)
    for path in bots_folder.iterdir():  # the workers can only get the bots as shipped source
        path.unlink()
    t = prepare(registry, bots="random,middle,greedy", players="2,3", games=25, seed=5)
    local = run_tournament(t, tmp_path / "local", registry, workers=1)
    out = run_tournament(t, tmp_path / "dask", registry, scheduler=dask_processes.address)
    assert local.complete and out.complete and out.played == local.played == 25
    assert out.worker_losses == 0 and not out.notes
    assert_same_store(tmp_path / "local", tmp_path / "dask")
    assert set(load_results(tmp_path / "dask")["entrant"]) == {"random", "middle", "greedy"}
    # a re-run on the cluster plays nothing
    again = run_tournament(t, tmp_path / "dask", registry, scheduler=dask_processes.address)
    assert again.played == 0 and again.stored_before == 25

    # a bot the workers lack: one line naming the bot and the worker, nothing stored, no hang
    t = prepare(registry, bots="random,clientonly", games=4, seed=1)
    with pytest.raises(ArenaError) as err:
        run_tournament(t, tmp_path / "missing", registry, scheduler=dask_processes.address)
    message = str(err.value)
    assert "\n" not in message and "worker tcp://127.0.0.1:" in message
    assert "unknown bot 'clientonly'" in message and "not installed on this machine" in message
    assert load_games(tmp_path / "missing").empty

    # a bot in its own process: its faults carry its last stderr lines (a cluster keeps no log
    # files); a command that does not start on a worker stops the run naming the bot and worker
    marker = new_marker()
    names = ["exit-mid-game", "first-legal", "absent-on-workers"]
    fakes = BotRegistry([write_fake_bots(tmp_path / "fakes", names, marker=marker)],
                        env=False, cwd=False, entry_points=False)
    t = prepare(fakes, lineup="exit-mid-game,first-legal", games=2, seed=1)
    out = run_tournament(t, tmp_path / "fake", fakes, scheduler=dask_processes.address)
    faults = load_faults(tmp_path / "fake")
    assert out.complete and list(faults["kind"]) == ["crash", "crash"]
    assert all(s.endswith("Traceback: something broke") for s in faults["stderr"])
    assert not (tmp_path / "fake" / "logs").exists()
    assert left_behind(marker) == []  # the workers live on, their bot processes do not
    t = prepare(fakes, lineup="absent-on-workers,random", games=2, seed=1)
    with pytest.raises(ArenaError) as err:
        run_tournament(t, tmp_path / "absent", fakes, scheduler=dask_processes.address)
    message = str(err.value)
    assert "\n" not in message and "worker tcp://127.0.0.1:" in message
    assert "absent-on-workers.toml: the bot exited with status 3 (while asked for hello)" in message


@pytest.mark.slow
@pytest.mark.process
def test_a_bot_that_kills_its_worker_forfeits_as_in_a_local_run(tmp_path, dask_processes):
    registry = BotRegistry([write_faulty_bots(tmp_path / "bots")], env=False, cwd=False,
                           entry_points=False)
    t = prepare(registry, bots="crasher,random", games=12, seed=4)
    out = run_tournament(t, tmp_path / "dask", registry, scheduler=dask_processes.address)
    assert out.complete and out.failed == 0 and out.worker_losses >= 2, out.notes
    faults = load_faults(tmp_path / "dask")
    assert faults[["entrant", "kind", "call"]].values.tolist() == [["crasher", "crash", 7]]
    run_tournament(t, tmp_path / "local", registry, workers=1)
    assert_same_store(tmp_path / "local", tmp_path / "dask")


@pytest.mark.slow
@pytest.mark.process
def test_a_hung_in_process_bot_under_a_bank_is_caught_at_its_bank_and_margin(tmp_path,
                                                                            dask_processes):
    registry = BotRegistry([write_faulty_bots(tmp_path / "bots")], env=False, cwd=False,
                           entry_points=False)
    t = prepare(registry, bots="hanger,random", games=12, seed=1, time_control="0.3+0")
    out = run_tournament(t, tmp_path / "dask", registry, scheduler=dask_processes.address,
                         hang_timeout=60.0, play=PlaySettings(margin=0.2))
    assert out.complete
    faults = load_faults(tmp_path / "dask")
    assert faults[["entrant", "kind"]].values.tolist() == [["hanger", "timeout"]]
    # as in a local run: after what was left of its 0.3 s bank, its 0.2 s margin and 2 s
    waits = [float(re.search(r"no progress for ([0-9.]+) s", note).group(1))
             for note in out.notes if "hung" in note]
    assert len(waits) == 2 and all(2.2 < w <= 2.5 for w in waits), out.notes


@pytest.mark.slow
@pytest.mark.process
def test_a_worker_killed_mid_run(tmp_path, dask_processes, bots_folder):
    args = ["run", "--bots", "random,middle:delay=0.008", "--games", "24", "--seed", "7",
            "--bots-dir", str(bots_folder), "--no-report"]
    folder = tmp_path / "dask"
    run = subprocess.Popen([KDTOURNEY, *args, "--out", str(folder), "--scheduler",
                            dask_processes.address], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        wait_stored(run, folder, 4, timeout=90)
        assert stored(folder) < 24, "the run ended before the kill: make the games slower"
        dask_processes.kill(dask_processes.workers[0])
        output, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 0, output
    assert "was lost; its games are played again elsewhere" in output
    games = load_games(folder)
    assert sorted(games["game"]) == list(range(24)) and (games["status"] == "ok").all()
    local = CliRunner().invoke(main, args + ["--out", str(tmp_path / "local"), "--workers", "2"])
    assert local.exit_code == 0, local.output
    assert_same_store(tmp_path / "local", folder)


@pytest.mark.slow
@pytest.mark.process
def test_a_worker_the_scheduler_still_lists_after_it_died_holds_nothing_up(
        tmp_path, dask_processes, monkeypatch):
    """The scheduler notices a killed worker late: a run starting meanwhile sees it listed, and
    the setup task pinned to it would wait for it for ever. The run goes on without it."""

    listed = cluster.Cluster.wait_for_workers
    gone = "tcp://127.0.0.1:9"  # the discard port: no worker there
    monkeypatch.setattr(cluster.Cluster, "wait_for_workers",
                        lambda self, *args, **kw: dict(listed(self, *args, **kw), **{gone: 1}))
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    t = prepare(registry, bots="greedy,random", games=4, seed=1)
    outcome = []
    play = threading.Thread(target=lambda: outcome.append(run_tournament(
        t, tmp_path / "t", registry, scheduler=dask_processes.address)), daemon=True)
    play.start()
    play.join(120)  # a guard against the hang this tests, not a timing: the run takes seconds
    assert not play.is_alive(), "the run waits for a worker that is gone"
    assert outcome[0].complete and load_faults(tmp_path / "t").empty


@pytest.mark.slow
@pytest.mark.process
def test_local_cluster_from_the_command_line(tmp_path):
    folder = tmp_path / "t"
    done = subprocess.run([KDTOURNEY, "run", "--bots", "random,greedy", "--players", "2,4",
                           "--games", "8", "--seed", "3", "--out", str(folder), "--scheduler",
                           "local:2", "--no-report"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "seed 3, 2 workers" in lines[0] and lines[-1] == f"{folder}: 8 games"
    local = CliRunner().invoke(main, ["run", "--bots", "random,greedy", "--players", "2,4",
                                      "--games", "8", "--seed", "3", "--out",
                                      str(tmp_path / "local"), "--workers", "1", "--no-report"])
    assert local.exit_code == 0, local.output
    assert_same_store(tmp_path / "local", folder)


@pytest.mark.slow
@pytest.mark.process
def test_sprt_on_a_local_cluster(tmp_path):
    args = ["sprt", "--candidate", "greedy", "--baseline", "random", "--elo1", "30",
            "--max-games", "400", "--seed", "3", "--no-report"]
    folder = tmp_path / "dask"
    done = subprocess.run([KDTOURNEY, *args, "--out", str(folder), "--scheduler", "local:2"],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "seed 3, 2 workers" in lines[0] and lines[-1].startswith("H1 accepted")
    local = CliRunner().invoke(main, args + ["--out", str(tmp_path / "local"), "--workers", "1"])
    assert local.exit_code == 0, local.output
    assert local.stdout.splitlines()[-1] == lines[-1]
    assert store.load_sprt(folder).equals(store.load_sprt(tmp_path / "local"))
    assert_same_store(tmp_path / "local", folder, blocks=len(store.load_sprt(folder)))


@pytest.mark.parametrize("address, expected", [
    (None, "cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: "),
    ("local:0", "--scheduler 'local:0': local:N needs a number of workers N from 1 to "),
    ("local:99999", "--scheduler 'local:99999': local:N needs a number of workers N from 1 to "),
    ("not an address", "--scheduler 'not an address' is not a scheduler address"),
])
@pytest.mark.timeout(30)  # an unreachable scheduler is told at once, not after Dask's own wait
def test_bad_scheduler_is_one_line_and_stores_nothing(tmp_path, address, expected):
    port = free_port()
    address = address or f"tcp://127.0.0.1:{port}"
    result = CliRunner().invoke(main, ["run", "--bots", "random,greedy", "--games", "4", "--out",
                                       str(tmp_path / "t"), "--scheduler", address])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Error: " + expected.format(port=port))
    assert result.output.count("\n") == 1
    assert not (tmp_path / "t").exists()


def test_scheduler_with_workers_and_without_the_extra(tmp_path, monkeypatch):
    result = CliRunner().invoke(main, ["run", "--bots", "random,greedy", "--games", "4", "--out",
                                       str(tmp_path / "t"), "--scheduler", "local:2",
                                       "--workers", "2"])
    assert result.exit_code == 2 and result.output.startswith("Error: --workers is for local")
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if the extra were not installed
    result = CliRunner().invoke(main, ["run", "--bots", "random,greedy", "--games", "4", "--out",
                                       str(tmp_path / "t"), "--scheduler", "local:2"])
    assert result.exit_code == 2
    assert result.output == ("Error: --scheduler needs the dask extra: "
                             "pip install 'kdtourney[dask]'\n")
    assert not (tmp_path / "t").exists()


@pytest.mark.process
def test_bots_of_several_files_and_what_workers_load(tmp_path, dask_processes):

    examples = Path(__file__).resolve().parents[2] / "examples" / "bundle"
    folder = shutil.copytree(examples, tmp_path / "bundle")
    registry = BotRegistry([folder], env=False, cwd=False, entry_points=False)
    shutil.rmtree(folder)  # the workers get the module, its package and its weights as shipped
    t = prepare(registry, bots="terrain-taster,random", games=4, seed=3)
    out = run_tournament(t, tmp_path / "t", registry, scheduler=dask_processes.address)
    assert out.complete and load_faults(tmp_path / "t").empty
    # a bot that is another build on the workers: one line naming the entrant and the worker
    fakes = BotRegistry([write_fake_bots(tmp_path / "fakes", ["other-build-on-workers"])],
                        env=False, cwd=False, entry_points=False)
    t = prepare(fakes, bots="other-build-on-workers,random", games=2, seed=1)
    with pytest.raises(ArenaError) as err:
        run_tournament(t, tmp_path / "other", fakes, scheduler=dask_processes.address)
    message = str(err.value)
    assert "\n" not in message and message.startswith(
        "other-build-on-workers on worker tcp://127.0.0.1:")
    assert "the bot loaded there is not the code the store recorded" in message
    assert "differs in bot_version" in message and load_games(tmp_path / "other").empty


# --- a one-game task Dask gave up on (KilledWorker), without a cluster ----------------------------

class KilledWorker(Exception):
    """Named as distributed's: what the client tells apart is the name."""


class _Future:
    """A Dask future of a task that returned `value`, or (`exc` given) failed with `exc`."""

    def __init__(self, value=None, exc=None):
        self.status = "finished" if exc is None else "error"
        self.value, self.exc = value, exc

    def result(self):
        return self.value

    def exception(self):
        return self.exc


def _play_state(told, monkeypatch):
    """A client's play state over a 2-player tournament whose nannies tell of the deaths `told`
    ([(game, seat, call)], each told once)."""

    monkeypatch.setattr(dask_service, "DEATH_WAIT", 0.05)
    t = prepare(BotRegistry(env=False, cwd=False, entry_points=False), bots="random,greedy",
                games=4, seed=1)
    specs = t.plan().games
    play = dask_service.DaskService.__new__(dask_service.DaskService)

    def run(function, *args, nanny=False, on_error=None):
        reports, told[:] = list(told), []
        return {"nanny": reports}

    play.client = SimpleNamespace(run=run, status="running")
    play.run = b"r" * 16
    play.specs, play.sent = dict(enumerate(specs)), dict(enumerate(specs))
    play.sendings = dict.fromkeys(play.specs, 1)
    play.inflight, play.isolate, play.pending = {}, set(), deque()
    play.policy = ForfeitPolicy(play.specs, t.entrants)
    play.finished, play.notes, play.on_note = [], [], None
    play.kills, play.kills_at = 0, {}
    return play


def _failed(play):
    """The games the service handed back as failed."""
    return [f.spec.game for f in play.finished if f.result is None]


def _given_up(play, game, kills=0):
    """Dask gave up on `game`'s task; `kills`: workers the client killed while it waited."""
    future = _Future(exc=KilledWorker("gave up"))
    play.inflight[future] = [game]
    play.kills_at[future] = play.kills
    play.kills += kills
    assert play.finished_task(future)


def test_a_worker_stuck_in_a_decided_game_is_ended_without_a_loss(monkeypatch):
    """Dask cannot stop a cancelled task's thread: a copy of a decided game's task hung on a
    worker held its only thread, and the tasks queued behind it, for ever (a hung test run). The
    worker is ended (its nanny starts another); no loss is counted, the game being decided, or
    sent again since (its hang was counted at that sending)."""

    play = _play_state([], monkeypatch)
    workers = {"tcp://127.0.0.1:1": 1, "tcp://127.0.0.1:2": 1}
    ended = []

    def run(function, nanny=False, on_error=None, workers=None):
        if function is dask_worker.progress:  # game, seat, call, seconds in it, limit, sending
            return {"tcp://127.0.0.1:1": (2, 0, 7, 500.0, 0.5, sending[0]),
                    "tcp://127.0.0.1:2": (3, 1, 2, 0.1, 0.5, 1)}
        if function is dask_worker.exit_now:
            ended.extend(workers)
        return {}

    play.client = SimpleNamespace(run=run, status="running")
    play.cluster = SimpleNamespace(workers=lambda: dict(workers))
    play.known, play.killed, play.losses, play.hang_timeout = dict(workers), set(), 0, 60.0
    play.sendings[2] = 2
    sending = [1]  # game 2's first sending, sent again since: Dask ran the first copy again
    play.watch()   # elsewhere before the cancel reached it (a hang counted twice in a CI run)
    assert ended == ["tcp://127.0.0.1:1"] and play.losses == 0 and play.notes == []
    sending[0] = 2
    play.killed.clear()
    ended.clear()
    decided = play.specs.pop(2)
    play.watch()
    assert ended == ["tcp://127.0.0.1:1"] and play.losses == 0 and play.notes == []
    play.specs[2] = decided  # the same worker in a game still wanted: hung, a loss
    play.killed.clear()
    play.watch()
    assert ended[-1] == "tcp://127.0.0.1:1" and play.losses == 1
    assert play.notes == ["worker tcp://127.0.0.1:1 hung (no progress for 2.5 s) in game 2; "
                          "playing it again"]


@pytest.mark.process
def test_the_worker_plugin_reaches_a_worker_by_name_and_stops_its_bots():
    """The plugin class is made on first use (the commands do not import distributed); a worker
    unpickles it by name, keeps what it ships, and its teardown stops the bot processes of the
    state built from it, and only those."""

    class State:
        closed = False

        def close(self):
            self.closed = True

    plugin = pickle.loads(pickle.dumps(dask_worker.Shipment("k1", {"sources": {}})))
    assert isinstance(plugin, WorkerPlugin) and type(plugin) is dask_worker.Shipment
    plugin.setup(None)
    assert dask_worker.SHIPMENTS["k1"] == {"sources": {}}
    mine, other = dask_worker.STATES["k1"], dask_worker.STATES["k2"] = State(), State()
    plugin.teardown(None)
    assert mine.closed and not other.closed and "k1" not in dask_worker.SHIPMENTS
    assert list(dask_worker.STATES) == ["k2"]
    dask_worker.STATES.clear()
    command = ("import sys, kdtourney.cli, kdtourney.commands.run; "
               "assert 'distributed' not in sys.modules")
    subprocess.run([sys.executable, "-c", command], check=True)


def test_a_worker_takes_in_the_entrants_it_lacks_once_and_asks_again_when_behind(monkeypatch):
    """A batch carries the entrants from the fewest any worker said it knows, never the sources:
    a worker adds those it lacks (warming a bot's kernels once: a new value of a known bot's
    number is not warmed again), and one that knows fewer than the batch starts from plays
    nothing and says how many it knows; the client sends the batch again from there."""

    warmed = []
    real = workers.warm_bot

    def warm_bot(bot, *args):  # counts warm-ups done: one put off (KernelBusy) is taken again
        real(bot, *args)
        warmed.append(bot.name)

    monkeypatch.setattr(workers, "warm_bot", warm_bot)
    t = prepare(BotRegistry(env=False, cwd=False, entry_points=False), bots="random,greedy",
                games=2, seed=1)
    spec = t.plan().games[0]
    dask_worker.SHIPMENTS["k"] = dict(sources={}, tdict=t.to_dict(), settings=ProcessSettings(),
                                   isolate=False, listed=None, identities={})
    try:
        mcts = [("mcts:iterations=4", "mcts:iterations=4"), ("mcts:iterations=5",
                                                             "mcts:iterations=5")]
        third = replace(spec, seats=(2, 0))
        addr, known, results = dask_worker.play_batch("k", b"r" * 16, (2, mcts[:1], {}),
                                                  [(third, None, 1)])
        assert (known, [g for g, _ in results]) == (3, [third.game])
        assert sorted(warmed) == ["greedy", "mcts", "random"]
        assert dask_worker.play_batch("k", b"r" * 16, (4, mcts[1:], {}), [(third, None, 1)]) == \
            (addr, 3, None)
        fourth = replace(spec, seats=(3, 2))
        _, known, results = dask_worker.play_batch("k", b"r" * 16, (2, mcts, {}),
                                                   [(fourth, None, 1)])
        assert known == 4 and results[0][1].status == "ok" and len(warmed) == 3
    finally:
        dask_worker.close_states()
        dask_worker.SHIPMENTS.clear()

    play = _play_state([], monkeypatch)  # the client: the batch again, from what it knows
    pairs = Entrants(replace(t, entrants=("a", "b", "c", "d"),
                             specs=("random", "greedy", "random", "greedy"))).pairs
    play.shipping = Shipping.__new__(Shipping)
    play.shipping.identities = dict.fromkeys("abcd", {})
    play.known, play.shipping.heard, play.shipping.base = {"w1": 1, "w2": 1}, {"w1": 4}, 2
    assert play.shipping.joined(pairs, play.known) == \
        (2, [("c", "random"), ("d", "greedy")], {"c": {}, "d": {}})
    future = _Future(("w3", 1, None))
    play.inflight[future] = [0, 1]
    assert play.finished_task(future) and list(play.pending) == [0, 1] and not play.finished
    assert play.shipping.joined(pairs, play.known)[0] == 1


def test_a_game_that_only_waited_on_dying_workers_is_played_again(monkeypatch):
    play = _play_state([], monkeypatch)
    _given_up(play, 1)  # no nanny tells of a death in game 1: one loss, not four
    assert play.policy.losses[1] == 1 and list(play.pending) == [1] and _failed(play) == []
    for _ in range(3):  # but a game no nanny can place that keeps killing ends as failed
        _given_up(play, 1)
    assert _failed(play) == [1] and 1 not in play.specs and not play.pending


def test_a_game_that_waited_on_workers_killed_for_other_games_hangs_is_no_loss(monkeypatch):
    """Dask counts a worker the client killed (hung in another game) against every task that
    waited on it: a game played alone after a hang (every sending of a sleeping bot's game hangs
    its worker) could wait behind other hanging games, be given up after four such kills, count
    a loss outside any bot call each time, and end as failed. Sent again, it is no loss."""
    play = _play_state([], monkeypatch)
    for _ in range(6):
        _given_up(play, 1, kills=4)
    assert play.policy.losses[1] == 0 and list(play.pending) == [1] and _failed(play) == []
    _given_up(play, 1)  # no kill of the client's while it waited: one loss, as before
    assert play.policy.losses[1] == 1


def test_the_deaths_a_nanny_tells_of_are_the_losses_that_count(monkeypatch):
    told = [(2, 0, 7), (2, 0, 7)]
    play = _play_state(told, monkeypatch)
    _given_up(play, 2)
    assert play.policy.losses[2] == 2 and play.policy.forced(2) and _failed(play) == []


@pytest.mark.process
def test_a_nanny_tells_each_run_of_the_deaths_in_its_own_games(monkeypatch, tmp_path):
    """On a long-lived cluster a worker may die in a game after its run has no more use for it
    (a copy of a decided game's task): the next run, whose game of the same index it is not, must
    not take that death as its own (a flaky test found it: a run's first loss was an earlier
    test's death in its game 2). Each run reads the deaths in its own games, once."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    earlier, this = b"e" * 16, b"t" * 16
    prefix = dask_worker.trace_prefix(os.getpid())  # this process plays the nanny
    Path(f"{prefix}{dead.pid}").write_bytes(dask_worker.TRACE.pack(2, 0, 7, earlier))
    assert dask_worker.collect_deaths(this) == []
    assert dask_worker.collect_deaths(earlier) == [(2, 0, 7)]
    Path(f"{prefix}{dead.pid}").write_bytes(dask_worker.TRACE.pack(3, 1, 4, this))
    assert dask_worker.collect_deaths(this) == [(3, 1, 4)]
    assert dask_worker.collect_deaths(this) == [] and list(tmp_path.iterdir()) == []


def test_a_worker_machine_without_every_sandbox_limit_is_told_once_or_refused():
    weaker = ["no CPU quota", "no freezing"]
    told = set()
    infos = [dict(address=f"tcp://10.0.0.{h}:{p}", host=f"node{h}", missing=weaker)
             for h, p in ((7, 4001), (7, 4002), (8, 4001))]
    notes = [cluster.limits_note(info, told, require=False) for info in infos]
    assert notes[1] is None and told == {"node7", "node8"}  # one note per machine
    assert notes[0] == ("--sandbox on worker tcp://10.0.0.7:4001 (node7): no CPU quota, no "
                        "freezing; kdtourney may not make the cgroups for them there (run it as "
                        "root, or in a cgroup v2 delegated to its user, e.g. under systemd-run "
                        "--user --scope -p Delegate=yes)")
    assert cluster.limits_note(dict(infos[0], missing=[]), set(), require=True) is None
    with pytest.raises(ArenaError, match=r"^--require-limits: --sandbox on worker tcp://10\.0\.0"
                                         r"\.7:4001 \(node7\): no CPU quota"):
        cluster.limits_note(infos[0], told, require=True)


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None,
                    reason="bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
def test_sandboxed_on_a_cluster_every_worker_checks_the_limits(tmp_path, dask_processes):

    bots = tmp_path / "bots"
    for name in ("plain", "other"):  # one folder each: a sandboxed bot does not share its folder
        write_fake_bots(bots / name, [name])
    registry = BotRegistry([bots], env=False, cwd=False, entry_points=False)
    t = prepare(registry, bots="plain,other", games=4, seed=2)
    play = PlaySettings(sandbox=True, sandbox_allow=SANDBOX_ALLOW)
    if cgroups.machine().missing:  # the workers run here: they lack the same
        with pytest.raises(ArenaError, match="^--require-limits: --sandbox on worker "):
            run_tournament(t, tmp_path / "t", registry, scheduler=dask_processes.address,
                           play=play, require_limits=True)
    else:
        out = run_tournament(t, tmp_path / "t", registry, scheduler=dask_processes.address,
                             play=play, require_limits=True)
        assert out.complete and not [n for n in out.notes if "--sandbox on" in n]
