"""Helpers for the tests of bots in their own process: a fake KDTP bot that misbehaves on demand,
TOML files for it, and a scan of /proc for processes left behind."""

import os
import sys
import textwrap
import time
import uuid
from pathlib import Path

# A KDTP bot in plain Python (no kdtourney import: it starts in a few tens of milliseconds). It
# answers the first legal action, except at act number AT (0-based) of the games listed in GAMES
# (all when empty), where it does what BEHAVIOUR says. MARKER is in its command line and in its
# children's.
FAKE_BOT = textwrap.dedent(r'''
    import json, os, signal, subprocess, sys, time

    behaviour, at, marker, late, games = sys.argv[1:6]
    at, late, games = int(at), float(late), [int(g) for g in games.split(",") if g]
    on_a_worker = os.environ.get("KDTOURNEY_TEST_DASK_WORKER")
    refused = behaviour == "crash-then-refuse" and os.path.exists("refuse")
    absent = behaviour == "absent-on-workers" and on_a_worker
    if behaviour == "exit-at-start" or refused or absent:
        print("cannot start: no configuration", file=sys.stderr, flush=True)
        sys.exit(3)
    if behaviour == "no-hello":
        time.sleep(3600)
    sleeper = [sys.executable, "-c", "import time; time.sleep(3600)", marker]
    if behaviour == "slow-with-child":
        subprocess.Popen(sleeper)

    def send(message):
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    acts = 0
    for line in sys.stdin:
        message = json.loads(line)
        kind = message["type"]
        if kind == "hello":
            other = behaviour == "other-build-on-workers" and on_a_worker
            send({"type": "hello", "name": "fake-" + behaviour,
                  "version": "0.2" if other else "0.1"})
        elif kind == "game":
            acts, game = 0, message["game"]
            send({"type": "log", "text": f"game {game} seat {message['seat']}"})
        elif kind == "act":
            legal = message["legal"]
            if behaviour == "flood":
                sys.stderr.write(("x" * 1023 + "\n") * 256)  # 256 KiB a decision
            if behaviour == "slow-with-child":
                time.sleep(0.05)
            if acts == at and (not games or game in games):
                print(f"misbehaving: {behaviour}", file=sys.stderr, flush=True)
                if behaviour in ("exit-mid-game", "crash-then-refuse"):
                    if behaviour == "crash-then-refuse":
                        open("refuse", "w").close()
                    print("Traceback: something broke", file=sys.stderr, flush=True)
                    sys.exit(1)
                if behaviour == "non-json":
                    sys.stdout.write("I place my domino at the top left\n")
                elif behaviour == "deep-json":  # past what a recursive parser can nest
                    sys.stdout.write('{"type": "action", "action": ' + "[" * 100000 + "\n")
                elif behaviour == "not-action":
                    send({"type": "move", "action": legal[0]})
                elif behaviour == "illegal":
                    send({"type": "action", "action": {"claim": 99}})
                elif behaviour == "illegal-compact":  # an action, written as kdtourney would
                    sys.stdout.write('{"type":"action","action":{"discard":true}}\n')
                elif behaviour == "twice":  # in one write: all there before the next act
                    sys.stdout.write("".join(json.dumps(m) + "\n" for m in (
                        {"type": "action", "action": legal[0]},
                        {"type": "log", "text": "and once more"},
                        {"type": "action", "action": legal[-1]})))
                elif behaviour == "late":
                    time.sleep(late)
                    send({"type": "action", "action": legal[0]})
                elif behaviour == "never":
                    time.sleep(3600)
                elif behaviour == "huge-line":
                    sys.stdout.write("[" + "1," * (2 << 20) + "1]\n")
                elif behaviour == "close-stdout":
                    os.close(1)
                    time.sleep(3600)
                elif behaviour == "child-holds-pipe":
                    subprocess.Popen(sleeper)
                    sys.exit(0)
                elif behaviour == "kill-worker" and not os.path.exists("killed"):  # once
                    open("killed", "w").close()
                    subprocess.Popen(sleeper)
                    os.kill(os.getppid(), signal.SIGKILL)
                    time.sleep(3600)
                else:
                    send({"type": "action", "action": legal[0]})
                sys.stdout.flush()
            else:
                send({"type": "action", "action": legal[0]})
            acts += 1
        elif kind == "quit":
            break
''')


# This Python's installation, for a sandboxed TOML bot started with sys.executable: a sandbox
# shows the system's folders, not a Python installed elsewhere (pyenv, /opt), unless the
# organiser allows it (--sandbox-allow).
PYTHON_HOME = os.path.realpath(sys.base_prefix)
SANDBOX_ALLOW = () if PYTHON_HOME == "/usr" or PYTHON_HOME.startswith("/usr/") else (PYTHON_HOME,)
ALLOW_ARGS = [arg for path in SANDBOX_ALLOW for arg in ("--sandbox-allow", path)]


def new_marker() -> str:
    return f"kdtp-test-{uuid.uuid4().hex[:12]}"


def write_fake_bots(folder: Path, behaviours, at: int = 2, marker: str = "kdtp-test",
                    late: float = 0.0, games=()) -> Path:
    """A bots folder with _fake_bot.py and one TOML file per behaviour, bot name = behaviour."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "_fake_bot.py").write_text(FAKE_BOT)
    for behaviour in behaviours:
        command = [sys.executable, "_fake_bot.py", behaviour, str(at), marker, str(late),
                   ",".join(map(str, games))]
        (folder / f"{behaviour}.toml").write_text(
            f'name = "{behaviour}"\ncommand = [{", ".join(_quoted(a) for a in command)}]\n')
    return folder


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cpu_ns(pids) -> int:
    """CPU time (ns) used so far by the threads of `pids`, as the scheduler counts it."""
    total = 0
    for pid in pids:
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                    total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def processes_with(marker: str) -> list[int]:
    """The pids of live processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def our_zombies() -> list[int]:
    """Children of this process that have exited and were never reaped."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == os.getpid():
            found.append(int(entry.name))
    return found


def left_behind(marker: str, wait: float = 5.0) -> list[int]:
    """Processes with `marker` still running after `wait` seconds (killing takes a moment)."""
    return _after(lambda: processes_with(marker), wait)


def still_running(pids, wait: float = 5.0) -> list[int]:
    """Those of `pids` still running (not zombies) after `wait` seconds: a worker told of its
    parent's death, or the resource tracker reading the end of its pipe, takes a moment."""
    return _after(lambda: [pid for pid in pids if _state(pid) not in (None, "Z")], wait)


def _after(find, wait):
    """find() once it is empty, or when `wait` seconds have passed."""
    deadline = time.monotonic() + wait
    while True:
        found = find()
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _state(pid):
    """A process's state letter (Z: exited, not reaped), None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
