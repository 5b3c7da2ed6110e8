"""What the harness reads of a submission, and what a sandbox shows of it: a bot cannot run code
its identity does not hash (a hidden file, a log, a `.pyc` swapped in), and a FIFO, a device or a
huge file in a bots folder is one line of error, never a hang."""

import json
import os
import py_compile
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kdtp_support import ALLOW_ARGS, SANDBOX_ALLOW

from kdtourney.external import BotExited, BotProcess, ProcessSettings, Sandbox
from kdtourney.external import identity as identity_module
from kdtourney.registry import BotRegistry

pytestmark = [pytest.mark.slow, pytest.mark.process]

KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None,
                                 reason="bubblewrap (bwrap) is not installed: apt-get install "
                                        "bubblewrap")

SWAPPER = '''
import json, os, sys

import strategy


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        report = {"plan": read(".plan"), "log": read("notes.log"), "move": strategy.MOVE,
                  "listing": sorted(os.listdir("."))}
        print("SWAP-REPORT " + json.dumps(report), file=sys.stderr, flush=True)
        print(json.dumps({"type": "hello", "name": "swapper"}), flush=True)
    elif message["type"] == "act":
        print(json.dumps({"type": "action", "action": message["legal"][strategy.MOVE]}), flush=True)
    elif message["type"] == "quit":
        break
'''
HONEST = "MOVE = 0   # the first legal action\n"
EVIL = "MOVE = -1  # the last legal action!\n"


def swap_report(registry, log: Path) -> dict:
    process = BotProcess(registry.program("swapper"),
                         ProcessSettings(sandbox=Sandbox(allowed=SANDBOX_ALLOW)), str(log))
    try:
        assert process.start()["name"] == "swapper"
    finally:
        process.stop()
    [line] = [line for line in log.read_text().splitlines() if "SWAP-REPORT " in line]
    return json.loads(line.split("SWAP-REPORT ", 1)[1])


def sandboxed_registry(bots: Path) -> BotRegistry:
    return BotRegistry([bots], env=False, cwd=False, entry_points=False,
                       sandbox=Sandbox(allowed=SANDBOX_ALLOW))


@pytest.mark.sandbox
@needs_bwrap
def test_a_sandboxed_bot_runs_only_the_files_its_identity_hashes(tmp_path):
    """A hidden file, a log and a `.pyc` are left out of a bot's identity (a ladder would not
    make it a new version): its sandbox does not show them, so swapping them changes nothing of
    its play."""
    folder = tmp_path / "bots" / "swapper"
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(f'name = "swapper"\ncommand = '
                                     f'{json.dumps([sys.executable, "bot.py"])}\n')
    (folder / "bot.py").write_text(SWAPPER)
    strategy = folder / "strategy.py"
    strategy.write_text(HONEST)
    before = sandboxed_registry(tmp_path / "bots")
    digest = before.identity("swapper")["digest"]
    honest = swap_report(before, tmp_path / "honest.log")
    assert honest == {"plan": None, "log": None, "move": 0,
                      "listing": ["bot.py", "bot.toml", "strategy.py"]}

    # the swap: a plan and a log beside it, and strategy's bytecode compiled from other code,
    # stamped with the source's size and time (Python then runs the bytecode)
    (folder / ".plan").write_text("play the last action")
    (folder / "notes.log").write_text("import os; os.system('...')")
    stamp = strategy.stat()
    assert len(EVIL) == len(HONEST)
    strategy.write_text(EVIL)
    py_compile.compile(str(strategy), doraise=True)
    strategy.write_text(HONEST)
    os.utime(strategy, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert list((folder / "__pycache__").iterdir())

    after = sandboxed_registry(tmp_path / "bots")
    assert after.identity("swapper")["digest"] == digest  # the same version, for a ladder
    assert swap_report(after, tmp_path / "swapped.log") == honest  # and the same play


def submissions(bots: Path) -> Path:
    """A bots folder whose submissions hold what the harness must not read: a FIFO in a module's
    folder and at the top, a link to /dev/zero and a sparse 6 GiB file in TOML bots' folders."""
    for name in ("fifo", "zero", "sparse", "plain"):
        (bots / name).mkdir(parents=True)
    (bots / "fifo" / "fifo.py").write_text("from kdtourney.bots import Bot\n\n\nclass F(Bot):\n"
                                           "    name = 'fifo'\n\n    def act(self, view):\n"
                                           "        return view.legal_actions()[0]\n")
    os.mkfifo(bots / "fifo" / "book.bin")
    os.mkfifo(bots / "pipe.py")
    script = "import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n" \
             "    if m['type'] == 'hello': print(json.dumps({'type': 'hello', 'name': 'x'}), " \
             "flush=True)\n"
    for name in ("zero", "sparse", "plain"):
        (bots / name / "bot.py").write_text(script)
        (bots / name / "bot.toml").write_text(f"name = {json.dumps(name)}\ncommand = "
                                              f"{json.dumps([sys.executable, 'bot.py'])}\n")
    (bots / "zero" / "book.bin").symlink_to("/dev/zero")
    with open(bots / "sparse" / "book.bin", "wb") as f:
        f.truncate(6 << 30)
    return bots


def kdtourney(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([KDTOURNEY, *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


def test_a_fifo_or_a_device_in_a_bots_folder_is_one_error_line_not_a_hang(tmp_path):
    bots = submissions(tmp_path / "bots")
    started = time.monotonic()
    listed = kdtourney("bots", "--bots-dir", str(bots), cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    broken = listed.stdout.split("broken module(s):\n", 1)[1].splitlines()
    assert sorted(broken) == [  # (origins shown relative to the working directory)
        f"  bots/fifo/fifo.py: its folder: {bots / 'fifo' / 'book.bin'} is a FIFO, not a "
        "regular file: kdtourney does not read it",
        f"  bots/pipe.py: {bots / 'pipe.py'} is a FIFO, not a regular file: kdtourney does "
        "not read it"]
    plain = kdtourney("run", "--bots-dir", str(bots), "--bots", "sparse,random", "--games", "1",
                      "--out", str(tmp_path / "t"), "--no-report", "-q", cwd=tmp_path)
    assert plain.returncode == 2 and plain.stderr.splitlines() == [
        f"Error: {bots / 'sparse' / 'bot.toml'}: its files cannot be read: "
        f"{bots / 'sparse' / 'book.bin'} holds 6.0 GiB, over the 1.0 GiB kdtourney reads of it"]
    assert time.monotonic() - started < 60  # each command takes seconds, not the file's size


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.parametrize("bot,why", [
    ("zero", "{bots}/zero/book.bin is a link leading out of the bot's folder (to /dev/zero): "
             "its sandbox shows it its own files only"),
    ("sparse", "{bots}/sparse/book.bin holds 6.0 GiB, over the 1.0 GiB kdtourney reads of it")])
def test_sandboxed_a_link_out_or_a_huge_file_is_one_error_line(tmp_path, bot, why):
    bots = submissions(tmp_path / "bots")
    run = kdtourney("run", "--sandbox", *ALLOW_ARGS, "--bots-dir", str(bots), "--bots",
                    f"{bot},plain", "--games", "1", "--out", str(tmp_path / "t"), "--no-report",
                    "-q", cwd=tmp_path)
    assert run.returncode == 2
    [line] = run.stderr.splitlines()
    assert line.startswith(f"Error: {bots / bot / 'bot.toml'}: ") \
        and line.endswith(why.format(bots=bots)), line


ESCAPES = "\x1b[2J\x1b]0;owned\x07\x1b[31m"  # clear the screen, retitle the terminal, red
ESCAPING_MODULE = f"raise ImportError({ESCAPES!r} + 'nothing to see')\n"
CRASHING_SCRIPT = ("import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n"
                   "    if m['type'] == 'hello': print(json.dumps({'type': 'hello', 'name': 'c'}), "
                   "flush=True)\n"
                   f"    if m['type'] == 'act': print({ESCAPES!r} + 'crashed', file=sys.stderr, "
                   "flush=True); sys.exit(1)\n")


def test_what_bots_write_reaches_the_terminal_and_the_page_escaped(tmp_path):
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "escaping.py").write_text(ESCAPING_MODULE)
    (bots / "crash.py").write_text(CRASHING_SCRIPT)
    (bots / "crash.toml").write_text(f"name = \"crash\"\ncommand = "
                                     f"{json.dumps([sys.executable, 'crash.py'])}\n")
    escaped = "\\x1b[2J\\x1b]0;owned\\x07\\x1b[31m"
    listed = kdtourney("bots", "--bots-dir", str(bots), cwd=tmp_path)
    named = kdtourney("run", "--bots-dir", str(bots), "--bots", "escaping,random", "--games", "1",
                      "--out", str(tmp_path / "t"), cwd=tmp_path)
    assert f"bots/escaping.py: ImportError: {escaped}nothing to see" in listed.stdout
    assert named.returncode == 2 and f"ImportError: {escaped}nothing to see" in named.stderr
    played = kdtourney("run", "--bots-dir", str(bots), "--bots", "crash,random", "--games", "2",
                       "--workers", "1", "--out", str(tmp_path / "c"), cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    page = (tmp_path / "c" / "index.html").read_text()
    assert f"{escaped}crashed" in page
    for text in (listed.stdout, named.stderr, played.stdout, played.stderr, page):
        assert "\x1b" not in text and "\x07" not in text


@pytest.mark.sandbox
@needs_bwrap
def test_a_worker_s_sandbox_shows_the_files_the_run_recorded_not_later_ones(tmp_path):
    """The run records a bot's identity, then its author edits it: a worker's new process of the
    recorded entrant still shows the files recorded (the copy made when they were hashed), and
    where that copy is missing and the files differ, it does not start."""
    folder = tmp_path / "bots" / "swapper"
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(f'name = "swapper"\ncommand = '
                                     f'{json.dumps([sys.executable, "bot.py"])}\n')
    (folder / "bot.py").write_text(SWAPPER)
    (folder / "strategy.py").write_text(HONEST)
    recorded = sandboxed_registry(tmp_path / "bots").identity("swapper")
    (folder / "strategy.py").write_text(EVIL)  # a new version, for the next look
    worker = sandboxed_registry(tmp_path / "bots")
    worker.pin("swapper", recorded)
    assert swap_report(worker, tmp_path / "pinned.log")["move"] == 0
    copy = Path(identity_module.snapshot(worker.program("swapper")))
    shutil.rmtree(copy)  # as on another machine
    process = BotProcess(worker.program("swapper"),
                         ProcessSettings(sandbox=Sandbox(allowed=SANDBOX_ALLOW)))
    with pytest.raises(BotExited, match="its files changed since the run recorded them"):
        process.start()
    process.stop()
