"""--sandbox: a bot written to cheat learns nothing it should not, its limits give verdicts, and
nothing it starts outlives the run."""

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from kdtp_support import ALLOW_ARGS, SANDBOX_ALLOW, left_behind, new_marker, write_fake_bots
from numba.misc.appdirs import AppDirs

import kdtourney
from kdtourney.engine import Rules
from kdtourney.external import (
    BotExited,
    BotProcess,
    Limits,
    ProcessPool,
    ProcessSettings,
    Sandbox,
    cgroups,
    load_toml,
)
from kdtourney.external.sandbox import SANDBOX_UIDS
from kdtourney.registry import BotRegistry
from kdtourney.store import load_config, load_faults, load_games
from kdtourney.tournament.schedule import GameSpec, bot_seed, deal_seed, keyed

KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")
CHEATING_BOT = Path(__file__).resolve().parents[1] / "data" / "cheating_bot.py"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None,
                                 reason="bubblewrap (bwrap) is not installed: apt-get install "
                                        "bubblewrap")


AS_ROOT = os.geteuid() == 0


def bot_user(report: dict) -> bool:
    """Whether a bot was who it should be: as root a user of the sandboxes' own (no account's),
    uid and gid alike; else the user running kdtourney."""
    if not AS_ROOT:
        return report["uid"] == report["euid"] == os.getuid()
    return report["uid"] == report["euid"] == report["gid"] and report["uid"] in SANDBOX_UIDS


def cheating_bots(folder: Path, marker: str, targets, modes=("cheat", "hog", "flood"),
                  files=()) -> Path:
    """A folder with the cheating bot and one TOML file per mode (bot name = mode); the first
    mode's TOML lists `files` as files it reads. The targets are written path:PATH (not files
    its command names, which the harness would show it, or refuse)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(CHEATING_BOT, folder / "cheating_bot.py")
    for mode in modes:
        command = [sys.executable, "cheating_bot.py", mode, marker,
                   *(t if str(t).startswith("tcp:") else f"path:{t}" for t in targets)]
        reads = f"files = {json.dumps([str(f) for f in files])}\n" if mode == modes[0] else ""
        (folder / f"{mode}.toml").write_text(f"name = {json.dumps(mode)}\n"
                                             f"command = {json.dumps(command)}\n{reads}")
    return folder


def spy_report(log: Path) -> dict:
    """The last SPY-REPORT a spy wrote in its log."""
    lines = [line for line in log.read_text().splitlines() if "SPY-REPORT " in line]
    assert lines, log.read_text()
    return json.loads(lines[-1].split("SPY-REPORT ", 1)[1])


def spy_in_sandbox(program, log: Path, sandbox=None) -> dict:
    """Start a spy (a program of cheating_bot.py spy) in a sandbox; its report at hello."""
    process = BotProcess(program, ProcessSettings(sandbox=sandbox or Sandbox(
        allowed=SANDBOX_ALLOW)), str(log))
    try:
        assert process.start()["name"] == "spy"
    finally:
        process.stop()
    return spy_report(log)


def owner_only(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@needs_bwrap
def test_a_cheating_bot_gets_nothing_and_the_tournament_completes(tmp_path):
    marker = new_marker()
    # the cheater's submission (three bots) in a folder of its own, beside another submission;
    # the run's folder lies in a folder every sandbox shows (--sandbox-allow), which covers it
    bots, shared = tmp_path / "bots", tmp_path / "shared"
    out = shared / "runs" / "t"
    other = bots / "other"
    other.mkdir(parents=True)
    (other / "other.toml").write_text('name = "other"\ncommand = ["python3", "other.py"]\n')
    (other / "weights.txt").write_text("another bot's secret")
    (shared / "runs").mkdir(parents=True)
    (bots / "cheater").mkdir()
    mine = owner_only(bots / "cheater" / "owner-only.txt", "its own, but root's only")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    targets = [Path.home(), out, mine, out / "tournament.sqlite", other / "weights.txt",
               "/etc/shadow", f"tcp:127.0.0.1:{listener.getsockname()[1]}"]
    cheating_bots(bots / "cheater", marker, targets)
    env = {**os.environ, "KDTOURNEY_TEST_USER_SECRET": "not for bots"}
    try:
        run = subprocess.run([KDTOURNEY, "run", "--sandbox", "--bots-dir", str(bots), "--bots",
                              "cheat,hog,flood,random", "--games", "12", "--workers", "2",
                              "--bot-memory", "400", "--seed", "3", "--out", str(out),
                              "--sandbox-allow", str(shared), *ALLOW_ARGS,
                              "--no-report", "-q"], capture_output=True, text=True, timeout=600,
                             env=env)
    finally:
        listener.close()
    assert run.returncode == 0, run.stderr
    games = load_games(out)
    assert sorted(games["game"]) == list(range(12))

    log = (out / "logs" / "cheat.log").read_text()
    reports = [json.loads(line.split("CHEAT-REPORT ", 1)[1]) for line in log.splitlines()
               if "CHEAT-REPORT " in line]
    assert reports  # it played, and tried
    home = Path.home().resolve()
    runtime = [Path(p).relative_to(home).parts[0] for p in SANDBOX_ALLOW
               if Path(p).is_relative_to(home)]  # its Python, if installed in the home
    for report in reports:
        assert report["processes_seen"] <= 2  # itself and the sandbox's init: no harness
        assert report["store_found"] == []
        assert bot_user(report)
        assert report["cap_eff"] == "0000000000000000"
        seen = report["read"]
        assert seen.pop(str(home)) in (None, sorted(set(runtime)))
        assert seen.pop(str(out)) == []  # in a folder it may read, but emptied
        # its own owner-only file: root's, so not its own as its sandbox's user
        assert (seen.pop(str(mine)) is None) == AS_ROOT
        assert seen == {str(t): None for t in targets[3:] if not str(t).startswith("tcp:")}
        assert "KDTOURNEY_TEST_USER_SECRET" not in (report["init_environment"] or [])
        assert report["written"] == []
        assert report["network"] == []
        assert report["daemon_started"]  # it could start one, and the next line says it died
        assert report["allocation_status"] != 0  # its 2 GiB child was killed
        assert report["processes_started"] < 64  # its limit counts the processes it had
    assert left_behind(marker) == []
    checks = [json.loads(line.split("DAEMON-CHECK ", 1)[1]) for line in log.splitlines()
              if "DAEMON-CHECK " in line]
    assert checks and all(check["alive"] == 0 for check in checks)  # gone with its game
    # each of its processes saw a deal once: the block's other games (the same deal in other
    # seats) went to other processes
    assert "DEAL-SEEN" not in log and len(reports) + len(checks) == 6  # its 6 games, each seen

    # the seeds come from the store's secret: the public seed (3) tells a bot nothing
    assert len(load_config(out)["seed_secret"]) == 32
    for report in reports:
        assert report["seed"] != bot_seed(3, report["game"], report["seat"])
    assert not set(games["seed"]) & {deal_seed(3, b) for b in range(12)}

    faults = load_faults(out)
    assert set(faults["entrant"]) == {"hog", "flood"}  # the cheater itself played by the rules
    assert set(faults.loc[faults["entrant"] == "hog", "kind"]) == {"memory"}
    assert "memory limit of 400 MiB" in faults.loc[faults["entrant"] == "hog", "message"].iloc[0]
    assert set(faults.loc[faults["entrant"] == "flood", "kind"]) == {"output"}


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.parametrize("bots", [[], ["--bots-dir", "mine"]])  # a module to list, or none
def test_without_bwrap_sandbox_is_one_error_line(tmp_path, bots):
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "snoop.py").write_text(SNOOPING_MODULE.format(mark=str(tmp_path / "m")))
    run = subprocess.run([KDTOURNEY, "run", "--sandbox", *bots, "--bots", "greedy,random",
                          "--games", "2", "--out", str(tmp_path / "t")], capture_output=True,
                         text=True, env=dict(os.environ, PATH=str(empty)), cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "Error: --sandbox needs bubblewrap (bwrap), which is not installed: install it, e.g. "
        "`apt-get install bubblewrap`"]
    assert not (tmp_path / "t").exists() and not (tmp_path / "m").exists()


@pytest.mark.slow
@pytest.mark.process
def test_bot_memory_needs_sandbox(tmp_path):
    run = subprocess.run([KDTOURNEY, "run", "--bot-memory", "100", "--bots", "greedy,random",
                          "--games", "2", "--out", str(tmp_path / "t")], capture_output=True,
                         text=True)
    assert run.returncode == 2
    assert run.stderr.strip() == "Error: --bot-memory limits sandboxed bots: add --sandbox"


def test_keyed_seeds_are_fixed_by_the_secret_and_keep_the_blocks_deals():
    specs = [GameSpec(game=g, block=g // 2, arrangement=g % 2, n_players=2, seats=(0, 1),
                      deal_seeds=(deal_seed(1, g // 2),),
                      bot_seeds=tuple((bot_seed(1, g, s),) for s in range(2))) for g in range(4)]
    one = [keyed(s, "00" * 16) for s in specs]
    assert one == [keyed(s, "00" * 16) for s in specs]  # a resume gets the same seeds
    assert one[0].deal_seeds == one[1].deal_seeds != one[2].deal_seeds  # a block shares its deal
    assert one[0].deal_seeds != specs[0].deal_seeds
    assert {one[0].bot_seeds[0], one[0].bot_seeds[1], one[1].bot_seeds[0]} & {
        specs[0].bot_seeds[0], specs[0].bot_seeds[1]} == set()
    other = [keyed(s, "01" + "00" * 15) for s in specs]
    assert [s.deal_seeds for s in other] != [s.deal_seeds for s in one]


SNOOPING_MODULE = '''
"""A folder bot whose module-level code leaves a mark wherever it runs with write access."""
import os
from kdtourney.bots import Bot

try:
    with open({mark!r}, "a") as f:
        f.write(f"module ran in pid {{os.getpid()}}\\n")
except OSError:
    pass


class Snoop(Bot):
    """Plays the first legal action."""

    name = "snoop"

    def __init__(self, first: bool = True):
        self.first = first

    def act(self, view):
        legal = view.legal_actions()
        return legal[0] if self.first else legal[-1]
'''


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@needs_bwrap
def test_sandboxed_a_bot_module_runs_only_in_its_sandbox(tmp_path):
    mark = tmp_path / "module-ran-here"
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "snoop.py").write_text(SNOOPING_MODULE.format(mark=str(mark)))
    run = subprocess.run([KDTOURNEY, "run", "--sandbox", "--bots-dir", str(tmp_path / "bots"),
                          "--bots", "snoop:first=false,random", "--games", "4", "--workers", "2",
                          "--out", str(tmp_path / "t"), "--no-report", "-q"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert len(load_games(tmp_path / "t")) == 4 and load_faults(tmp_path / "t").empty
    assert not mark.exists()  # neither the harness nor a worker ran it; in its sandbox it could not
    plain = subprocess.run([KDTOURNEY, "bots", "--bots-dir", str(tmp_path / "bots")],
                           capture_output=True, text=True, timeout=120)
    assert "snoop" in plain.stdout and mark.exists()  # without --sandbox, modules are run


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@needs_bwrap
def test_sprt_plays_sandboxed_too(tmp_path):
    run = subprocess.run([KDTOURNEY, "sprt", "--sandbox", "--bot-memory", "600", "--bot-cpus",
                          "1.5", "--candidate", "greedy", "--baseline", "random", "--max-games",
                          "8", "--workers", "2", "--out", str(tmp_path / "s"), "--no-report",
                          "-q"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    config = load_config(tmp_path / "s")
    assert config["play"]["sandbox"] and config["play"]["bot_memory"] == 600
    assert config["play"]["bot_cpus"] == 1.5
    assert "seed_secret" in config
    assert len(load_games(tmp_path / "s")) == 8


@pytest.mark.process
@pytest.mark.sandbox
@needs_bwrap
def test_without_a_cgroup_memory_is_bounded_per_process_by_rlimit_data(tmp_path, monkeypatch):
    monkeypatch.setenv(cgroups.ROOT_VARIABLE, str(tmp_path / "no-cgroups"))
    bots = cheating_bots(tmp_path / "bots", new_marker(), [])
    program = load_toml(bots / "hog.toml").program
    settings = ProcessSettings(sandbox=Sandbox(Limits(memory_mib=300), allowed=SANDBOX_ALLOW))
    process = BotProcess(program, settings)
    try:
        assert process.start()["name"] == "hog"
        assert process.confinement.cgroup is None  # none made: prlimit instead
        process.send(b'{"type": "act", "legal": [0]}\n', None, "act")
        with pytest.raises(BotExited) as failed:
            process.receive(None, "act")
        assert "MemoryError" in failed.value.stderr  # the allocation failed inside the bot
    finally:
        process.stop()


@pytest.mark.process
@pytest.mark.sandbox
@needs_bwrap
def test_a_sandboxed_process_never_gets_a_deal_twice_and_a_trusted_one_is_kept(tmp_path):
    """The games of a block share their deal: another process of the bot plays each, and the
    processes serve the next blocks; a bot of kdtourney's (trusted) keeps one process."""
    folder = write_fake_bots(tmp_path / "bots", ["plain"])
    program = load_toml(folder / "plain.toml").program
    pids = {}
    with ProcessPool(ProcessSettings(sandbox=Sandbox(allowed=SANDBOX_ALLOW))) as pool:
        for prog in (program, dataclasses.replace(program, trusted=True)):
            pids[prog.trusted] = []
            for game, deal in enumerate([7, 7, 8, 8]):
                pool.new_game(game, (deal,))
                bot = pool.bot(prog, f"plain-{prog.trusted}", {})
                bot.setup(0, Rules(2), 1)
                pids[prog.trusted].append(bot.process.pid)
                bot.close()
    first, again, next_block, its_again = pids[False]
    assert first != again and next_block in (first, again) and its_again in (first, again)
    assert next_block != its_again
    assert len(set(pids[True])) == 1


# --- what a sandbox shows is the harness's decision -------------------------------------------

def refused_layout(tmp_path: Path) -> Path:
    """A bots folder whose TOML bots name paths beyond their folder, each its own way."""
    outside = tmp_path / "outside"
    (outside / "tool" / "bin").mkdir(parents=True)
    (outside / "secret.txt").write_text("not the bots'")
    for program in (outside / "prog", outside / "tool" / "bin" / "run"):
        program.write_text("#!/bin/sh\nexec python3 \"$@\"\n")
        program.chmod(0o755)
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "data").symlink_to(outside)
    (bots / "run").symlink_to(outside / "prog")
    (bots / "mine.txt").write_text("the system bot's data")
    for name, command, files in [
            ("outside-file", ["/bin/sh", "play.sh"], [str(outside / "secret.txt")]),
            ("linked-file", ["/bin/sh", "play.sh"], ["data/secret.txt"]),
            ("outside-program", [str(outside / "prog")], []),
            ("linked-program", ["./run"], []),
            ("allowed-program", [str(outside / "tool" / "bin" / "run")], []),
            ("sibling-file", ["/bin/sh", "play.sh"], ["system.toml"]),
            ("whole-folder", ["/bin/sh", "play.sh"], ["."]),
            ("system", ["/bin/sh", "play.sh"], ["mine.txt"])]:
        (bots / f"{name}.toml").write_text(f"name = {json.dumps(name)}\ncommand = "
                                           f"{json.dumps(command)}\nfiles = {json.dumps(files)}\n")
    return bots


def refusals(listing: str) -> dict:
    """{TOML file's stem: why} of the bots `kdtourney bots` lists as broken."""
    broken = listing.split("broken module(s):\n", 1)[-1] if "broken module(s)" in listing else ""
    return {line.split(".toml: ")[0].rsplit("/", 1)[-1]: line.split(".toml: ")[1]
            for line in broken.splitlines() if ".toml: " in line}


@pytest.mark.slow
@pytest.mark.process
def test_under_sandbox_a_bot_naming_what_lies_beyond_its_folder_is_refused(tmp_path):
    bots = refused_layout(tmp_path)
    outside = tmp_path.resolve() / "outside"
    folder = bots.resolve()
    plain = subprocess.run([KDTOURNEY, "bots", "--bots-dir", str(bots)], capture_output=True,
                           text=True, timeout=120)
    assert plain.returncode == 0 and "broken" not in plain.stdout  # without --sandbox: as before
    listed = subprocess.run([KDTOURNEY, "bots", "--sandbox", "--bots-dir", str(bots)],
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    refused = refusals(listed.stdout)
    assert refused == {
        "outside-file": f"refused by --sandbox: its files entry {outside}/secret.txt lies outside "
                        f"its folder {folder}",
        "linked-file": f"refused by --sandbox: its files entry {folder}/data/secret.txt (a link to "
                       f"{outside}/secret.txt) lies outside its folder {folder}",
        "outside-program": f"refused by --sandbox: its program {outside}/prog lies outside the "
                           "system's folders (/usr), the folders --sandbox-allow grants and its "
                           "folder",
        "linked-program": f"refused by --sandbox: its program ./run (a link to {outside}/prog) "
                          f"lies outside its folder {folder}",
        "allowed-program": f"refused by --sandbox: its program {outside}/tool/bin/run lies outside "
                           "the system's folders (/usr), the folders --sandbox-allow grants and "
                           "its folder",
        "sibling-file": f"refused by --sandbox: it names {folder}/system.toml, another bot's file "
                        "(in a bots folder several bots share, each sees only its own files: "
                        "give each bot a folder of its own)",
        "whole-folder": f"refused by --sandbox: it names {folder}, which holds another bot's "
                        "file allowed-program.toml (in a bots folder several bots share, each "
                        "sees only its own files: give each bot a folder of its own)"}
    allowed = subprocess.run([KDTOURNEY, "bots", "--sandbox", "--bots-dir", str(bots),
                              "--sandbox-allow", str(outside / "tool")],
                             capture_output=True, text=True, timeout=120)
    assert set(refusals(allowed.stdout)) == set(refused) - {"allowed-program"}
    for args, error in [(["--sandbox-allow", str(outside)], "--sandbox-allow is for sandboxed "
                                                            "bots: add --sandbox"),
                        (["--sandbox", "--sandbox-allow", str(Path.home().parent)],
                         "holds your home")]:
        bad = subprocess.run([KDTOURNEY, "bots", "--bots-dir", str(bots), *args],
                             capture_output=True, text=True, timeout=120)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and error in bad.stderr


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@needs_bwrap
def test_a_sandboxed_run_naming_a_refused_bot_is_one_error_line(tmp_path):
    bots = refused_layout(tmp_path)
    run = subprocess.run([KDTOURNEY, "run", "--sandbox", "--bots-dir", str(bots), "--bots",
                          "linked-file,random", "--games", "2", "--out", str(tmp_path / "t")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stderr.startswith(
        f"Error: {bots.resolve()}/linked-file.toml is refused by --sandbox: its files entry "), \
        run.stderr
    assert run.stderr.count("\n") == 1 and not (tmp_path / "t").exists()


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@needs_bwrap
def test_a_program_reached_through_a_link_runs_without_its_folder_shown(tmp_path):
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    if python is None:
        pytest.skip("no python3 in the system's folders")
    venv = tmp_path / "home" / "venv"  # a venv's python: a link to the system's
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python3").symlink_to(python)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "home" / "secret.txt").write_text("beside the link")
    bots = tmp_path / "bots" / "linky"
    bots.mkdir(parents=True)
    shutil.copy(CHEATING_BOT, bots / "cheating_bot.py")
    targets = [venv / "bin", venv / "pyvenv.cfg", tmp_path / "home" / "secret.txt"]
    (bots / "spy.toml").write_text('name = "spy"\ncommand = ' + json.dumps(
        [str(venv / "bin" / "python3"), "cheating_bot.py", "spy", "m",
         *(f"path:{t}" for t in targets)]) + "\n")
    program = BotRegistry([bots.parent], env=False, cwd=False, entry_points=False,
                          sandbox=Sandbox()).bots["spy"].program
    argv = Sandbox().confine(program).argv()
    assert str(venv) not in " ".join(argv[:argv.index("--")])  # nothing of the venv is bound
    assert argv[argv.index(os.path.realpath(python)) + 1] == "cheating_bot.py"  # run as resolved
    report = spy_in_sandbox(program, tmp_path / "spy.log", Sandbox())
    assert report["read"] == {str(t): None for t in targets}
    assert report["cwd"] == ["cheating_bot.py", "spy.toml"]


SIBLING_SNOOP = '''
"""A flat folder's bot module that looks for its siblings when it is imported."""
import json
import os
import sys
from pathlib import Path

from kdtourney.bots import Bot

here = Path(__file__).parent
print("SNOOP-REPORT " + json.dumps({{
    "beside": sorted(os.listdir(here)),
    "original": sorted(os.listdir({folder!r})) if os.path.isdir({folder!r}) else None,
    "victim": (here / "victim_mod.py").exists() or os.path.exists({victim!r})}}),
    file=sys.stderr, flush=True)


class Snoop(Bot):
    name = "snoop"

    def act(self, view):
        return view.legal_actions()[0]
'''


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@needs_bwrap
def test_a_sandboxed_bot_sees_no_sibling_in_a_flat_or_a_subfolder_layout(tmp_path):
    bots = tmp_path / "bots"
    alice, bob = bots / "alice", bots / "bob"
    for folder in (alice, bob):
        folder.mkdir(parents=True)
    # flat: a spy, another TOML bot with its data, a bot module; subfolders: alice and bob
    (bots / "victim.toml").write_text('name = "victim"\ncommand = ["python3", "victim.py"]\n'
                                      'files = ["victim-weights.bin"]\n')
    (bots / "victim.py").write_text("print('the victim')\n")
    (bots / "victim-weights.bin").write_bytes(b"\x01" * 16)
    (bots / "victim_mod.py").write_text(SNOOPING_MODULE.format(mark=str(tmp_path / "x"))
                                        .replace('"snoop"', '"victim-mod"'))
    (alice / "alice.toml").write_text('name = "alice"\ncommand = ["python3", "alice.py"]\n')
    (alice / "alice-secret.txt").write_text("alice's")
    flat_targets = [bots / "victim.toml", bots / "victim.py", bots / "victim-weights.bin",
                    bots / "victim_mod.py", alice / "alice-secret.txt", alice]
    cheating_bots(bots, "m", flat_targets, modes=("spy",))
    (bob / "notes.txt").write_text("bob's own")
    cheating_bots(bob, "m", [alice / "alice-secret.txt", bots / "victim.toml",
                             bots / "victim-weights.bin", bots], modes=("spy",))
    (bob / "spy.toml").write_text((bob / "spy.toml").read_text().replace('"spy"', '"bob"', 1))
    (bots / "snoop.py").write_text(SIBLING_SNOOP.format(folder=str(bots.resolve()),
                                                        victim=str(bots / "victim_mod.py")))
    # what its identity leaves out, which its sandbox does not show either
    (bots / ".plan").write_text("play the last action")
    (bots / "snoop.log").write_text("import os")
    (bots / "__pycache__").mkdir()
    (bots / "__pycache__" / "snoop.cpython-311.pyc").write_bytes(b"\0" * 16)
    registry = BotRegistry([bots], env=False, cwd=False, entry_points=False,
                           sandbox=Sandbox(allowed=tuple(SANDBOX_ALLOW)))
    assert not registry.broken
    flat = spy_in_sandbox(registry.bots["spy"].program, tmp_path / "flat.log")
    assert flat["read"] == {str(t): None for t in flat_targets}
    assert flat["cwd"] == ["cheating_bot.py", "spy.toml"]  # only its own files
    sub = spy_in_sandbox(registry.bots["bob"].program, tmp_path / "sub.log")
    assert sub["read"] == {str(alice / "alice-secret.txt"): None, str(bots / "victim.toml"): None,
                           str(bots / "victim-weights.bin"): None, str(bots): ["bob"]}
    assert sub["cwd"] == ["cheating_bot.py", "notes.txt", "spy.toml"]  # all of its folder
    # a bot module of the flat folder, served in its sandbox: its own module only
    with ProcessPool(ProcessSettings(sandbox=Sandbox(allowed=SANDBOX_ALLOW),
                                     log_dir=str(tmp_path / "logs"))) as pool:
        bot = registry.factory("snoop", pool, isolate=True)()
        bot.setup(0, Rules(2), 1)
        bot.close()
    [line] = [line for line in (tmp_path / "logs" / "snoop.log").read_text().splitlines()
              if "SNOOP-REPORT " in line]
    assert json.loads(line.split("SNOOP-REPORT ", 1)[1]) == {"beside": ["snoop.py"],
                                                             "original": None, "victim": False}


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@needs_bwrap
def test_as_root_a_sandboxed_bot_is_a_user_of_its_own_and_reads_no_owner_only_file(tmp_path):
    """A 0700 home holding the bots and owner-only files, a run under umask 077: the bots still
    read what they need (their folder, a served bot's sources and kernels) and nothing else."""
    home, shared = tmp_path / "home", tmp_path / "shared"
    spy, pybot = home / "bots" / "spy", home / "bots" / "pybot"
    for folder in (spy, pybot, shared):
        folder.mkdir(parents=True)
    home.chmod(0o700)
    secret = owner_only(home / "secret.txt", "the user's")
    (shared / "public.txt").write_text("for every bot")
    locked = owner_only(shared / "owner-only.txt", "root's")
    own_locked = owner_only(spy / "owner-only.txt", "root's, in the bot's folder")
    (pybot / "pybot.py").write_text(
        "import json\nfrom pathlib import Path\n\nimport plib\nfrom kdtourney.bots import Bot\n\n"
        "PICK = json.loads((Path(__file__).parent / 'pick.json').read_text())['pick']\n\n\n"
        "class PyBot(Bot):\n    name = 'pybot'\n\n    def act(self, view):\n"
        "        return plib.choose(view.legal_actions(), PICK)\n")
    (pybot / "pick.json").write_text('{"pick": -1}')
    (pybot / "plib").mkdir()
    (pybot / "plib" / "__init__.py").write_text("def choose(legal, pick):\n"
                                                "    return legal[pick]\n")
    targets = [secret, "/etc/shadow", "/root", shared / "public.txt", locked, own_locked]
    cheating_bots(spy, "m", targets, modes=("spy",))
    out = tmp_path / "t"
    # the kernels cached where they are now, not in `home`
    env = {**os.environ, "HOME": str(home), "NUMBA_CACHE_DIR": os.environ.get(
        "NUMBA_CACHE_DIR", AppDirs(appname="numba", appauthor=False).user_cache_dir)}
    args = ["run", "--sandbox", "--bots-dir", str(home / "bots"), "--bots", "spy,pybot",
            "--games", "2", "--workers", "1", "--seed", "1", "--sandbox-allow", str(shared),
            *ALLOW_ARGS, "--out", str(out), "--no-report", "-q"]
    run = subprocess.run(["/bin/sh", "-c", 'umask 077 && exec "$@"', "sh", KDTOURNEY, *args],
                         capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr
    assert len(load_games(out)) == 2 and load_faults(out).empty  # pybot played, as its own user too
    report = spy_report(out / "logs" / "spy.log")
    assert bot_user(report)
    assert report["cap_eff"] == "0000000000000000"
    if AS_ROOT:
        assert report["groups"] == []  # no supplementary group
        assert report["cap_bnd"] == "0000000000000000"  # nothing to gain back either
    runtime = sorted({Path(p).relative_to("/root").parts[0] for p in SANDBOX_ALLOW
                      if Path(p).is_relative_to("/root")})  # its Python, if allowed from there
    assert report["read"] == {str(secret): None, "/etc/shadow": None, "/root": runtime or None,
                              str(shared / "public.txt"): "for every bot",
                              str(locked): None if AS_ROOT else "root's",
                              str(own_locked): None if AS_ROOT else "root's, in the bot's folder"}
    assert load_config(out)["play"]["sandbox_allow"] == sorted({str(shared.resolve()),
                                                               *SANDBOX_ALLOW})
    again = subprocess.run([KDTOURNEY, "run", "--resume", str(out), "--sandbox-allow",
                            str(home / "bots")], capture_output=True, text=True, timeout=120,
                           env=env)
    assert again.returncode == 2 and again.stderr.startswith(
        f"Error: {out} was played with --sandbox-allow ") and again.stderr.count("\n") == 1


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@needs_bwrap
def test_a_sandboxed_bot_imports_the_kdtourney_the_harness_runs(tmp_path):
    """Run from another copy of kdtourney than the one installed (a source tree on PYTHONPATH),
    a sandboxed bot imports that copy, whose code its identity hashed (before: the installed
    one, or none at all)."""
    copy = tmp_path.resolve() / "copy"
    shutil.copytree(Path(kdtourney.__file__).parent, copy / "kdtourney",
                    ignore=shutil.ignore_patterns("__pycache__"))
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "whereami.py").write_text(
        "import kdtourney\n\nraise ImportError('KDTOURNEY-AT ' + kdtourney.__file__)\n")
    run = subprocess.run([sys.executable, "-m", "kdtourney", "run", "--sandbox", "--bots-dir",
                          str(bots), "--bots", "whereami,random", "--games", "2", "--out",
                          str(tmp_path / "t")], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(copy)))
    assert run.returncode == 2
    assert f"ImportError: KDTOURNEY-AT {copy / 'kdtourney' / '__init__.py'}" in run.stderr, \
        run.stderr
