"""`kdtourney tune` from the command line: a synthetic objective with a known optimum, resume after
a kill, the folder's page, verify, bad input.

The objective is tests/data/tune_bots/peaked.py: a bot that plays greedy with probability
qx * qn (else at random), qx = 1 - |x - 0.7| / 3 and qn = 1 - |n - 6| / 10, so it is strongest at
x = 0.7 (a float parameter, range [-2, 3]) and n = 6 (an int, range [0, 12]). Each tune starts far
away, at x = -1.5 and n = 12 (about half the range from the optimum), and must end within a tenth
of the range of it: |x - 0.7| < 0.5 and |n - 6| < 1.2. The tunes are short, so c_end is a fifth
of the range (a larger perturbation, a larger signal per game); r_end is the default.
"""

import collections
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from arena_support import stored
from click.testing import CliRunner
from kdtp_support import write_fake_bots

from kdtourney import store
from kdtourney.cli import main
from kdtourney.commands import tune as tuning
from kdtourney.registry import BotRegistry
from kdtourney.stats import spsa

BOTS = Path(__file__).parent.parent / "data" / "tune_bots"


def run(*args):
    return CliRunner().invoke(main, ["tune", *[str(a) for a in args]])


def lines(result):
    return result.stdout.strip().splitlines()


def final(spec):
    """{'n': 6, 'x': 0.7} from the tuned spec peaked:n=6:x=0.7."""
    return {k: float(v) for k, v in (part.split("=") for part in spec.split(":")[1:])}


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.parametrize("players, iterations, batch", [(2, 300, 100), (4, 200, 50)])
def test_a_tune_ends_near_the_optimum_from_far_away(tmp_path, players, iterations, batch):
    folder = tmp_path / f"p{players}"
    args = ["peaked", "--bots-dir", BOTS, "--param", "x=-1.5,-2,3,1", "--param", "n=12,0,12,2.4",
            "--players", players, "--iterations", iterations, "--batch", batch, "--seed", 1,
            "--workers", 1, "--out", folder, "--no-report"]
    if players == 4:
        args += ["--verify", 40]
    result = run(*args)
    assert result.exit_code == 0, result.output
    out = lines(result)
    values = final(out[-1])
    assert abs(values["x"] - 0.7) < 0.5, out[-1]
    assert abs(values["n"] - 6) < 1.2 and values["n"] == int(values["n"]), out[-1]
    assert out[0].startswith(f"tune peaked:n=12:x=-1.5 (lineup, {players}-player): "
                             f"{iterations} iterations of 1 block ({players} games)")
    table = store.load_tune_table(folder)
    assert list(table["k"]) == list(range(1, iterations + 1))
    assert len(store.load_games(folder, columns=["game"])) == iterations * players
    assert all(int(v) == v for v in table["plus"].str[1])  # n played as whole numbers
    page = (folder / "tune.html").read_text()
    assert page.count("<svg") == 3 and "(theta - start) / c_end" in page
    if players == 4:  # the start (q about 0.1) against the tuned (q near 1): a clear gain
        assert out[-2].startswith("the tune beat its start values: tuned peaked:")
        assert len(store.load_games(folder / "verify", columns=["game"])) == 40
        other = run("--resume", folder, "--verify", 20)  # tune --resume with another size
        assert other.exit_code == 2 and other.output.strip().splitlines()[-1:] == [
            f"Error: {folder / 'verify'} holds another verify (games: 40 (stored) vs 20 (now)): "
            f"give the --verify of that one again, or remove {folder / 'verify'}"], other.output
        sequential = ("--verify", 400, "--verify-elo1", 50)
        other = run("--resume", folder, *sequential)
        assert other.exit_code == 2 and other.output.strip().splitlines()[-1:] == [
            f"Error: {folder / 'verify'} holds a verify of 40 games without a sequential test: "
            "give the --verify of that one again (without --verify-elo0/--verify-elo1), or "
            f"remove {folder / 'verify'}"], other.output
        shutil.rmtree(folder / "verify")
        tested = run("--resume", folder, *sequential)  # an SPRT: it stops at H1, far below 400
        assert tested.exit_code == 0, tested.output
        verdict = lines(tested)[-2]
        assert verdict.startswith("H1 accepted: the tune is stronger than the start values (a "
                                  "tune that is not passes about 5% of the time); LLR "), verdict
        assert verdict.endswith(f"; tuned {out[-1]} against start peaked:n=12:x=-1.5")
        counted = int(verdict.split(" games (")[0].rsplit(" ", 1)[1])
        assert 60 <= counted < 400
        assert store.load_config(folder / "verify")["sprt"]["elo1"] == 50
        other = run("--resume", folder, "--verify", 400)
        assert other.exit_code == 2 and other.output.strip().splitlines()[-1:] == [
            f"Error: {folder / 'verify'} holds a sequential verify (--verify-elo0 0 "
            "--verify-elo1 50): give the --verify options of that one again, or remove "
            f"{folder / 'verify'}"], other.output
        other = run("--resume", folder, *sequential, "--verify-elo0", 10)
        assert other.exit_code == 2 and "holds another verify (test.elo0: 0.0 (stored) vs " \
            "10.0 (now)): give the --verify options of that one again" in other.output
        again = run("--resume", folder, *sequential)  # decided: nothing to play, the same line
        assert again.exit_code == 0 and lines(again)[-2] == verdict, again.output


def tune_args(folder, workers, iterations=12):
    return ["peaked", "--bots-dir", BOTS, "--param", "x=-1.5,-2,3,1", "--param", "n=12,0,12,2",
            "--players", 2, "--iterations", iterations, "--batch", 4, "--seed", 9,
            "--workers", workers, "--out", folder, "--no-report", "-q"]


@pytest.mark.slow
@pytest.mark.process
def test_a_killed_tune_resumes_to_the_values_of_an_uninterrupted_one(tmp_path):
    # 12 batches of 8 games: the kill lands after the first and long before the last even when
    # this test's process is slow to look (12 iterations, 24 games, once ended before it)
    whole = run(*tune_args(tmp_path / "whole", 1, iterations=48))
    assert whole.exit_code == 0, whole.output
    folder = tmp_path / "killed"
    command = [str(Path(sys.executable).parent / "kdtourney"), "tune",
               *[str(a) for a in tune_args(folder, 2, iterations=48)]]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while stored(folder) < 10 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)  # the tune and its workers, mid-run
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the tune ended before it could be killed"
    assert 10 <= stored(folder) < 96  # killed after the first batch, before the last
    for other in ("run", "sprt"):  # they would play its batch's games with other values
        refused = CliRunner().invoke(main, [other, "--resume", str(folder), "--no-report"])
        assert refused.exit_code == 2 and refused.output.strip().endswith(
            f"continue it with kdtourney tune --resume {folder}"), refused.output
    resumed = CliRunner().invoke(main, ["tune", "--resume", str(folder), "--workers", 2, "-q",
                                        "--no-report"])
    assert resumed.exit_code == 0, resumed.output
    assert lines(resumed)[-1] == lines(whole)[-1]
    a, b = store.load_tune_table(tmp_path / "whole"), store.load_tune_table(folder)
    assert a.equals(b)
    moves = store.load_games(tmp_path / "whole", columns=["game", "moves"])
    assert moves.equals(store.load_games(folder, columns=["game", "moves"]))
    # every block recorded with the values it played, the table written once
    columns = ["block", "first_game", "seats", "entrants", "deal_seeds"]
    assert store.load_blocks(folder)[columns].equals(store.load_blocks(tmp_path / "whole")[columns])
    assert store.load_config(folder)["tournament"] == store.load_config(tmp_path / "whole")[
        "tournament"]
    assert store.load_config(folder)["tournament"]["entrants"] == ["theta+", "theta-"]
    # the same command again: nothing to play, the same values
    again = run(*tune_args(folder, 1, iterations=48))
    assert again.exit_code == 0 and lines(again)[-1] == lines(whole)[-1]


@pytest.mark.slow
@pytest.mark.process
def test_a_folder_made_before_the_rule_was_recorded_finishes_under_rule_1(tmp_path, monkeypatch):
    # --blocks 2: rule 1 summed the two blocks' results, rule 2 averages them
    args = ["peaked", "--bots-dir", BOTS, "--param", "x=-1.5,-2,3,1", "--param", "n=12,0,12,2",
            "--iterations", 4, "--batch", 2, "--blocks", 2, "--seed", 3, "--workers", 1,
            "--no-report", "-q"]
    new = run(*args, "--out", tmp_path / "new")
    with monkeypatch.context() as m:  # the tune of a kdtourney that knew rule 1 only
        m.setattr(spsa, "SPSA_RULE", 1)
        old = run(*args, "--out", tmp_path / "old")
    assert new.exit_code == 0 and old.exit_code == 0, new.output + old.output
    assert lines(new)[-1] != lines(old)[-1]
    assert store.load_config(tmp_path / "new")["tune"]["rule"] == 3
    # that kdtourney recorded no rule; it was killed in the second batch (blocks 4 to 7)
    folder = tmp_path / "old"
    with store.open_store(folder) as st:
        st.set_config("tune", {k: v for k, v in st.config()["tune"].items() if k != "rule"})
    with sqlite3.connect(folder / "tournament.sqlite") as conn:
        conn.execute("DELETE FROM results WHERE game IN (SELECT game FROM games WHERE block >= 5)")
        conn.execute("DELETE FROM games WHERE block >= 5")
        conn.execute("DELETE FROM tune WHERE k > 2")
    assert stored(folder) == 10
    resumed = CliRunner().invoke(main, ["tune", "--resume", str(folder), "--no-report"])
    assert resumed.exit_code == 0, resumed.output
    assert f"note: {folder} was made under SPSA rule 1 (this kdtourney makes rule 3): it " \
           "finishes under rule 1" in resumed.output
    assert lines(resumed)[-1] == lines(old)[-1]
    assert stored(folder) == 16


@pytest.mark.parametrize("args, message", [
    (["nosuchbot", "--param", "c=0.2,0,1"], "unknown bot 'nosuchbot'"),
    (["mcts", "--param", "nope=1,0,2"], "--param nope: mcts has no parameter 'nope'"),
    (["mcts", "--param", "c=0.2,1.0,0.02"], "--param c: min must be less than max"),
    (["mcts", "--param", "c=2,0.02,1.0"], "--param c: start 2 is outside its range"),
    (["mcts", "--param", "policy=1,0,2"], "--param policy: mcts's parameter policy is not numeric"),
    (["mcts", "--param", "c=0.2,0.02"], "--param 'c=0.2,0.02': give name=start,min,max"),
    (["mcts", "--param", "c=x,0,1"], "--param c: start must be a number, not 'x'"),
    (["mcts"], "give at least one --param"),
    (["mcts", "--param", "c=0.2,0,1", "--against", "greedy"], "--against fills the seats"),
    (["mcts", "--param", "c=0.2,0,1", "--players", "4", "--against", "greedy,random,random"],
     "--against: give one spec, or 2"),
    (["mcts:c=0.3", "--param", "c=0.2,0,1"], "--param c: c is also fixed in 'mcts:c=0.3'"),
    (["mcts", "--param", "c=0.2,0,1", "--param", "c=0.3,0,1"], "--param c given twice"),
    (["mcts", "--param", "c=0.2,0,1", "--iterations", "0"], "--iterations must be positive"),
    (["mcts", "--param", "c=0,-1,0.5"], "--param c: the range [-1, 0.5] holds values the bot "
                                        "refuses: mcts:c=-1.0: c must be a number >= 0.0"),
    (["mcts", "--param", "c=0.2,0.02,1e308"], "--param c: min and max must lie within +-1e+12"),
    (["mcts", "--param", "c=0.2,0,1", "--iterations", "99999999999"],
     "--iterations must be at most 10,000,000"),
    (["mcts", "--param", "c=0.2,0,1", "--verify", "40", "--verify-elo0", "5", "--verify-elo1",
      "5"], "--verify-elo1 must be greater than --verify-elo0"),
    (["mcts", "--param", "c=0.2,0,1", "--verify-elo1", "20"],
     "--verify-elo1 makes --verify N an SPRT of at most N games: give --verify N as well"),
    (["mcts", "--param", "c=0.2,0,1", "--verify", "40", "--verify-alpha", "0.1"],
     "--verify-alpha is for a sequential verify: give --verify-elo0 and --verify-elo1"),
    (["mcts", "--param", "c=0.2,0,1", "--verify", "40", "--verify-elo1", "20", "--verify-beta",
      "0.7"], "--verify-beta is an error rate strictly between 0 and 0.5, not 0.7"),
    (["mcts", "--param", "c=0.2,0,1", "--verify", "40", "--verify-elo0", "nan"],
     "--verify-elo0 must be a finite number, not nan"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    result = run(*args, "--out", tmp_path / "t")
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and result.output.startswith("Error: "), result.output
    assert message in result.output
    assert not (tmp_path / "t").exists()


@pytest.mark.process
def test_another_tune_in_the_folder_is_refused(tmp_path):
    folder = tmp_path / "t"
    first = run(*tune_args(folder, 1, iterations=4)[:-1])  # not quiet: the page line
    assert first.exit_code == 0, first.output
    assert f"{folder / 'tune.html'}: 8 games, 4 iterations" in first.output
    other = run("peaked", "--bots-dir", BOTS, "--param", "x=0,-2,3", "--out", folder)
    assert other.exit_code == 2 and other.output.startswith(f"Error: {folder} holds another tune")


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.dask
def test_a_tune_on_a_dask_cluster_ends_at_the_values_of_a_local_one(tmp_path):
    pytest.importorskip("distributed",
                        reason="the dask extra is not installed (pip install 'kdtourney[dask]')")
    local = run(*tune_args(tmp_path / "local", 1, iterations=8))
    assert local.exit_code == 0, local.output
    args = tune_args(tmp_path / "dask", 1, iterations=8)
    i = args.index("--workers")
    cluster = run(*args[:i], "--scheduler", "local:2", *args[i + 2:])
    assert cluster.exit_code == 0, cluster.output
    assert lines(cluster)[-1] == lines(local)[-1]
    tables = [store.load_tune_table(tmp_path / name) for name in ("local", "dask")]
    assert tables[0].equals(tables[1])


# KDTOURNEY_COUNT=FILE: every process of a command writes a line "PID WHAT" to FILE as it builds a
# worker's registry (build), warms up a bot (warm) or starts TOML bots to say hello (start)
_COUNT = """
import os

where = os.environ.get("KDTOURNEY_COUNT")
if where:
    from kdtourney.service import worker as workers
    from kdtourney.registry import registry

    def counted(what, real):
        def call(*args, **kwargs):
            if what != "start" or args[0]:
                with open(where, "a") as f:
                    f.write(f"{os.getpid()} {what}\\n")
            return real(*args, **kwargs)
        return call

    registry.BotRegistry.from_sources = classmethod(
        counted("build", registry.BotRegistry.from_sources.__func__))
    workers.warm_bot = counted("warm", workers.warm_bot)
    registry.check_programs = counted("start", registry.check_programs)
"""


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.dask
@pytest.mark.parametrize("kind", ["python", "toml"])
def test_on_a_dask_cluster_a_tune_sets_up_each_worker_and_bot_once(tmp_path, kind):
    """Every iteration's new parameter values join the workers. Before, each one made every Dask
    worker build its state again, start the TOML bot again and warm up every entrant ever joined
    (2 builds and 26 warm-ups per worker in 8 iterations, quadratic in a tune's length); now each
    worker builds its state once, starts a TOML bot once and warms up a bot's kernels once."""
    pytest.importorskip("distributed",
                        reason="the dask extra is not installed (pip install 'kdtourney[dask]')")
    site, counts = tmp_path / "site", tmp_path / "counts"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_COUNT)
    if kind == "python":
        args = tune_args(tmp_path / "t", 1, iterations=8)
    else:
        folder = write_fake_bots(tmp_path / "bots", ["steady"])
        (folder / "steady.toml").write_text((folder / "steady.toml").read_text()
                                            + "[options]\nweight = 0.5\n")
        args = ["steady", "--bots-dir", folder, "--param", "weight=0.5,0,1", "--iterations", 6,
                "--batch", 4, "--seed", 2, "--workers", 1, "--out", tmp_path / "t", "--no-report",
                "-q"]
    i = args.index("--workers")
    args[i:i + 2] = ["--scheduler", "local:2"]
    env = dict(os.environ, KDTOURNEY_COUNT=str(counts), PYTHONPATH=os.pathsep.join(filter(None, [
        str(site), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([str(Path(sys.executable).parent / "kdtourney"), "tune",
                           *[str(a) for a in args]], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert stored(tmp_path / "t") == (16 if kind == "python" else 12)
    workers: dict = {}
    for line in counts.read_text().splitlines():
        pid, what = line.split()
        workers.setdefault(pid, collections.Counter())[what] += 1
    once = {"build": 1, "warm": 1} if kind == "python" else {"build": 1, "start": 1}
    built = [dict(c) for c in workers.values() if c["build"]]
    assert built == [once, once], workers


@pytest.mark.process
def test_a_toml_bot_s_options_can_be_tuned(tmp_path):
    folder = write_fake_bots(tmp_path / "bots", ["steady"])
    toml = folder / "steady.toml"
    toml.write_text(toml.read_text() + "[options]\nweight = 0.5\ndepth = 3\n")
    out = tmp_path / "t"
    result = run("steady", "--bots-dir", folder, "--param", "weight=0.5,0,1", "--param",
                 "depth=3,1,6", "--iterations", 4, "--batch", 4, "--seed", 2, "--workers", 1,
                 "--out", out, "--no-report", "-q")
    assert result.exit_code == 0, result.output
    assert lines(result)[-1].startswith("steady:depth=")
    table = store.load_tune_table(out)
    assert list(table["k"]) == [1, 2, 3, 4]
    assert all(int(d) == d for d in table["plus"].str[1])  # depth, an int option, played whole


STRONG, WEAK = "peaked:n=6:x=0.7", "peaked:n=12:x=-1.5"  # greedy at each move with q 1 and 0.1


class CtrlC:
    """A verify's display that presses Ctrl-C at the `at`-th game."""

    def __init__(self, at):
        self.at, self.games = at, 0

    def begin(self, tournament, test, state, workers):
        pass

    def game(self, spec, results, faults):
        self.games += 1
        if self.games == self.at:
            raise KeyboardInterrupt

    def note(self, text):
        pass

    def update(self, state):
        pass

    def end(self):
        pass


@pytest.mark.slow
@pytest.mark.process
def test_a_sequential_verify_stops_at_a_bound_and_resumes_after_ctrl_c_to_the_same_verdict(
        tmp_path):
    registry = BotRegistry([BOTS], env=False, cwd=False, entry_points=False)
    table, _ = tuning.prepare_tune(registry, "peaked", ["x=-1.5,-2,3,1", "n=12,0,12,2"],
                                   iterations=4, seed=11)
    test = tuning.verify_test(elo0=0, elo1=50)

    def verify(tuned, start, folder, cap=400, **kw):
        return tuning.verify_sprt(registry, table, tuned, start, cap, tmp_path / folder, test,
                                  workers=1, **kw)

    better = verify(STRONG, WEAK, "better")
    assert better.verdict == "H1" and not better.interrupted
    assert better.line().startswith("H1 accepted: the tune is stronger than the start values")
    assert better.line().endswith(f"; tuned {STRONG} against start {WEAK}")
    games = better.outcome.state.games
    assert 30 <= games < 400  # counted: games played past the decision are stored, not counted
    worse = verify(WEAK, STRONG, "worse")
    assert worse.verdict == "H0" and worse.line().startswith(
        "H0 accepted: the tune is not shown to be at least 50 Elo stronger than the start values")
    # Ctrl-C in the first chunk; the same call goes on to the same decision at the same block
    cut = verify(STRONG, WEAK, "cut", display=CtrlC(at=12))
    assert cut.interrupted and cut.verdict is None
    assert 11 <= stored(tmp_path / "cut" / "verify") < games
    again = verify(STRONG, WEAK, "cut")
    assert again.line() == better.line() and not again.interrupted
    # a cap below min_blocks: undecided; a larger cap goes on (as sprt --max-games does)
    short = verify(STRONG, WEAK, "short", cap=20)
    assert short.verdict == "undecided" and short.line().startswith(
        "undecided after 20 games (10 blocks)")
    assert verify(STRONG, WEAK, "short").line() == better.line()
